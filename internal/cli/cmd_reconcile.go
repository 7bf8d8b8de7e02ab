package cli

import (
	"context"
	"fmt"
	"os"
	"sort"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/spf13/cobra"

	"paydesk/internal/access"
	"paydesk/internal/reconcile"
	"paydesk/internal/report"
	"paydesk/store"
	"paydesk/views"
)

func reconcileCmd(sio IO) *cobra.Command {
	c := &cmdContext{name: "reconcile", sio: sio}
	var settleDays int
	var asCSV bool
	cmd := c.command("reconcile FILE...", "Match the gateway's settlement statements (CSV, camt.053) to what paydesk captured and refunded", cobra.MinimumNArgs(1),
		func(ctx context.Context, c *cmdContext) int { return runReconcile(ctx, c, settleDays, asCSV) })
	cmd.Long = "reconcile reads settlement statements — the gateway's CSV or a bank's ISO 20022 camt.053 — and matches\n" +
		"each line to a capture or refund by transaction key, else by invoice and amount. Every line is matched,\n" +
		"unknown (paid out, never booked by paydesk) or differs (another amount); a capture or refund made in the\n" +
		"statements' days and due by their last (--settle-days) that no line pays is unsettled. It exits 1 when\n" +
		"anything does not match; each run is an audit entry, and what does not match shows on the Attention tab."
	cmd.Example = "paydesk reconcile statement-2026-11-25.csv\npaydesk reconcile nov/*.csv --settle-days 2 --csv > for-the-bookkeeper.csv\npaydesk reconcile camt053.xml --json"
	c.gatewayFlags()
	cmd.Flags().IntVar(&settleDays, "settle-days", 0, "days after its success a capture or refund must be paid out")
	cmd.Flags().BoolVar(&asCSV, "csv", false, "one CSV line per statement line and per unsettled transaction, for the bookkeeper")
	cmd.MarkFlagsMutuallyExclusive("json", "csv")
	return cmd
}

func runReconcile(ctx context.Context, c *cmdContext, settleDays int, asCSV bool) int {
	sio := c.sio
	if settleDays < 0 || settleDays > 366 {
		return c.usage("--settle-days %d: must be from 0 to 366", settleDays)
	}
	var lines []reconcile.Line
	for _, name := range c.args {
		f, err := os.Open(name)
		if err != nil {
			return c.fail(fmt.Errorf("statement: %w", err))
		}
		ls, err := reconcile.Read(f, name)
		f.Close()
		if err != nil {
			return c.fail(err)
		}
		lines = append(lines, ls...)
	}
	env, code := c.open(ctx)
	if env == nil {
		return code
	}
	defer env.Close()
	if err := env.svc.Check(ctx, access.Reconcile); err != nil {
		return c.fail(err)
	}
	txs, err := env.db.Transactions(ctx)
	if err != nil {
		return c.fail(err)
	}
	booked := bookedOf(txs)
	res := reconcile.Reconcile(lines, booked, reconcile.Options{SettleDays: settleDays})
	if err := auditReconcile(ctx, env, c.args, res); err != nil {
		return c.fail(err)
	}
	switch {
	case c.flags.json:
		_ = writeJSON(sio.Stdout, reconcileJSONOf(res))
	case asCSV:
		if err := reconcileTable(res).WriteCSV(sio.Stdout); err != nil {
			return c.fail(err)
		}
	default:
		printReconcile(sio, res)
	}
	if res.Counts[reconcile.Matched] != len(res.Lines) || len(res.Unsettled) > 0 {
		return exitFailed
	}
	return 0
}

// bookedOf is what the statements should pay out: every successful
// capture, refund and gift card transaction, refunds negative.
func bookedOf(txs []*store.Transaction) []reconcile.Booked {
	out := make([]reconcile.Booked, 0, len(txs))
	for _, t := range txs {
		if !t.Status.IsSuccess() {
			continue
		}
		amt := t.Amount
		if t.Kind.IsRefund() {
			amt = amt.Neg()
		}
		at := t.Status.Time
		if at.IsZero() {
			at = t.Created
		}
		out = append(out, reconcile.Booked{Key: t.Key, Invoice: t.Invoice, Kind: string(t.Kind), Currency: t.Currency, Amount: amt, At: at})
	}
	return out
}

