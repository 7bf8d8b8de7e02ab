package cli

import (
	"context"
	"errors"
	"fmt"

	"github.com/shopspring/decimal"
	"github.com/spf13/cobra"

	"paydesk/api"
	"paydesk/internal/ops"
	"paydesk/store"
)

func captureCmd(sio IO) *cobra.Command {
	c := &cmdContext{name: "capture", sio: sio}
	var late bool
	var amountText string
	cmd := c.command("capture RESERVATION [ARTICLE=QTY ...]", "Capture a shipment: everything remaining, or the units named",
		cobra.MinimumNArgs(1), func(ctx context.Context, c *cmdContext) int { return runCapture(ctx, c, late, amountText) })
	cmd.Example = "paydesk capture RESERVATION            # everything that remains\npaydesk capture RESERVATION SHOE-42=2 SOCK-3P=2\n" +
		"paydesk capture SHOP-77001 MUG=1       # by the shop's invoice\npaydesk capture SHOP-77003 --amount 54.90   # its order never arrived: in full by amount"
	c.moneyFlags()
	cmd.Flags().BoolVar(&late, "late", false, "confirm a capture past the 14-day shipment window")
	cmd.Flags().StringVar(&amountText, "amount", "", "capture in full by this amount: for a reservation whose lines are not known (its order never arrived)")
	return cmd
}

func runCapture(ctx context.Context, c *cmdContext, late bool, amountText string) int {
	sio := c.sio
	qty, err := ops.ParseQuantities(c.args[1:])
	if err != nil {
		fmt.Fprintf(sio.Stderr, "paydesk capture: %v\n", err)
		return exitUsage
	}
	var byAmount *decimal.Decimal
	if amountText != "" {
		if len(qty) > 0 {
			return c.usage("--amount is a capture in full: give no ARTICLE=QTY pairs with it")
		}
		a, err := api.ParsePlainDecimal(amountText)
		if err != nil {
			return c.usage("--amount: %v", err)
		}
		byAmount = &a
	}
	env, code := c.open(ctx)
	if env == nil {
		return code
	}
	defer env.Close()
	r, err := env.db.Reservation(ctx, c.args[0])
	if err != nil {
		return c.fail(err)
	}
	var plan ops.CapturePlan
	if byAmount != nil {
		plan, err = ops.PlanCaptureByAmount(r, *byAmount, env.svc.Now())
	} else {
		plan, err = ops.PlanCapture(r, qty, env.svc.Now())
	}
	if err != nil {
		return c.report(ops.Result{Action: api.ActionPay, Service: api.ServiceDeferred, Target: r.ReservationNumber}, err, false)
	}
	if plan.PastWindow && !late {
		err := fmt.Errorf("capture %s: %w: the reservation is %d days past the 14-day shipment window (pass --late to confirm)",
			r.ReservationNumber, ops.ErrConfirmRequired, -plan.DaysLeft)
		return c.report(ops.Result{Action: api.ActionPay, Service: api.ServiceDeferred, Target: r.ReservationNumber}, err, false)
	}
	s := summary{Action: "Capture", Target: "reservation " + r.ReservationNumber, Amount: plan.Amount, Currency: r.Currency,
		Customer: r.CustomerName, Invoice: r.Invoice, Lines: captureLines(r, plan)}
	switch {
	case plan.ByAmount:
		s.Notes = append(s.Notes, "a full capture by the amount you typed", "warning: "+ops.ByAmountWarning)
	case plan.Full:
		s.Notes = append(s.Notes, "a full capture: everything that remains")
	}
	if plan.PastWindow {
		s.Notes = append(s.Notes, "past the 14-day shipment window: the provider may revoke the payout")
	}
	if !c.confirm(env.svc.Mode(), s) {
		return exitFailed
	}
	res, err := env.svc.Capture(ctx, ops.CaptureRequest{Reservation: c.args[0], Quantities: qty, LateConfirmed: late, Amount: byAmount})
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
