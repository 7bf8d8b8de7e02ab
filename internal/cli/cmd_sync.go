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

	"paydesk/internal/gwsync"
)

// learnedJSON is one fact sync learned (camelCase keys, amounts as strings
// with two decimals, times in UTC).
type learnedJSON struct {
	Invoice    string `json:"invoice"`
	Key        string `json:"key"`
	Kind       string `json:"kind"`
	Status     int    `json:"status"`
	SubCode    string `json:"subCode,omitempty"`
	StatusTime string `json:"statusTime,omitempty"`
	Was        int    `json:"was"` // 0: paydesk did not know the key
	Amount     string `json:"amount,omitempty"`
	Currency   string `json:"currency,omitempty"`
	PushID     uint64 `json:"pushId"`
}

func syncCmd(sio IO) *cobra.Command {
	c := &cmdContext{name: "sync", sio: sio}
	var since string
	cmd := c.command("sync", "Learn from the gateway what paydesk was not told (back-office captures, refunds, cancels; lost pushes)", cobra.NoArgs,
		func(ctx context.Context, c *cmdContext) int { return runSync(ctx, c, since) })
	cmd.Long = "sync asks the gateway's InvoiceInfo lookup about every open reservation and every reservation and\n" +
		"transaction made in the window, and books what differs exactly as the push would have been: the\n" +
		"push log shows it as learned from the gateway. A lookup only reads; nothing is sent that moves money."
	cmd.Example = "paydesk sync\npaydesk sync --since 2026-11-01 --json\npaydesk sync --since 90d"
	c.gatewayFlags()
	cmd.Flags().StringVar(&since, "since", "", "how far back: a date (YYYY-MM-DD) or days (90d); default 30d")
	return cmd
}

// parseSince reads --since: a date (midnight, local time) or a number of
// days before now.
func parseSince(s string, now time.Time) (time.Time, error) {
	if s == "" {
		return time.Time{}, nil
	}
	if d, ok := strings.CutSuffix(s, "d"); ok {
		n, err := strconv.Atoi(d)
		if err != nil || n < 0 || n > 36500 {
			return time.Time{}, fmt.Errorf("--since %q: days must be a whole number from 0 to 36500 (e.g. 90d)", s)
		}
		return now.AddDate(0, 0, -n), nil
	}
	t, err := time.ParseInLocation("2006-01-02", s, now.Location())
	if err != nil {
		return time.Time{}, fmt.Errorf("--since %q: must be a date (YYYY-MM-DD) or days (90d)", s)
	}
	if t.After(now) {
		return time.Time{}, fmt.Errorf("--since %q: must not be in the future", s)
	}
	return t, nil
}

func runSync(ctx context.Context, c *cmdContext, sinceArg string) int {
	sio := c.sio
	from, err := parseSince(sinceArg, time.Now())
	if err != nil {
		return c.usage("%s", err)
	}
	env, code := c.open(ctx)
	if env == nil {
		return code
	}
	defer env.Close()
	res, err := env.svc.Sync(ctx, from)
	if err != nil {
		return c.fail(err)
	}
	failed := make([]string, 0, len(res.Failed))
	for inv, err := range res.Failed {
		failed = append(failed, clean(inv)+": "+clean(err.Error()))
	}
	sort.Strings(failed)
	if c.flags.json {
		out := struct {
			Invoices int           `json:"invoices"`
			Learned  []learnedJSON `json:"learned"`
			NotFound []string      `json:"notFound"`
			Failed   []string      `json:"failed"`
		}{Invoices: res.Invoices, Learned: []learnedJSON{}, NotFound: cleanAll(res.NotFound), Failed: failed}
		for _, l := range res.Learned {
			out.Learned = append(out.Learned, learnedOf(l))
		}
		_ = writeJSON(sio.Stdout, out)
	} else {
		if len(res.Learned) > 0 {
			tw := tabwriter.NewWriter(sio.Stdout, 0, 0, 2, ' ', 0)
			fmt.Fprintln(tw, "INVOICE\tKEY\tKIND\tSTATUS\tAMOUNT\tPAYDESK HAD")
			for _, l := range res.Learned {
				was := "nothing"
				if l.Was.Code != 0 {
					was = strconv.Itoa(l.Was.Code)
				}
				amount := "-"
				if !l.Amount.IsZero() {
					amount = l.Amount.StringFixed(2) + " " + clean(l.Currency)
				}
				fmt.Fprintf(tw, "%s\t%s\t%s\t%d %s\t%s\t%s\n", clean(l.Invoice), clean(l.Key), clean(l.Kind), l.Status.Code,
					clean(l.Status.SubCode), amount, was)
			}
			_ = tw.Flush()
		}
		fmt.Fprintf(sio.Stdout, "asked about %d invoices: learned %d", res.Invoices, len(res.Learned))
		if len(res.NotFound) > 0 {
			fmt.Fprintf(sio.Stdout, "; the gateway holds nothing for %d", len(res.NotFound))
		}
		fmt.Fprintln(sio.Stdout)
		for _, f := range failed {
			fmt.Fprintf(sio.Stderr, "paydesk sync: lookup failed for %s (asked again next time)\n", f)
		}
	}
	if len(failed) > 0 {
		return exitFailed
	}
	return 0
}

func learnedOf(l gwsync.Learned) learnedJSON {
	out := learnedJSON{Invoice: clean(l.Invoice), Key: clean(l.Key), Kind: clean(l.Kind), Status: l.Status.Code,
		SubCode: clean(l.Status.SubCode), Was: l.Was.Code, Currency: clean(l.Currency), PushID: l.Result.ID}
	if !l.Status.Time.IsZero() {
		out.StatusTime = l.Status.Time.UTC().Format(time.RFC3339)
	}
	if !l.Amount.IsZero() {
		out.Amount = l.Amount.StringFixed(2)
	}
	return out
}