// auditReconcile records the run, and each line or transaction that does
// not match as an entry of its own: the Attention tab shows them.
func auditReconcile(ctx context.Context, env *runtime, files []string, res reconcile.Result) error {
	now, op := env.svc.Now(), env.svc.Operator()
	add := func(e store.AuditEntry) error {
		e.Time, e.Operator = now, op
		if _, err := env.db.AppendAudit(ctx, e); err != nil {
			return fmt.Errorf("audit: %w", err)
		}
		return nil
	}
	// What an earlier run left open and this one matched is closed by an
	// entry of its own: the Attention tab and the alerts let it go.
	recent, err := env.db.Audit(ctx, reconcile.ItemScan)
	if err != nil {
		return fmt.Errorf("audit: %w", err)
	}
	open := map[string]bool{}
	for _, e := range reconcile.OpenItems(recent, now) {
		open[e.Target] = true
	}
	for _, m := range res.Lines {
		if m.Outcome == reconcile.Matched {
			targets := []string{m.Line.Key, m.Line.Invoice, m.Line.Payout}
			if m.Booked != nil {
				targets = append(targets, m.Booked.Key)
			}
			for _, target := range targets {
				if target == "" || !open[target] {
					continue
				}
				open[target] = false
				if err := add(store.AuditEntry{Action: AuditReconcileItem, Target: target, Amount: m.Line.Gross, Currency: m.Line.Currency,
					Result: reconcile.ItemMatched, Reason: "matched on the statement of " + m.Line.Date.Format(time.DateOnly) + " (" + m.Line.Payout + ")"}); err != nil {
					return err
				}
			}
			continue
		}
		if err := add(store.AuditEntry{Action: AuditReconcileItem, Target: targetOf(m.Line.Key, m.Line.Invoice, m.Line.Payout),
			Amount: m.Line.Gross, Currency: m.Line.Currency, Result: string(m.Outcome), Reason: reasonOf(m)}); err != nil {
			return err
		}
	}
	for _, b := range res.Unsettled {
		if err := add(store.AuditEntry{Action: AuditReconcileItem, Target: targetOf(b.Key, b.Invoice, ""), Amount: b.Amount, Currency: b.Currency,
			Result: string(reconcile.Unsettled), Reason: fmt.Sprintf("%s of %s on no statement of %s to %s", b.Kind, b.At.Format(time.DateOnly),
				res.From.Format(time.DateOnly), res.To.Format(time.DateOnly))}); err != nil {
			return err
		}
	}
	// Each payout, for the report's settled and fees on its day.
	for _, p := range res.Payouts {
		day := p.Date.Format(time.DateOnly)
		if err := add(store.AuditEntry{Action: report.AuditSettlement, Target: p.Reference, Amount: p.Gross, Currency: p.Currency, Result: day}); err != nil {
			return err
		}
		if err := add(store.AuditEntry{Action: report.AuditSettlementFee, Target: p.Reference, Amount: p.Fees, Currency: p.Currency, Result: day}); err != nil {
			return err
		}
	}
	return add(store.AuditEntry{Action: "reconcile", Target: strings.Join(files, " "), Result: countsLine(res)})
}

// AuditReconcileItem is the audit action of a statement line or a booked
// transaction that did not match: the Attention tab reads them.
const AuditReconcileItem = reconcile.ItemAction

func targetOf(key, invoice, payout string) string {
	switch {
	case key != "":
		return key
	case invoice != "":
		return invoice
	}
	return payout
}

func reasonOf(m reconcile.Match) string {
	switch {
	case m.Outcome == reconcile.Matched && m.ByInvoice:
		return "matched by invoice and amount: the statement names no key paydesk knows"
	case m.Outcome == reconcile.Matched:
		return ""
	case m.Outcome == reconcile.Unknown:
		return "paid out on " + m.Line.Payout + ", never booked by paydesk"
	case m.Twice:
		return "paid out twice (" + m.Line.Payout + ")"
	case m.Booked != nil:
		return fmt.Sprintf("the statement says %s %s, paydesk booked %s %s", m.Line.Gross.StringFixed(2), m.Line.Currency,
			m.Booked.Amount.StringFixed(2), m.Booked.Currency)
	}
	return ""
}

