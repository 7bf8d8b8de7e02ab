package cli

import (
	"bufio"
	"fmt"
	"regexp"
	"strings"

	"github.com/shopspring/decimal"

	"paydesk/internal/ops"
)

// summary is what a money-moving command shows before it asks: the action
// in plain words, the amount with its currency, who and which invoice, and
// the lines it touches.
type summary struct {
	Action   string // "Capture", "Cancel the remainder of", …
	Target   string // "reservation 039e…", "capture 7145…"
	Amount   decimal.Decimal
	Currency string
	Customer string
	Invoice  string // typed to confirm against a live gateway
	Lines    []string
	Notes    []string
}

func (s summary) write(c *cmdContext, mode ops.Mode) {
	w := c.sio.Stderr
	fmt.Fprintf(w, "%s %s: %s %s\n", s.Action, s.Target, money(s.Amount), s.Currency)
	if s.Customer != "" {
		fmt.Fprintf(w, "  customer  %s\n", clean(s.Customer))
	}
	if s.Invoice != "" {
		fmt.Fprintf(w, "  invoice   %s\n", clean(s.Invoice))
	}
	for i, l := range s.Lines {
		head := "            "
		if i == 0 {
			head = "  lines     "
		}
		fmt.Fprintf(w, "%s%s\n", head, clean(l))
	}
	for _, n := range s.Notes {
		fmt.Fprintf(w, "  %s\n", clean(n))
	}
	gateway := strings.ToUpper(string(mode))
	if mode.IsLive() {
		gateway = "LIVE — real money"
	}
	fmt.Fprintf(w, "  gateway   %s\n", gateway)
}

// confirm asks before money moves, the same way for every command: in
// sandbox and test the operator types "yes"; against a live gateway the
// invoice number (as k9s asks for a name before a delete). --yes skips the
// question in sandbox and test; against a live gateway a script passes
// --confirm INVOICE instead. With no terminal to ask on and neither flag it
// refuses. Nothing is sent unless it returns true; c.flags.confirm then
// holds what the operation checks again.
func (c *cmdContext) confirm(mode ops.Mode, s summary) bool {
	errw := c.sio.Stderr
	refuse := func(format string, args ...any) bool {
		fmt.Fprintf(errw, "paydesk %s: %s; nothing sent\n", c.name, fmt.Sprintf(format, args...))
		return false
	}
	if mode.IsLive() {
		typed := c.flags.confirm
		if typed == "" {
			if c.flags.yes {
				return refuse("against a LIVE gateway --yes is not enough: pass --confirm %s (the invoice number)", s.Invoice)
			}
			if !c.sio.Interactive || c.sio.Stdin == nil {
				return refuse("confirmation needed and no terminal to ask on: pass --confirm %s (the invoice number)", s.Invoice)
			}
			s.write(c, mode)
			fmt.Fprintf(errw, "LIVE gateway: type the invoice number %s to confirm: ", s.Invoice)
			typed = readLine(c)
		}
		if strings.TrimSpace(typed) != s.Invoice {
			return refuse("the invoice number typed does not match %s", s.Invoice)
		}
		c.flags.confirm = strings.TrimSpace(typed)
		return true
	}
	if c.flags.yes {
		return true
	}
	if !c.sio.Interactive || c.sio.Stdin == nil {
		return refuse("confirmation needed and no terminal to ask on: pass --yes")
	}
	s.write(c, mode)
	fmt.Fprint(errw, "Type yes to go ahead: ")
	if strings.ToLower(strings.TrimSpace(readLine(c))) != "yes" {
		return refuse("not confirmed")
	}
	return true
}

func readLine(c *cmdContext) string {
	line, _ := bufio.NewReader(c.sio.Stdin).ReadString('\n')
	return line
}

// plainDecimal is how people write an amount: digits, optionally a point
// (or comma) and decimals, no sign, no exponent ("1e2" is not 100 here).
var plainDecimal = regexp.MustCompile(`^[0-9]+([.,][0-9]+)?$`)

// parseAmount reads an amount given for field, refusing anything but a
// plain decimal number.
func parseAmount(field, s string) (decimal.Decimal, error) {
	s = strings.TrimSpace(s)
	if !plainDecimal.MatchString(s) {
		return decimal.Decimal{}, fmt.Errorf("%s %q: write a plain decimal amount such as 12.50 (no sign, no exponent)", field, s)
	}
	d, err := decimal.NewFromString(strings.ReplaceAll(s, ",", "."))
	if err != nil {
		return decimal.Decimal{}, fmt.Errorf("%s %q: not a decimal number", field, s)
	}
	return d, nil
}

// parseAmountArg is an optional amount argument: "" is none.
func parseAmountArg(field, s string) (*decimal.Decimal, error) {
	if s == "" {
		return nil, nil
	}
	d, err := parseAmount(field, s)
	if err != nil {
		return nil, err
	}
	return &d, nil
}
