package cli

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"text/tabwriter"
	"time"

	"github.com/spf13/cobra"

	"paydesk/internal/access"
	"paydesk/internal/textsafe"
	"paydesk/store"
)

// deliveryJSON is a delivery of a push to a shop endpoint (the outbox).
type deliveryJSON struct {
	ID          uint64        `json:"id"`
	Push        uint64        `json:"push"`
	Key         string        `json:"key"`
	Endpoint    string        `json:"endpoint"`
	Created     string        `json:"created"`
	State       string        `json:"state"`
	NextAt      string        `json:"nextAt,omitempty"`
	DeliveredAt string        `json:"deliveredAt,omitempty"`
	Resent      int           `json:"resent,omitempty"`
	Attempts    []attemptJSON `json:"attempts"`
}

type attemptJSON struct {
	At        string `json:"at"`
	Status    int    `json:"status,omitempty"`
	Error     string `json:"error,omitempty"`
	LatencyMS int64  `json:"latencyMs"`
	Excerpt   string `json:"excerpt,omitempty"`
}

func stamp(t time.Time) string {
	if t.IsZero() {
		return ""
	}
	return t.UTC().Format(time.RFC3339)
}

func deliveryOut(d *store.Delivery) deliveryJSON {
	c := textsafe.Clean
	out := deliveryJSON{ID: d.ID, Push: d.PushID, Key: c(d.Key), Endpoint: c(store.EndpointShown(d.Endpoint)), Created: stamp(d.Created),
		State: string(d.State), NextAt: stamp(d.NextAt), DeliveredAt: stamp(d.DeliveredAt), Resent: d.Resent, Attempts: []attemptJSON{}}
	for _, a := range d.Attempts {
		out.Attempts = append(out.Attempts, attemptJSON{At: stamp(a.At), Status: a.Status, Error: c(a.Error),
			LatencyMS: a.Latency.Milliseconds(), Excerpt: c(a.Excerpt)})
	}
	return out
}

func deliveriesCmd(sio IO) *cobra.Command {
	c := &cmdContext{name: "deliveries", sio: sio}
	var failed bool
	var limit int
	cmd := c.command("deliveries", "List the deliveries of pushes to the shop (paydesk listen --forward-to), newest first", cobra.NoArgs,
		func(ctx context.Context, c *cmdContext) int { return runDeliveries(ctx, c, failed, limit) })
	cmd.Example = "paydesk deliveries --failed\npaydesk deliveries --json\npaydesk deliveries resend 12\npaydesk deliveries resend --failed"
	c.lookFlags()
	fs := cmd.Flags()
	fs.BoolVar(&failed, "failed", false, "only the ones given up, or whose last attempt failed")
	fs.IntVar(&limit, "limit", 50, "newest N deliveries (0: all)")
	cmd.AddCommand(resendDeliveriesCmd(sio))
	return cmd
}

func runDeliveries(ctx context.Context, c *cmdContext, failed bool, limit int) int {
	if limit < 0 {
		return c.usage("--limit %d: give 0 (all) or a positive number", limit)
	}
	db, code := c.openCache()
	if code >= 0 {
		return code
	}
	out := []deliveryJSON{}
	if db != nil {
		defer c.closeCache(db)
		ds, err := db.Deliveries(ctx, store.DeliveryQuery{Failed: failed, Limit: limit})
		if err != nil {
			return c.fail(err)
		}
		for _, d := range ds {
			out = append(out, deliveryOut(d))
		}
	}
	if c.flags.json {
		_ = writeJSON(c.sio.Stdout, out)
		return exitOK
	}
	tw := tabwriter.NewWriter(c.sio.Stdout, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "ID\tPUSH\tKEY\tENDPOINT\tSTATE\tTRIES\tLAST\tNEXT")
	for _, d := range out {
		last := "-"
		if n := len(d.Attempts); n > 0 {
			a := d.Attempts[n-1]
			if a.Error != "" {
				last = a.At + " " + a.Error
			} else {
				last = fmt.Sprintf("%s HTTP %d in %d ms", a.At, a.Status, a.LatencyMS)
				if a.Excerpt != "" && a.Status != 200 {
					last += ": " + a.Excerpt
				}
			}
		}
		state := d.State
		if d.Resent > 0 {
			state += fmt.Sprintf(" (resent %d×)", d.Resent)
		}
		fmt.Fprintf(tw, "%d\t%d\t%s\t%s\t%s\t%d\t%s\t%s\n", d.ID, d.Push, d.Key, d.Endpoint, state, len(d.Attempts), last, dash(d.NextAt))
	}
	_ = tw.Flush()
	fmt.Fprintln(c.sio.Stdout, count(len(out), "delivery", "deliveries"))
	return exitOK
}