func countsLine(res reconcile.Result) string {
	parts := []string{}
	for _, o := range []reconcile.Outcome{reconcile.Matched, reconcile.Unsettled, reconcile.Unknown, reconcile.Differs} {
		parts = append(parts, fmt.Sprintf("%s %d", o, res.Counts[o]))
	}
	curs := make([]string, 0, len(res.Fees))
	for cur := range res.Fees {
		curs = append(curs, cur)
	}
	sort.Strings(curs)
	for _, cur := range curs {
		parts = append(parts, fmt.Sprintf("fees %s %s", res.Fees[cur].StringFixed(2), clean(cur)))
	}
	return strings.Join(parts, " · ")
}

func printReconcile(sio IO, res reconcile.Result) {
	fmt.Fprintf(sio.Stdout, "%d statement lines, %s to %s\n", len(res.Lines), res.From.Format(time.DateOnly), res.To.Format(time.DateOnly))
	tw := tabwriter.NewWriter(sio.Stdout, 0, 0, 2, ' ', 0)
	rows := 0
	for _, m := range res.Lines {
		if m.Outcome == reconcile.Matched {
			continue
		}
		if rows == 0 {
			fmt.Fprintln(tw, "OUTCOME\tSETTLED\tKEY\tINVOICE\tSTATEMENT\tPAYDESK\tWHY")
		}
		rows++
		pd := "-"
		if m.Booked != nil {
			pd = m.Booked.Amount.StringFixed(2) + " " + clean(m.Booked.Currency)
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s %s\t%s\t%s\n", m.Outcome, m.Line.Date.Format(time.DateOnly), orDash(clean(m.Line.Key)),
			orDash(clean(m.Line.Invoice)), m.Line.Gross.StringFixed(2), clean(m.Line.Currency), pd, clean(reasonOf(m)))
	}
	for _, b := range res.Unsettled {
		if rows == 0 {
			fmt.Fprintln(tw, "OUTCOME\tSETTLED\tKEY\tINVOICE\tSTATEMENT\tPAYDESK\tWHY")
		}
		rows++
		fmt.Fprintf(tw, "%s\t-\t%s\t%s\t-\t%s %s\t%s of %s, not paid out\n", reconcile.Unsettled, clean(b.Key), orDash(clean(b.Invoice)),
			b.Amount.StringFixed(2), clean(b.Currency), clean(b.Kind), b.At.Format(time.DateOnly))
	}
	_ = tw.Flush()
	fmt.Fprintln(sio.Stdout, countsLine(res))
	if len(res.Payouts) > 0 {
		fmt.Fprintln(sio.Stdout)
		tw = tabwriter.NewWriter(sio.Stdout, 0, 0, 2, ' ', tabwriter.AlignRight)
		fmt.Fprintln(tw, "PAYOUT\tDATE\tLINES\tGROSS\tFEES\tNET\t")
		for _, p := range res.Payouts {
			fmt.Fprintf(tw, "%s\t%s\t%d\t%s\t%s\t%s %s\t\n", orDash(clean(p.Reference)), p.Date.Format(time.DateOnly), p.Lines,
				p.Gross.StringFixed(2), p.Fees.StringFixed(2), p.Net.StringFixed(2), clean(p.Currency))
		}
		_ = tw.Flush()
	}
}

func orDash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}

type reconcileLineJSON struct {
	Outcome  string `json:"outcome"`
	Source   string `json:"source,omitempty"`
	Payout   string `json:"payout,omitempty"`
	Date     string `json:"date,omitempty"`
	Key      string `json:"key,omitempty"`
	Invoice  string `json:"invoice,omitempty"`
	Type     string `json:"type,omitempty"`
	Currency string `json:"currency"`
	Gross    string `json:"gross,omitempty"`
	Fee      string `json:"fee,omitempty"`
	Net      string `json:"net,omitempty"`
	// Paydesk is what paydesk booked, for matched, differs and unsettled.
	Paydesk *bookedJSON `json:"paydesk,omitempty"`
	Why     string      `json:"why,omitempty"`
}

type bookedJSON struct {
	Key     string `json:"key"`
	Invoice string `json:"invoice,omitempty"`
	Kind    string `json:"kind"`
	Amount  string `json:"amount"`
	At      string `json:"at"`
}

