package cli

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"text/tabwriter"
	"time"

	"github.com/spf13/cobra"

	"paydesk/internal/intake"
	"paydesk/internal/private"
	"paydesk/internal/textsafe"
	"paydesk/store"
)

func importCmd(sio IO) *cobra.Command {
	c := &cmdContext{name: "import", sio: sio}
	cmd := c.command("import FILE...", "Store webshop orders: Reserve envelopes (JSON, NDJSON) or CSV order lines",
		cobra.MinimumNArgs(1), runImport)
	cmd.Long = "Stores a webshop's orders — the lines and customer the Reserve push does not carry — from files of\n" +
		"Reserve envelopes as the shop sent them to the gateway (one JSON object, an array, or NDJSON) or a CSV\n" +
		"of order lines with a header row (an order is its consecutive rows). Files are read as a stream; each\n" +
		"order is checked by the intake's rules and stored whole or not at all; the report names each record's\n" +
		"line or rows and what became of it, then adds them up. - reads standard input. Exit 1 when any record\n" +
		"was refused or conflicted, or a file could not be read to its end."
	cmd.Example = "paydesk import testdata/webshop/orders.csv\npaydesk import orders.ndjson --json\nshop-export | paydesk import -"
	c.lookFlags()
	return cmd
}

// runImport stores a webshop's orders. It opens only the cache: no gateway,
// no sandbox, no listener.
func runImport(ctx context.Context, c *cmdContext) int {
	set, err := c.settings()
	if err != nil {
		c.fail(err)
		return exitUsage
	}
	if set.ReadOnly {
		return c.fail(fmt.Errorf("read-only = true in %s: nothing imported", set.ConfigFile))
	}
	c.set = set
	var db *store.DB
	if h := c.sio.host; h != nil {
		if db, err = h.cacheFor(set); err != nil {
			return c.fail(err)
		}
	} else {
		var code int
		db, code = c.openStore(ctx, set, store.Options{LockTimeout: 500 * time.Millisecond}, func(err error) error {
			return fmt.Errorf("%w\n%s; or post the orders to the console's intake, POST <listener>/orders", err, lockedHint)
		})
		if db == nil {
			return code
		}
	}
	defer c.closeCache(db)
	return importFiles(ctx, c, db, c.args)
}

type importJSON struct {
	File        string `json:"file"`
	Where       string `json:"where,omitempty"`
	Invoice     string `json:"invoice,omitempty"`
	Result      string `json:"result"`
	Reservation string `json:"reservation,omitempty"`
	Reason      string `json:"reason,omitempty"`
}

// maxReportField bounds what a report line echoes of a file: a refused
// record's invoice or reason is cut with a marker, so a hostile file cannot
// make a line of megabytes.
const maxReportField = 300

func bounded(s string) string { return textsafe.Bound(clean(s), maxReportField) }

// importFiles imports each file as a stream and reports one line per
// record as it is decided, then the counts: read = imported + already known
// + conflicts + refused. The exit code is 0 when every record was imported
// or already known, 1 otherwise (a refusal, a conflict, a file that could
// not be read to its end).
func importFiles(ctx context.Context, c *cmdContext, db *store.DB, files []string) int {
	w := bufio.NewWriterSize(c.sio.Stdout, 64<<10)
	defer w.Flush()
	var total intake.Counts
	failed := false
	unread := 0 // files not read to their end
	each := func(emit func(importJSON) error) error {
		for _, name := range files {
			if ctx.Err() != nil {
				return ctx.Err()
			}
			var r io.Reader
			source := "import " + filepath.Base(name)
			if name == "-" {
				r, source = c.sio.Stdin, "import stdin"
			} else {
				path, err := c.inputFile(ctx, "", name)
				var f *os.File
				if err == nil {
					f, err = openImportFile(path)
				}
				if err != nil {
					failed = true
					unread++
					if err := emit(importJSON{File: name, Result: intake.ResultRefused, Reason: err.Error()}); err != nil {
						return err
					}
					continue
				}
				defer f.Close()
				r = f
			}
			var werr error
			n, err := intake.Import(ctx, db, name, source, contextReader{ctx, r}, func(o intake.Outcome) {
				if werr == nil {
					werr = emit(importJSON{File: name, Where: o.Where, Invoice: o.Invoice, Result: o.Result, Reservation: o.Reservation, Reason: o.Reason})
				}
			})
			total.Plus(n)
			if n.Read != n.Imported+n.Known {
				failed = true
			}
			if werr != nil {
				return werr
			}
			if err != nil {
				failed = true
				unread++
				if ctx.Err() != nil {
					return ctx.Err()
				}
				if err := emit(importJSON{File: name, Result: intake.ResultRefused, Reason: "file not read to its end: " + err.Error()}); err != nil {
					return err
				}
			}
		}
		return nil
	}
	var err error
	if c.flags.json {
		err = writeJSONStream(w, func(fn func(importJSON) error) error {
			return each(func(a importJSON) error {
				a.File, a.Invoice, a.Reason = textsafe.Bound(a.File, maxReportField), textsafe.Bound(a.Invoice, maxReportField), textsafe.Bound(a.Reason, maxReportField)
				return fn(a)
			})
		})
	} else {
		// Flushed every few hundred lines: the report of a file of millions
		// of orders is never held whole.
		tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
		fmt.Fprintln(tw, "FILE\tWHERE\tINVOICE\tRESULT\tRESERVATION\tREASON")
		lines := 0
		err = each(func(a importJSON) error {
			res := a.Reservation
			if res == "" && a.Result == intake.ResultImported {
				res = "(waiting for its Reserve push)"
			}
			_, err := fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\n", bounded(a.File), dash(a.Where), dash(bounded(a.Invoice)), a.Result, dash(clean(res)), bounded(a.Reason))
			if lines++; lines%256 == 0 {
				_ = tw.Flush()
			}
			return err
		})
		_ = tw.Flush()
		fmt.Fprintf(w, "%s read: %s imported, %d already known, %d conflicts, %d refused",
			count(total.Read, "record", "records"), count(total.Imported, "order", "orders"), total.Known, total.Conflicts, total.Refused)
		if unread > 0 {
			fmt.Fprintf(w, "; %s not read to the end", count(unread, "file", "files"))
		}
		fmt.Fprintln(w)
	}
	if err != nil {
		_ = w.Flush()
		return c.fail(err)
	}
	if failed {
		return exitFailed
	}
	return exitOK
}

// openImportFile opens a file to import or a manifest as a stream
// (private.OpenStream): a directory or a device is refused at once, a named
// pipe no one writes to reads as empty rather than hanging.
func openImportFile(name string) (*os.File, error) {
	f, err := private.OpenStream(name)
	var pe *fs.PathError
	if err != nil && !errors.As(err, &pe) {
		return nil, fmt.Errorf("%s %w: refused", name, err)
	}
	return f, err
}

// contextReader stops a long import at Ctrl-C between two reads.
type contextReader struct {
	ctx context.Context
	r   io.Reader
}

func (c contextReader) Read(p []byte) (int, error) {
	if err := c.ctx.Err(); err != nil {
		return 0, err
	}
	return c.r.Read(p)
}
