package cli

import (
	"context"
	"fmt"
	"text/tabwriter"

	"github.com/spf13/cobra"
)

type auditJSON struct {
	ID       uint64 `json:"id"`
	Time     string `json:"time"`
	Operator string `json:"operator"`
	Action   string `json:"action"`
	Target   string `json:"target"`
	Amount   string `json:"amount,omitempty"`
	Currency string `json:"currency,omitempty"`
	Result   string `json:"result"`
	Reason   string `json:"reason,omitempty"`
	OpID     uint64 `json:"opId,omitempty"`
}

func auditCmd(sio IO) *cobra.Command {
	c := &cmdContext{name: "audit", sio: sio}
	var limit int
	cmd := c.command("audit", "The audit log: who did what, when, for how much", cobra.NoArgs,
		func(ctx context.Context, c *cmdContext) int { return runAudit(ctx, c, limit) })
	c.lookFlags()
	cmd.Flags().IntVar(&limit, "limit", 50, "newest N entries (0: all)")
	return cmd
}

func runAudit(_ context.Context, c *cmdContext, limit int) int {
	sio := c.sio
	if limit < 0 {
		return c.usage("--limit %d: give 0 (all) or a positive number", limit)
	}
	db, code := c.openCache()
	if code >= 0 {
		return code
	}
	out := []auditJSON{}
	if db != nil {
		defer db.Close()
		entries, err := db.Audit(limit)
		if err != nil {
			return c.fail(err)
		}
		for _, e := range entries {
			a := auditJSON{ID: e.ID, Time: timeText(e.Time), Operator: clean(e.Operator), Action: e.Action, Target: clean(e.Target),
				Currency: e.Currency, Result: clean(e.Result), Reason: clean(e.Reason), OpID: e.OpID}
			if !e.Amount.IsZero() {
				a.Amount = money(e.Amount)
			}
			out = append(out, a)
		}
	}
	if c.flags.json {
		_ = writeJSON(sio.Stdout, out)
		return exitOK
	}
	tw := tabwriter.NewWriter(sio.Stdout, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "TIME\tOPERATOR\tACTION\tTARGET\tAMOUNT\tRESULT\tREASON")
	for _, a := range out {
		amt := ""
		if a.Amount != "" {
			amt = a.Amount + " " + a.Currency
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\t%s\n", a.Time, a.Operator, a.Action, a.Target, amt, a.Result, a.Reason)
	}
	_ = tw.Flush()
	fmt.Fprintln(sio.Stdout, count(len(out), "entry", "entries"))
	return exitOK
}