func bookedJSONOf(b *reconcile.Booked) *bookedJSON {
	if b == nil {
		return nil
	}
	return &bookedJSON{Key: clean(b.Key), Invoice: clean(b.Invoice), Kind: b.Kind, Amount: b.Amount.StringFixed(2), At: b.At.UTC().Format(time.RFC3339)}
}

func reconcileJSONOf(res reconcile.Result) any {
	type payoutJSON struct {
		Reference string `json:"reference"`
		Date      string `json:"date"`
		Currency  string `json:"currency"`
		Lines     int    `json:"lines"`
		Gross     string `json:"gross"`
		Fees      string `json:"fees"`
		Net       string `json:"net"`
	}
	out := struct {
		From    string              `json:"from"`
		To      string              `json:"to"`
		Counts  map[string]int      `json:"counts"`
		Fees    map[string]string   `json:"fees"`
		Lines   []reconcileLineJSON `json:"lines"`
		Payouts []payoutJSON        `json:"payouts"`
	}{Counts: map[string]int{}, Fees: map[string]string{}, Lines: []reconcileLineJSON{}, Payouts: []payoutJSON{}}
	if !res.From.IsZero() {
		out.From, out.To = res.From.Format(time.DateOnly), res.To.Format(time.DateOnly)
	}
	for _, o := range []reconcile.Outcome{reconcile.Matched, reconcile.Unsettled, reconcile.Unknown, reconcile.Differs} {
		out.Counts[string(o)] = res.Counts[o]
	}
	for cur, f := range res.Fees {
		out.Fees[clean(cur)] = f.StringFixed(2)
	}
	out.Lines = append(out.Lines, reconcileRows(res)...)
	for _, p := range res.Payouts {
		out.Payouts = append(out.Payouts, payoutJSON{Reference: clean(p.Reference), Date: p.Date.Format(time.DateOnly), Currency: clean(p.Currency),
			Lines: p.Lines, Gross: p.Gross.StringFixed(2), Fees: p.Fees.StringFixed(2), Net: p.Net.StringFixed(2)})
	}
	return out
}

// reconcileRows is every statement line, then every unsettled
// transaction, each with its outcome.
func reconcileRows(res reconcile.Result) []reconcileLineJSON {
	rows := make([]reconcileLineJSON, 0, len(res.Lines)+len(res.Unsettled))
	for _, m := range res.Lines {
		l := m.Line
		rows = append(rows, reconcileLineJSON{Outcome: string(m.Outcome), Source: clean(l.Source), Payout: clean(l.Payout),
			Date: l.Date.Format(time.DateOnly), Key: clean(l.Key), Invoice: clean(l.Invoice), Type: clean(l.Type), Currency: clean(l.Currency),
			Gross: l.Gross.StringFixed(2), Fee: l.Fee.StringFixed(2), Net: l.Net.StringFixed(2), Paydesk: bookedJSONOf(m.Booked), Why: clean(reasonOf(m))})
	}
	for i := range res.Unsettled {
		b := &res.Unsettled[i]
		rows = append(rows, reconcileLineJSON{Outcome: string(reconcile.Unsettled), Key: clean(b.Key), Invoice: clean(b.Invoice),
			Currency: clean(b.Currency), Paydesk: bookedJSONOf(b), Why: "not paid out on the statements read"})
	}
	return rows
}

// reconcileTable is the bookkeeper's CSV.
func reconcileTable(res reconcile.Result) views.ExportTable {
	rows := reconcileRows(res)
	return views.ExportTable{
		Columns: []string{"outcome", "settled", "payout", "key", "invoice", "type", "currency", "gross", "fee", "net", "paydesk_kind", "paydesk_amount", "why", "source"},
		Len:     len(rows),
		Row: func(i int) []string {
			r := rows[i]
			kind, amt := "", ""
			if r.Paydesk != nil {
				kind, amt = r.Paydesk.Kind, r.Paydesk.Amount
			}
			return []string{r.Outcome, r.Date, r.Payout, r.Key, r.Invoice, r.Type, r.Currency, r.Gross, r.Fee, r.Net, kind, amt, r.Why, r.Source}
		},
	}
}
