package cli

import (
	"context"
	"fmt"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/spf13/cobra"

	"paydesk/api"
	"paydesk/internal/textsafe"
	"paydesk/store"
)

// Values of pushes --type and --kind: the envelope, and the action code
// (DataRequest) or transaction type (Transaction) inside it.
var (
	pushTypes = []string{api.EnvelopeDataRequest, api.EnvelopeTransaction}
	pushKinds = []string{api.ActionReserve, api.ActionUpdateReservation, api.ActionCancelReservation,
		api.TypeDeferredPay, api.TypeDeferredRefund, api.TypeGiftCardPay, api.TypeGiftCardRefund, "C001"}
)

// pushJSON is a stored or rejected push in the list (camelCase keys, amounts
// as strings with two decimals).
type pushJSON struct {
	ID         uint64 `json:"id"`
	Received   string `json:"received"`
	Envelope   string `json:"envelope,omitempty"`
	Kind       string `json:"kind,omitempty"`
	Key        string `json:"key,omitempty"`
	Invoice    string `json:"invoice,omitempty"`
	Service    string `json:"service,omitempty"`
	Status     int    `json:"status,omitempty"`
	SubCode    string `json:"subCode,omitempty"`
	StatusText string `json:"statusText,omitempty"`
	Amount     string `json:"amount,omitempty"`
	Currency   string `json:"currency,omitempty"`
	Signature  string `json:"signature"`
	Rejected   bool   `json:"rejected"`
	Reason     string `json:"reason,omitempty"`
	Applied    bool   `json:"applied"`
	Ignored    string `json:"ignored,omitempty"`
	// Learned is set on what paydesk sync learned from the gateway's
	// lookup rather than received as a push.
	Learned bool `json:"learned,omitempty"`
	// ReceivedCount is how often the push was received (a stored push's:
	// the first time and every repeat); Receipts the first and the newest
	// repeats, oldest first, and ReceiptsOmitted the repeats between them
	// that are counted only.
	ReceivedCount   int64         `json:"receivedCount,omitempty"`
	Receipts        []receiptJSON `json:"receipts,omitempty"`
	ReceiptsOmitted int64         `json:"receiptsOmitted,omitempty"`
	// lastReceipt is the newest receipt's time, for the table, which
	// prints it to the second as its other times (the JSON keeps the
	// receipts' nanoseconds, which tell repeats within a second apart).
	lastReceipt time.Time
}

// receiptJSON is one receipt of a push.
type receiptJSON struct {
	At         string `json:"at"`
	RemoteAddr string `json:"remoteAddr,omitempty"`
	Signature  string `json:"signature,omitempty"`
}

func pushesCmd(sio IO) *cobra.Command {
	c := &cmdContext{name: "pushes", sio: sio}
	var typ, kind, status, filter string
	var limit int
	cmd := c.command("pushes", "List the pushes the listener received (and rejected), newest first", cobra.NoArgs,
		func(ctx context.Context, c *cmdContext) int {
			return runPushes(ctx, c, typ, kind, status, filter, limit)
		})
	cmd.Example = "paydesk pushes --status rejected\npaydesk pushes --kind C700 --json"
	c.lookFlags()
	fs := cmd.Flags()
	fs.StringVar(&typ, "type", "", "only this envelope: "+strings.Join(pushTypes, ", "))
	fs.StringVar(&kind, "kind", "", "only this action or transaction type: "+strings.Join(pushKinds, ", "))
	fs.StringVar(&status, "status", "", "only these: "+strings.Join(pushStatuses, ", "))
	fs.IntVar(&limit, "limit", 50, "newest N pushes (0: all)")
	filterFlag(cmd, &filter)
	cmd.AddCommand(pushShowCmd(sio))
	_ = cmd.RegisterFlagCompletionFunc("type", cobra.FixedCompletions(pushTypes, cobra.ShellCompDirectiveNoFileComp))
	_ = cmd.RegisterFlagCompletionFunc("kind", cobra.FixedCompletions(pushKinds, cobra.ShellCompDirectiveNoFileComp))
	_ = cmd.RegisterFlagCompletionFunc("status", cobra.FixedCompletions(pushStatuses, cobra.ShellCompDirectiveNoFileComp))
	return cmd
}

