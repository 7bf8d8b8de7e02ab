package cli

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"text/tabwriter"
	"time"

	"github.com/spf13/cobra"

	"paydesk/internal/intake"
	"paydesk/store"
)

func importCmd(sio IO) *cobra.Command {
	c := &cmdContext{name: "import", sio: sio}
	cmd := c.command("import FILE...", "Store webshop orders: Reserve envelopes (JSON, NDJSON) or CSV order lines",
		cobra.MinimumNArgs(1), runImport)
	cmd.Long = "Stores a webshop's orders — the lines and customer the Reserve push does not carry — from files of\n" +
		"Reserve envelopes as the shop sent them to the gateway (one JSON object, an array, or NDJSON) or a CSV\n" +
		"of order lines with a header row. Each order is stored whole or not at all; the report names each\n" +
		"order's rows and what became of it. - reads standard input. Exit 1 when any order was refused."
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
	db, err := store.Open(set.DB, store.Options{LockTimeout: 500 * time.Millisecond})
	if err != nil {
		if errors.Is(err, store.ErrLocked) {
			return c.fail(fmt.Errorf("%w\n%s; or post the orders to the console's intake, POST <listener>/orders", err, lockedHint))
		}
		return c.fail(err)
	}
	defer db.Close()
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

// importFiles imports each file and reports one line per order; the exit
// code is 0 when every order was imported or already known, 1 otherwise.
func importFiles(ctx context.Context, c *cmdContext, db *store.DB, files []string) int {
	var all []importJSON
	counts := map[string]int{}
	failed := false
	for _, name := range files {
		if ctx.Err() != nil {
			return c.fail(ctx.Err())
		}
		var r io.Reader
		source := "import " + filepath.Base(name)
		if name == "-" {
			r, source = c.sio.Stdin, "import stdin"
		} else {
			f, err := os.Open(name)
			if err != nil {
				failed = true
				all = append(all, importJSON{File: name, Result: intake.ResultRefused, Reason: err.Error()})
				continue
			}
			defer f.Close()
			r = f
		}
		out, err := intake.Import(db, name, source, r)
		for _, o := range out {
			counts[o.Result]++
			if o.Result == intake.ResultRefused || o.Result == intake.ResultConflict {
				failed = true
			}
			all = append(all, importJSON{File: name, Where: o.Where, Invoice: clean(o.Invoice), Result: o.Result, Reservation: o.Reservation, Reason: clean(o.Reason)})
		}
		if err != nil {
			failed = true
			all = append(all, importJSON{File: name, Result: intake.ResultRefused, Reason: clean(err.Error())})
		}
	}
	if c.flags.json {
		_ = writeJSON(c.sio.Stdout, all)
	} else {
		tw := tabwriter.NewWriter(c.sio.Stdout, 0, 0, 2, ' ', 0)
		fmt.Fprintln(tw, "FILE\tWHERE\tINVOICE\tRESULT\tRESERVATION\tREASON")
		for _, a := range all {
			res := a.Reservation
			if res == "" && a.Result == intake.ResultImported {
				res = "(waiting for its Reserve push)"
			}
			fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\n", clean(a.File), dash(a.Where), dash(a.Invoice), a.Result, dash(res), a.Reason)
		}
		_ = tw.Flush()
		fmt.Fprintf(c.sio.Stdout, "%s imported, %d already known, %d conflicts, %d refused\n",
			count(counts[intake.ResultImported], "order", "orders"), counts[intake.ResultKnown], counts[intake.ResultConflict], counts[intake.ResultRefused])
	}
	if failed {
		return exitFailed
	}
	return exitOK
}
