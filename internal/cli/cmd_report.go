package cli

import (
	"context"
	"fmt"
	"sort"
	"strconv"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/spf13/cobra"

	"paydesk/internal/report"
	"paydesk/views"
)

func reportCmd(sio IO) *cobra.Command {
	c := &cmdContext{name: "report", sio: sio}
	var since, until, by string
	var asCSV bool
	cmd := c.command("report", "The money of each day (or operator, or service): reserved, captured, cancelled, refunded by reason, gift cards, settled and fees", cobra.NoArgs,
		func(ctx context.Context, c *cmdContext) int { return runReport(ctx, c, since, until, by, asCSV) })
	cmd.Example = "paydesk report\npaydesk report --since 2026-11-01 --until 2026-11-30 --by operator\npaydesk report --since 30d --csv > november.csv"
	c.lookFlags()
	fs := cmd.Flags()
	fs.StringVar(&since, "since", "7d", "first day: a date (YYYY-MM-DD) or days back (7d; 0d is today)")
	fs.StringVar(&until, "until", "", "last day, a date (YYYY-MM-DD); default today")
	fs.StringVar(&by, "by", "day", "one row per: day, operator or service")
	fs.BoolVar(&asCSV, "csv", false, "CSV for a spreadsheet")
	cmd.MarkFlagsMutuallyExclusive("json", "csv")
	return cmd
}

func runReport(ctx context.Context, c *cmdContext, sinceArg, untilArg, byArg string, asCSV bool) int {
	sio := c.sio
	grouping, ok := report.ParseBy(byArg)
	if !ok {
		return c.usage("--by %q: one of day, operator, service", byArg)
	}
	now := time.Now()
	from, err := parseSince(sinceArg, now)
	if err != nil {
		return c.usage("%s", err)
	}
	to := now
	if untilArg != "" {
		if to, err = time.ParseInLocation(time.DateOnly, untilArg, now.Location()); err != nil {
			return c.usage("--until %q: must be a date (YYYY-MM-DD)", untilArg)
		}
	}
	if to.Before(from) {
		return c.usage("--until %s is before --since %s", to.Format(time.DateOnly), from.Format(time.DateOnly))
	}
	db, code := c.openCache()
	if code >= 0 {
		return code
	}
	var rep report.Report
	if db != nil {
		defer db.Close()
		if rep, err = report.Load(ctx, db, grouping, from, to, now.Location()); err != nil {
			return c.fail(err)
		}
	} else {
		rep = report.Report{By: grouping, From: from, To: to}
	}
	switch {
	case c.flags.json:
		_ = writeJSON(sio.Stdout, reportJSONOf(rep))
	case asCSV:
		if err := reportTable(rep).WriteCSV(sio.Stdout); err != nil {
			return c.fail(err)
		}
	default:
		printReport(sio, rep)
	}
	return 0
}

type figuresJSON struct {
	Group            string            `json:"group"`
	Currency         string            `json:"currency"`
	Reserved         string            `json:"reserved"`
	Captured         string            `json:"captured"`
	Cancelled        string            `json:"cancelled"`
	Refunded         string            `json:"refunded"`
	RefundedByReason map[string]string `json:"refundedByReason"`
	GiftCardsPaid    string            `json:"giftCardsPaid"`
	GiftCardsRefund  string            `json:"giftCardsRefunded"`
	Captures         int               `json:"captures"`
	Refunds          int               `json:"refunds"`
	Settled          string            `json:"settled"`
	Fees             string            `json:"fees"`
}

func figuresJSONOf(r report.Row) figuresJSON {
	out := figuresJSON{Group: clean(r.Group), Currency: clean(r.Currency), Reserved: money(r.Reserved), Captured: money(r.Captured),
		Cancelled: money(r.Cancelled), Refunded: money(r.Refunded), RefundedByReason: map[string]string{}, GiftCardsPaid: money(r.GiftCardPaid),
		GiftCardsRefund: money(r.GiftCardRefnd), Captures: r.Captures, Refunds: r.Refunds, Settled: money(r.Settled), Fees: money(r.Fees)}
	for reason, a := range r.RefundedBy {
		out.RefundedByReason[reasonName(reason)] = money(a)
	}
	return out
}

func reasonName(r string) string {
	if r == "" {
		return "none given"
	}
	return clean(r)
}

func reportJSONOf(rep report.Report) any {
	out := struct {
		By     string        `json:"by"`
		From   string        `json:"from"`
		To     string        `json:"to"`
		Rows   []figuresJSON `json:"rows"`
		Totals []figuresJSON `json:"totals"`
	}{By: string(rep.By), From: rep.From.Format(time.DateOnly), To: rep.To.Format(time.DateOnly), Rows: []figuresJSON{}, Totals: []figuresJSON{}}
	for _, r := range rep.Rows {
		out.Rows = append(out.Rows, figuresJSONOf(r))
	}
	for _, r := range rep.Totals {
		out.Totals = append(out.Totals, figuresJSONOf(r))
	}
	return out
}

func printReport(sio IO, rep report.Report) {
	fmt.Fprintf(sio.Stdout, "%s to %s, by %s\n", rep.From.Format(time.DateOnly), rep.To.Format(time.DateOnly), rep.By)
	if len(rep.Rows) == 0 {
		fmt.Fprintln(sio.Stdout, "nothing reserved, captured, cancelled, refunded or settled")
		return
	}
	tw := tabwriter.NewWriter(sio.Stdout, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintf(tw, "%s\tCUR\tRESERVED\tCAPTURED\tCANCELLED\tREFUNDED\tGIFT CARDS\tCAPTURES\tREFUNDS\tSETTLED\tFEES\t\n", strings.ToUpper(string(rep.By)))
	line := func(r report.Row) {
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\t%s\t%d\t%d\t%s\t%s\t\n", clean(r.Group), clean(r.Currency), money(r.Reserved), money(r.Captured),
			money(r.Cancelled), money(r.Refunded), money(r.GiftCardPaid.Sub(r.GiftCardRefnd)), r.Captures, r.Refunds, money(r.Settled), money(r.Fees))
	}
	for _, r := range rep.Rows {
		line(r)
	}
	for _, r := range rep.Totals {
		line(r)
	}
	_ = tw.Flush()
	for _, t := range rep.Totals {
		if len(t.RefundedBy) == 0 {
			continue
		}
		reasons := make([]string, 0, len(t.RefundedBy))
		for r := range t.RefundedBy {
			reasons = append(reasons, r)
		}
		sort.Strings(reasons)
		parts := make([]string, 0, len(reasons))
		for _, r := range reasons {
			parts = append(parts, reasonName(r)+" "+money(t.RefundedBy[r]))
		}
		fmt.Fprintf(sio.Stdout, "refunded by reason (%s): %s\n", clean(t.Currency), strings.Join(parts, " · "))
	}
}

func reportTable(rep report.Report) views.ExportTable {
	rows := append(append([]report.Row{}, rep.Rows...), rep.Totals...)
	return views.ExportTable{
		Columns: []string{string(rep.By), "currency", "reserved", "captured", "cancelled", "refunded", "gift_cards_paid", "gift_cards_refunded", "captures", "refunds", "settled", "fees"},
		Len:     len(rows),
		Row: func(i int) []string {
			r := rows[i]
			return []string{r.Group, r.Currency, money(r.Reserved), money(r.Captured), money(r.Cancelled), money(r.Refunded),
				money(r.GiftCardPaid), money(r.GiftCardRefnd), strconv.Itoa(r.Captures), strconv.Itoa(r.Refunds), money(r.Settled), money(r.Fees)}
		},
	}
}
