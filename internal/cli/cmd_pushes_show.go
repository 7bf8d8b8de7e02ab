package cli

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"text/tabwriter"
	"time"

	"github.com/spf13/cobra"

	"paydesk/internal/textsafe"
	"paydesk/store"
)

// withReceipts adds how often the push was received, and the receipts kept.
func (o *pushJSON) withReceipts(r store.PushReceipts) {
	o.ReceivedCount, o.ReceiptsOmitted = r.Count, r.Omitted
	for _, x := range r.Receipts {
		o.Receipts = append(o.Receipts, receiptJSON{At: x.At.UTC().Format(time.RFC3339Nano),
			RemoteAddr: textsafe.Clean(x.RemoteAddr), Signature: textsafe.Clean(x.Signature)})
		o.lastReceipt = x.At
	}
}

func pushShowCmd(sio IO) *cobra.Command {
	c := &cmdContext{name: "pushes show", sio: sio}
	cmd := c.command("show ID", "Show one stored push and every time it was received", cobra.ExactArgs(1), runPushShow)
	cmd.Example = "paydesk pushes show 12\npaydesk pushes show 12 --json"
	c.lookFlags()
	return cmd
}

func runPushShow(ctx context.Context, c *cmdContext) int {
	id, err := strconv.ParseUint(c.args[0], 10, 64)
	if err != nil || id == 0 {
		return c.usage("%q: a push ID is a positive number (paydesk pushes lists them)", textsafe.Clean(c.args[0]))
	}
	db, code := c.openCache()
	if code >= 0 {
		return code
	}
	if db == nil {
		return c.fail(fmt.Errorf("push %d: %w", id, store.ErrNotFound))
	}
	defer c.closeCache(db)
	p, err := db.Push(ctx, id)
	if err != nil {
		if errors.Is(err, store.ErrNotFound) {
			return c.fail(fmt.Errorf("push %d: not in the push log (paydesk pushes lists them)", id))
		}
		return c.fail(err)
	}
	rc, err := db.PushReceiptsOf(ctx, []*store.PushRecord{p})
	if err != nil {
		return c.fail(err)
	}
	o := pushOut(p)
	o.withReceipts(rc[p.ID])
	receipts := rc[p.ID].Receipts
	if c.flags.json {
		_ = writeJSON(c.sio.Stdout, o)
		return exitOK
	}
	word, detail := p.Outcome()
	if detail != "" {
		word += " (" + textsafe.Clean(detail) + ")"
	}
	w := tabwriter.NewWriter(c.sio.Stdout, 0, 0, 2, ' ', 0)
	fmt.Fprintf(w, "Push\t%d\n", o.ID)
	fmt.Fprintf(w, "Result\t%s\n", word)
	fmt.Fprintf(w, "Envelope\t%s %s\n", dash(o.Envelope), dash(o.Kind))
	fmt.Fprintf(w, "Key\t%s\n", dash(o.Key))
	fmt.Fprintf(w, "Invoice\t%s\n", dash(o.Invoice))
	fmt.Fprintf(w, "Service\t%s\n", dash(o.Service))
	fmt.Fprintf(w, "Status\t%s\n", dash(o.StatusText))
	if o.Amount != "" {
		fmt.Fprintf(w, "Amount\t%s %s\n", o.Amount, o.Currency)
	}
	fmt.Fprintf(w, "Received\t%s\n", count(int(o.ReceivedCount), "time", "times"))
	_ = w.Flush()
	w = tabwriter.NewWriter(c.sio.Stdout, 0, 0, 2, ' ', 0)
	for i, r := range o.Receipts {
		what := "repeat"
		if i == 0 {
			what = "first"
		}
		if i == 1 && o.ReceiptsOmitted > 0 {
			fmt.Fprintf(w, "  …\t%s\n", count(int(o.ReceiptsOmitted), "earlier repeat counted only", "earlier repeats counted only"))
		}
		// To the second, as the list and its other times: the JSON keeps
		// the nanoseconds that tell repeats within a second apart.
		fmt.Fprintf(w, "  %s\t%s\tfrom %s\tsignature %s\n", what, receipts[i].At.UTC().Format(time.RFC3339), dash(r.RemoteAddr), r.Signature)
	}
	_ = w.Flush()
	return exitOK
}
