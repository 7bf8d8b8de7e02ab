package cli

import (
	"context"
	"errors"
	"fmt"

	"github.com/shopspring/decimal"
	"github.com/spf13/cobra"

	"paydesk/api"
	"paydesk/internal/access"
	"paydesk/internal/ops"
	"paydesk/store"
)

type refundFlags struct {
	reason, lastName, email string
}

func refundCmd(sio IO) *cobra.Command {
	return newRefundCmd(sio, "refund", "refund TRANSACTION [AMOUNT]",
		"Refund a capture (or a gift card payment), in full or in part")
}

// newRefundCmd is `paydesk refund` and `paydesk giftcard refund`: the
// transaction's kind decides whether it is a deferred-invoice or a gift
// card refund, so either name works for either.
func newRefundCmd(sio IO, name, use, short string) *cobra.Command {
	c := &cmdContext{name: name, sio: sio}
	var f refundFlags
	cmd := c.command(use, short, cobra.RangeArgs(1, 2), func(ctx context.Context, c *cmdContext) int { return refundCommand(ctx, c, f) })
	cmd.Long = short + ".\n\nNo AMOUNT refunds all that is left of the payment. A reason is required: return, defect,\ngoodwill, duplicate, or other with a text (\"other: price match\")."
	cmd.Example = "paydesk " + name + " TRANSACTION 20 --reason return"
	c.moneyFlags()
	fs := cmd.Flags()
	fs.StringVar(&f.reason, "reason", "", "return, defect, goodwill, duplicate or other, optionally with a text: \"other: price match\"")
	fs.StringVar(&f.lastName, "last-name", "", "gift cards: the customer's last name (a partial refund needs it when the payment lacked it)")
	fs.StringVar(&f.email, "email", "", "gift cards: the customer's e-mail (likewise)")
	_ = cmd.RegisterFlagCompletionFunc("reason", cobra.FixedCompletions(ops.Reasons[:], cobra.ShellCompDirectiveNoFileComp))
	return cmd
}

func refundCommand(ctx context.Context, c *cmdContext, f refundFlags) int {
	sio, name := c.sio, c.name
	reason, lastName, email := f.reason, f.lastName, f.email
	var amount *decimal.Decimal
	if len(c.args) == 2 {
		var err error
		if amount, err = parseAmountArg("amount", c.args[1]); err != nil {
			fmt.Fprintf(sio.Stderr, "paydesk %s: %v\n", name, err)
			return exitUsage
		}
	}
	env, code := c.open(ctx)
	if env == nil {
		return code
	}
	defer env.Close()
	t, err := env.db.ResolveTransaction(ctx, c.args[0])
	if err != nil {
		return c.fail(err)
	}
	// Who may refund comes before what the refund lacks: a role that may
	// not is told so, not asked for a reason.
	if err := env.svc.Check(ctx, access.Refund); err != nil {
		return c.report(ops.Result{Action: api.ActionRefund, Target: t.Key}, err, false)
	}
	isGift := t.Kind == store.KindGiftCardPay || t.Kind == store.KindGiftCardRemainder
	show := t.Refundable()
	if amount != nil {
		show = *amount
	}
	ch := ops.GiftCardRefundChange{Amount: amount, LastName: lastName, Email: email, Reason: ops.ParseReason(reason)}
	s := summary{Action: "Refund", Amount: show, Currency: t.Currency, Invoice: t.Invoice,
		Notes: []string{"reason " + ch.Reason.String(), "refundable now " + money(t.Refundable()) + " " + t.Currency}}
	if isGift {
		if _, err := ops.PlanGiftCardRefund(t, ch, false); err != nil {
			var ve *api.ValidationError
			if !errors.As(err, &ve) { // field rules are checked again by the operation with the merchant setting
				return c.report(ops.Result{Action: api.ActionRefund, Target: t.Key}, err, false)
			}
		}
		s.Target = "gift card payment " + t.Key + " (" + clean(t.ServiceCode) + ")"
		if lastName != "" || email != "" {
			s.Customer = lastName + " " + email
		}
	} else {
		if lastName != "" || email != "" {
			fmt.Fprintf(sio.Stderr, "paydesk %s: --last-name and --email are for gift card refunds; %s is a %s\n", name, t.Key, t.Kind)
			return exitUsage
		}
		if _, err := ops.PlanRefund(t, amount, ch.Reason); err != nil {
			return c.report(ops.Result{Action: api.ActionRefund, Target: t.Key}, err, false)
		}
		s.Target = "capture " + t.Key
		if r, err := env.db.Reservation(ctx, t.ReservationKey); err == nil {
			s.Target += " of reservation " + r.ReservationNumber
			s.Customer = r.CustomerName
		}
	}
	if !c.confirm(env.svc.Mode(), s) {
		return exitFailed
	}
	confirm := c.flags.confirm
	var res ops.Result
	if isGift {
		res, err = env.svc.GiftCardRefund(ctx, ops.GiftCardRefundRequest{Transaction: t.Key, Change: ch, Confirm: confirm})
	} else {
		res, err = env.svc.Refund(ctx, ops.RefundRequest{Transaction: t.Key, Amount: amount, Reason: ch.Reason, Confirm: confirm})
	}
	return c.report(res, err, c.settle(ctx, env, res))
}
