package cli

import (
	"context"
	"fmt"

	"github.com/shopspring/decimal"
	"github.com/spf13/cobra"

	"paydesk/api"
	"paydesk/internal/ops"
	"paydesk/store"
)

func cancelCmd(sio IO) *cobra.Command {
	c := &cmdContext{name: "cancel", sio: sio}
	cmd := c.command("cancel RESERVATION", "Cancel a reservation, or what remains of it", cobra.ExactArgs(1), runCancel)
	c.moneyFlags()
	return cmd
}

func runCancel(ctx context.Context, c *cmdContext) int {
	env, code := c.open(ctx)
	if env == nil {
		return code
	}
	defer env.Close()
	r, err := env.db.Reservation(ctx, c.args[0])
	if err != nil {
		return c.fail(err)
	}
	amount, err := ops.PlanCancel(r)
	if err != nil {
		return c.report(ops.Result{Action: api.ActionCancelReservation, Target: c.args[0]}, err, false)
	}
	var lines []string
	for _, l := range r.Lines {
		if n := l.Remaining(); n > 0 {
			lines = append(lines, lineText(l.ArticleNumber, l.Title, n, l.Price))
		}
	}
	s := summary{Action: "Cancel " + cancelWhat(r) + " of", Target: "reservation " + r.ReservationNumber, Amount: amount,
		Currency: r.Currency, Customer: r.CustomerName, Invoice: r.Invoice, Lines: lines}
	if !c.confirm(env.svc.Mode(), s) {
		return exitFailed
	}
	res, err := env.svc.Cancel(ctx, ops.CancelRequest{Reservation: c.args[0], Confirm: c.flags.confirm})
	return c.report(res, err, c.settle(ctx, env, res))
}

func cancelWhat(r *store.Reservation) string {
	if r.CapturedAmount.IsPositive() {
		return "the remainder"
	}
	return "the whole"
}

// lineText is one line of a summary: "SHOE-42 Trail running shoe  2 × 59.95 = 119.90".
func lineText(article, title string, units int, price decimal.Decimal) string {
	return fmt.Sprintf("%s %s  %d × %s = %s", article, title, units, money(price), money(price.Mul(decimal.NewFromInt(int64(units)))))
}