func runPushes(ctx context.Context, c *cmdContext, typ, kind, status, filter string, limit int) int {
	for _, f := range []struct {
		flag  string
		v     *string
		valid []string
	}{{"--type", &typ, pushTypes}, {"--kind", &kind, pushKinds}, {"--status", &status, pushStatuses}} {
		*f.v = canonical(*f.v, f.valid)
		if err := checkChoice(f.flag, *f.v, f.valid); err != nil {
			return c.usage("%v", err)
		}
	}
	if limit < 0 {
		return c.usage("--limit %d: give 0 (all) or a positive number", limit)
	}
	db, code := c.openCache()
	if code >= 0 {
		return code
	}
	if db != nil {
		defer c.closeCache(db)
	}
	where, err := parseFilter(filter, store.PushLogFilter, c.now(db))
	if err != nil {
		return c.usage("%v", err)
	}
	// The store pages the log newest first with the filters applied in
	// it (store.DB.PushPage), so --limit reads only what it prints.
	var kept []*store.PushRecord
	total := -1 // known only when --limit left some out
	if db != nil {
		q := store.PushQuery{PageQuery: store.PageQuery{Desc: true, Where: where}, Envelope: typ, Kind: kind, Status: status}
		for {
			q.Limit = 5000
			if limit > 0 {
				q.Limit = min(limit-len(kept), q.Limit)
			}
			p, err := db.PushPage(ctx, q)
			if err != nil {
				return c.fail(err)
			}
			for _, r := range p.Rows {
				kept = append(kept, r.Push)
			}
			if limit > 0 && len(kept) >= limit {
				// Say how many the limit left out, as audit does: "50
				// pushes" read as all there are.
				q.After, q.Limit = nil, 0
				if total, err = db.PushCount(ctx, q); err != nil {
					return c.fail(err)
				}
				break
			}
			if !p.More || len(p.Rows) == 0 {
				break
			}
			q.After = p.Rows[len(p.Rows)-1].Pos
		}
	}
	var receipts map[uint64]store.PushReceipts
	if db != nil {
		if receipts, err = db.PushReceiptsOf(ctx, kept); err != nil {
			return c.fail(err)
		}
	}
	out := make([]pushJSON, 0, len(kept))
	for _, p := range kept {
		o := pushOut(p)
		if r, ok := receipts[p.ID]; ok && !p.Rejected {
			o.withReceipts(r)
		}
		out = append(out, o)
	}
	if c.flags.json {
		_ = writeJSON(c.sio.Stdout, out)
		return exitOK
	}
	tw := tabwriter.NewWriter(c.sio.Stdout, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "RECEIVED\tID\tENVELOPE\tKIND\tKEY\tINVOICE\tSTATUS\tAMOUNT\tSIGNATURE\tRESULT")
	for _, p := range out {
		id := fmt.Sprint(p.ID)
		result := "applied"
		switch {
		case p.Rejected:
			id, result = "-", "REJECTED: "+p.Reason
		case p.Ignored != "":
			result = "ignored: " + p.Ignored
		case !p.Applied:
			result = "no change"
		}
		if p.Learned {
			result += " (learned by sync, not pushed)"
		}
		if p.ReceivedCount > 1 {
			result += fmt.Sprintf(" ×%d (last %s)", p.ReceivedCount, p.lastReceipt.UTC().Format(time.RFC3339))
		}
		amount := "-"
		if p.Amount != "" {
			amount = p.Amount + " " + p.Currency
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\n", p.Received, id, dash(p.Envelope), dash(p.Kind), dash(p.Key),
			dash(p.Invoice), dash(p.StatusText), amount, p.Signature, result)
	}
	_ = tw.Flush()
	if len(out) < total {
		fmt.Fprintf(c.sio.Stdout, "showing the newest %d of %d pushes; --limit 0 for all or --limit N for more\n", len(out), total)
	} else {
		fmt.Fprintln(c.sio.Stdout, count(len(out), "push", "pushes"))
	}
	return exitOK
}

// canonical spells v as the valid value it matches regardless of case,
// so --type transaction and --kind reserve work.
func canonical(v string, valid []string) string {
	for _, ok := range valid {
		if strings.EqualFold(v, ok) {
			return ok
		}
	}
	return v
}

func pushOut(p *store.PushRecord) pushJSON {
	c := textsafe.Clean
	out := pushJSON{ID: p.ID, Received: p.ReceivedAt.UTC().Format(time.RFC3339), Envelope: p.Envelope, Kind: c(p.Kind), Key: c(p.Key),
		Invoice: c(p.Invoice), Service: c(p.Service), Status: p.Status.Code, SubCode: c(p.Status.SubCode), StatusText: p.Status.Text(),
		Currency: c(p.Currency), Signature: p.Signature, Rejected: p.Rejected, Reason: c(p.Reason), Applied: p.Applied, Ignored: c(p.Ignored),
		Learned: p.LearnedBySync()}
	if p.Rejected {
		out.ID = 0 // the rejected log numbers its own entries
	}
	if p.AmountShown() {
		out.Amount = money(p.Amount)
	}
	return out
}