func resendDeliveriesCmd(sio IO) *cobra.Command {
	c := &cmdContext{name: "deliveries resend", sio: sio}
	var failed bool
	var since, until string
	cmd := c.command("resend [ID]", "Send deliveries again: one by ID, every failed one (--failed), or a time window (--since/--until)",
		cobra.MaximumNArgs(1), func(ctx context.Context, c *cmdContext) int { return runResend(ctx, c, failed, since, until) })
	cmd.Example = "paydesk deliveries resend 12\npaydesk deliveries resend --failed\npaydesk deliveries resend --since 2026-11-24 --until 2026-11-25"
	c.lookFlags()
	fs := cmd.Flags()
	fs.BoolVar(&failed, "failed", false, "every delivery given up, or whose last attempt failed")
	fs.StringVar(&since, "since", "", "deliveries recorded from: a date (YYYY-MM-DD), a time (RFC 3339) or days back (7d)")
	fs.StringVar(&until, "until", "", "deliveries recorded before: a date (YYYY-MM-DD) or a time (RFC 3339)")
	return cmd
}

// parseInstant is a date (local midnight) or an RFC 3339 time.
func parseInstant(flag, s string, now time.Time) (time.Time, error) {
	if t, err := time.Parse(time.RFC3339, s); err == nil {
		return t, nil
	}
	if flag == "--since" {
		return parseSince(s, now)
	}
	t, err := time.ParseInLocation(time.DateOnly, s, now.Location())
	if err != nil {
		return time.Time{}, fmt.Errorf("%s %q: must be a date (YYYY-MM-DD) or a time (RFC 3339)", flag, s)
	}
	return t, nil
}

func runResend(ctx context.Context, c *cmdContext, failed bool, sinceArg, untilArg string) int {
	var id uint64
	if len(c.args) == 1 {
		n, err := strconv.ParseUint(c.args[0], 10, 64)
		if err != nil || n == 0 {
			return c.usage("%q: a delivery ID is a positive number (paydesk deliveries lists them)", textsafe.Clean(c.args[0]))
		}
		id = n
		if failed || sinceArg != "" || untilArg != "" {
			return c.usage("give an ID or --failed/--since/--until, not both")
		}
	} else if !failed && sinceArg == "" && untilArg == "" {
		return c.usage("say what to resend: an ID, --failed, or --since/--until")
	}
	now := time.Now()
	var q store.DeliveryQuery
	q.Failed = failed
	var err error
	if sinceArg != "" {
		if q.Since, err = parseInstant("--since", sinceArg, now); err != nil {
			return c.usage("%s", err)
		}
	}
	if untilArg != "" {
		if q.Until, err = parseInstant("--until", untilArg, now); err != nil {
			return c.usage("%s", err)
		}
		if !q.Since.IsZero() && !q.Until.After(q.Since) {
			return c.usage("--until %s is not after --since %s", untilArg, sinceArg)
		}
	}
	db, code := c.openCache()
	if code >= 0 {
		return code
	}
	if db == nil {
		return c.fail(fmt.Errorf("no cache at %s: nothing to resend", c.set.DB))
	}
	defer c.closeCache(db)
	if c.set.ReadOnly {
		return c.fail(fmt.Errorf("read-only = true in %s: nothing resent", c.set.ConfigFile))
	}
	// Who asks: the socket's client when run through the owner, else the
	// user of this process, with the role the config gives them.
	p, ok := access.From(ctx)
	if !ok {
		me := operatorName(getenvOf(c.sio))
		p = c.set.Team.principal(me, me, access.Local)
	}
	if err := c.set.Team.Policy.Check(p, access.Redeliver); err != nil {
		return c.fail(err)
	}
	n, err := db.Redeliver(ctx, store.ResendRequest{ID: id, Query: q, Operator: p.User, Via: "command line"})
	if errors.Is(err, store.ErrNothingToResend) {
		n, err = 0, nil
	}
	if err != nil {
		return c.fail(err)
	}
	if c.flags.json {
		_ = writeJSON(c.sio.Stdout, map[string]int{"resent": n})
		return exitOK
	}
	if n == 0 {
		fmt.Fprintln(c.sio.Stdout, "nothing to resend: no delivery matches")
		return exitOK
	}
	fmt.Fprintf(c.sio.Stdout, "%s queued again: the console, serve or listen that owns the store sends them at once (else the next one started)\n", count(n, "delivery", "deliveries"))
	return exitOK
}
