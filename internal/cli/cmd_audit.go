package cli

import (
	"context"
	"fmt"
	"text/tabwriter"

	"github.com/spf13/cobra"

	"paydesk/store"
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
	var verify, all bool
	var filter string
	cmd := c.command("audit", "The audit log: who did what, when, for how much", cobra.NoArgs,
		func(ctx context.Context, c *cmdContext) int {
			if all {
				limit = 0
			}
			return runAudit(ctx, c, limit, verify, filter)
		})
	cmd.Example = "paydesk audit --limit 20\npaydesk audit --verify        # check the log's hash chain and keys: nothing removed, edited or forged"
	c.lookFlags()
	cmd.Flags().IntVar(&limit, "limit", 50, "newest N entries (0: all)")
	cmd.Flags().BoolVar(&all, "all", false, "every entry (--limit 0)")
	filterFlag(cmd, &filter)
	cmd.Flags().BoolVar(&verify, "verify", false, "check the hash chain and the keys of the whole log: exit 1 when an entry was removed, edited or added behind paydesk's back")
	return cmd
}

func runAudit(ctx context.Context, c *cmdContext, limit int, verify bool, filter string) int {
	sio := c.sio
	if limit < 0 {
		return c.usage("--limit %d: give 0 (all) or a positive number", limit)
	}
	db, code := c.openCache()
	if code >= 0 {
		return code
	}
	if verify {
		return verifyAudit(ctx, c, db)
	}
	where, err := parseFilter(filter, store.AuditFilter, c.now(db))
	if err != nil {
		if db != nil {
			c.closeCache(db)
		}
		return c.usage("%v", err)
	}
	out := []auditJSON{}
	total := 0
	if db != nil {
		defer c.closeCache(db)
		// All of them, to say how many there are when only the newest
		// are listed.
		entries, err := db.Audit(ctx, 0)
		if err != nil {
			return c.fail(err)
		}
		if !where.Empty() {
			kept := entries[:0]
			for _, e := range entries {
				if store.KeepAudit(&e, &where) {
					kept = append(kept, e)
				}
			}
			entries = kept
		}
		total = len(entries)
		if limit > 0 && len(entries) > limit {
			entries = entries[:limit]
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
	if len(out) < total {
		fmt.Fprintf(sio.Stdout, "showing the newest %d of %d entries; --all or --limit N for more\n", len(out), total)
	} else {
		fmt.Fprintln(sio.Stdout, count(len(out), "entry", "entries"))
	}
	return exitOK
}

// verifyAudit checks the audit log's chain and says what it found.
func verifyAudit(ctx context.Context, c *cmdContext, db *store.DB) int {
	var chk store.AuditCheck
	if db != nil {
		defer c.closeCache(db)
		var err error
		if chk, err = db.VerifyAudit(ctx); err != nil {
			return c.fail(err)
		}
	}
	notes := auditNotes(c, chk)
	if c.flags.json {
		_ = writeJSON(c.sio.Stdout, map[string]any{"ok": chk.OK(), "entries": chk.Entries, "chainFrom": chk.ChainFrom,
			"last": chk.Last, "keyedFrom": chk.KeyedFrom, "unkeyed": chk.Unkeyed, "problems": cleanAll(chk.Problems), "notes": notes})
	} else {
		for _, p := range chk.Problems {
			fmt.Fprintln(c.sio.Stdout, "  ! "+clean(p))
		}
		for _, n := range notes {
			fmt.Fprintln(c.sio.Stdout, "  - "+n)
		}
		switch {
		case chk.Entries == 0:
			fmt.Fprintln(c.sio.Stdout, "the audit log is empty")
		case chk.OK():
			fmt.Fprintf(c.sio.Stdout, "audit log intact: %s, chained from entry %d to %d\n", count(chk.Entries, "entry", "entries"), chk.ChainFrom, chk.Last)
		default:
			fmt.Fprintf(c.sio.Stdout, "audit log NOT intact: %s\n", count(len(chk.Problems), "problem", "problems"))
		}
	}
	if !chk.OK() {
		return exitFailed
	}
	return exitOK
}

// auditNotes says, in words, how far the keys vouch for the log: entries
// written before keying are anchored, not proven; without a key nothing
// added is caught.
func auditNotes(c *cmdContext, chk store.AuditCheck) []string {
	var notes []string
	switch {
	case chk.Unkeyed > 0 && chk.KeyedFrom != 0:
		notes = append(notes, fmt.Sprintf("the %s before entry %d: unkeyed (written before keying); the keyed entries from %d on anchor them, "+
			"so an edit or a removal shows, but nothing proves who wrote them", count(chk.Unkeyed, "entry", "entries"), chk.KeyedFrom, chk.KeyedFrom))
	case chk.Unkeyed > 0:
		notes = append(notes, fmt.Sprintf("%s unkeyed (written before keying); paydesk anchors them with a keyed checkpoint when it next writes to the log",
			count(chk.Unkeyed, "entry is", "entries are")))
	}
	if chk.NoKey && chk.KeyedFrom != 0 {
		why := "no secret key is configured here"
		if c.keyErr != nil {
			why = clean(c.keyErr.Error())
		}
		notes = append(notes, "the entries' keys were not checked: "+why+"; an entry added behind paydesk's back shows only when it carries no key at all")
	}
	return notes
}

func cleanAll(ss []string) []string {
	out := make([]string, len(ss))
	for i, s := range ss {
		out[i] = clean(s)
	}
	return out
}
