package cli

import (
	"context"
	"errors"
	"fmt"

	"github.com/spf13/cobra"

	"paydesk/api"
	"paydesk/internal/ops"
	"paydesk/store"
)

func captureCmd(sio IO) *cobra.Command {
	c := &cmdContext{name: "capture", sio: sio}
	var late bool
	cmd := c.command("capture RESERVATION [ARTICLE=QTY ...]", "Capture a shipment: everything remaining, or the units named",
		cobra.MinimumNArgs(1), func(ctx context.Context, c *cmdContext) int { return runCapture(ctx, c, late) })
	cmd.Example = "paydesk capture RESERVATION            # everything that remains\npaydesk capture RESERVATION SHOE-42=2 SOCK-3P=2"
	c.moneyFlags()
	cmd.Flags().BoolVar(&late, "late", false, "confirm a capture past the 14-day shipment window")
	return cmd
}

func runCapture(ctx context.Context, c *cmdContext, late bool) int {
	sio := c.sio
	qty, err := ops.ParseQuantities(c.args[1:])
	if err != nil {
		fmt.Fprintf(sio.Stderr, "paydesk capture: %v\n", err)
		return exitUsage
	}
	env, code := c.open(ctx)
	if env == nil {
		return code
	}
	defer env.Close()
	r, err := env.db.Reservation(c.args[0])
	if err != nil {
		return c.fail(fmt.Errorf("reservation %s: %w", c.args[0], err))
	}
	plan, err := ops.PlanCapture(r, qty, env.svc.Now())
	if err != nil {
		return c.report(ops.Result{Action: api.ActionPay, Target: r.ReservationNumber}, err, false)
	}
	if plan.PastWindow && !late {
		err := fmt.Errorf("capture %s: %w: the reservation is %d days past the 14-day shipment window (pass --late to confirm)",
			r.ReservationNumber, ops.ErrConfirmRequired, -plan.DaysLeft)
		return c.report(ops.Result{Action: api.ActionPay, Target: r.ReservationNumber}, err, false)
	}
	s := summary{Action: "Capture", Target: "reservation " + r.ReservationNumber, Amount: plan.Amount, Currency: r.Currency,
		Customer: r.CustomerName, Invoice: r.Invoice, Lines: captureLines(r, plan)}
	if plan.Full {
		s.Notes = append(s.Notes, "a full capture: everything that remains")
	}
	if plan.PastWindow {
		s.Notes = append(s.Notes, "past the 14-day shipment window: the provider may revoke the payout")
	}
	if !c.confirm(env.svc.Mode(), s) {
		return exitFailed
	}
	res, err := env.svc.Capture(ctx, ops.CaptureRequest{Reservation: c.args[0], Quantities: qty, LateConfirmed: late})
	if errors.Is(err, ops.ErrConfirmRequired) {
		err = fmt.Errorf("%w (pass --late to confirm)", err)
	}
	return c.report(res, err, c.settle(ctx, env, res))
}

// captureLines are the lines a capture takes, "ARTICLE title  N × price = total".
func captureLines(r *store.Reservation, plan ops.CapturePlan) []string {
	var out []string
	for _, l := range r.Lines {
		n := plan.Units[l.ArticleNumber]
		if n == 0 {
			continue
		}
		out = append(out, lineText(l.ArticleNumber, l.Title, n, l.Price))
	}
	return out
}
