package cli

import (
	"bufio"
	"context"
	"fmt"
	"strings"

	"github.com/spf13/cobra"

	"paydesk/api"
	"paydesk/internal/ops"
)

func giftCardCmd(sio IO) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "giftcard",
		Short: "Gift card payments and refunds (pay, refund)",
		Args:  cobra.NoArgs,
	}
	cmd.AddCommand(giftCardPayCmd(sio), newRefundCmd(sio, "giftcard refund", "refund TRANSACTION [AMOUNT]",
		"Refund a gift card payment, in full or in part"))
	return cmd
}

func providerFor(code, flagValue string) (api.Provider, error) {
	switch strings.ToLower(flagValue) {
	case "a":
		return api.ProviderA, nil
	case "b":
		return api.ProviderB, nil
	case "c":
		return api.ProviderC, nil
	case "custom":
		return api.ProviderCustom, nil
	case "":
	default:
		return "", fmt.Errorf("--provider %q: must be A, B, C or custom", flagValue)
	}
	switch strings.ToLower(code) {
	case "vouchera":
		return api.ProviderA, nil
	case "voucherb":
		return api.ProviderB, nil
	case "voucherc":
		return api.ProviderC, nil
	}
	if api.IsCustomCardCode(code) {
		return api.ProviderCustom, nil
	}
	return "", fmt.Errorf("service %q: say which provider processes the card with --provider A|B|C", code)
}

type giftCardPayFlags struct {
	service, card, pin, invoice, lastName, email, group, provider string
}

func giftCardPayCmd(sio IO) *cobra.Command {
	c := &cmdContext{name: "giftcard pay", sio: sio}
	var f giftCardPayFlags
	cmd := c.command("pay AMOUNT", "Pay with a gift card (the rest of a partial payment with --group)", cobra.ExactArgs(1),
		func(ctx context.Context, c *cmdContext) int { return runGiftCardPay(ctx, c, f) })
	cmd.Example = "paydesk giftcard pay 30 --service voucherb --card 6299440000000000023 --pin 2222"
	c.moneyFlags()
	fs := cmd.Flags()
	addFlags(fs, "currency")
	fs.StringVar(&f.service, "service", "", "gift card service code (vouchera, voucherb, voucherc, customgiftcard, …)")
	fs.StringVar(&f.provider, "provider", "", "the provider that processes the card: A, B, C or custom (default: from the service code)")
	fs.StringVar(&f.card, "card", "", "card number")
	fs.StringVar(&f.pin, "pin", "", "card PIN (provider C: validation code); \"-\" reads it from standard input")
	fs.StringVar(&f.invoice, "invoice", "", "invoice (default: made up, GC-date-time)")
	fs.StringVar(&f.lastName, "last-name", "", "customer's last name (with --email allows partial refunds later)")
	fs.StringVar(&f.email, "email", "", "customer's e-mail")
	fs.StringVar(&f.group, "group", "", "pay the remainder of this partial payment group (PayRemainder)")
	return cmd
}

func runGiftCardPay(ctx context.Context, c *cmdContext, f giftCardPayFlags) int {
	sio := c.sio
	service, card, pin, invoice, lastName, email, group, provider := f.service, f.card, f.pin, f.invoice, f.lastName, f.email, f.group, f.provider
	amount, err := parseAmount("amount", c.args[0])
	if err != nil {
		fmt.Fprintf(sio.Stderr, "paydesk giftcard pay: %v\n", err)
		return exitUsage
	}
	prov, err := providerFor(service, provider)
	if err != nil {
		fmt.Fprintf(sio.Stderr, "paydesk giftcard pay: %v\n", err)
		return exitUsage
	}
	if pin == "-" && sio.Stdin != nil {
		c.stdinRead = true
		line, _ := bufio.NewReader(sio.Stdin).ReadString('\n')
		pin = strings.TrimSpace(line)
	}
	env, code := c.open(ctx)
	if env == nil {
		return code
	}
	defer env.Close()
	if invoice == "" {
		// Made up here rather than by the operation so that the summary
		// names it and a live confirmation can ask for it.
		invoice = "GC-" + env.svc.Now().UTC().Format("20060102-150405.000")
	}
	currency := c.set.Currency
	if currency == "" {
		currency = "EUR"
	}
	s := summary{Action: "Pay", Target: "with " + clean(service) + " gift card " + ops.MaskCard(card), Amount: amount, Currency: currency,
		Invoice: invoice}
	if lastName != "" || email != "" {
		s.Customer = strings.TrimSpace(lastName + " " + email)
	}
	if group != "" {
		s.Notes = append(s.Notes, "the remainder of partial payment "+group)
	}
	if !c.confirm(env.svc.Mode(), s) {
		return exitFailed
	}
	res, err := env.svc.GiftCardPay(ctx, ops.GiftCardPayRequest{ServiceCode: service, Card: api.Card{Provider: prov, Number: card, PIN: pin},
		Amount: amount, Invoice: invoice, LastName: lastName, Email: email, GroupTransaction: group})
	return c.report(res, err, c.settle(ctx, env, res))
}
