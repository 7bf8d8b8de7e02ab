package ops

import (
	"fmt"
	"strings"
	"time"

	"github.com/shopspring/decimal"

	"paydesk/api"
	"paydesk/store"
)

// The pure planning functions below check a request against the cached
// domain (what remains, what is refundable, the amount rule) without any
// I/O. The forms call them on every keystroke, the operations call them
// again before anything is journaled, so both refuse with the same words.

func fieldErr(action string, fe ...api.FieldError) *api.ValidationError {
	return &api.ValidationError{Action: action, Fields: fe}
}

// CapturePlan is a capture as it will be sent.
type CapturePlan struct {
	Reservation *store.Reservation
	// Lines are the article groups sent; nil for a full capture.
	Lines  []api.CaptureLine
	Amount decimal.Decimal
	// Full is true when the capture takes everything that remains; it is
	// then sent without article groups.
	Full bool
	// DaysLeft in the 14-day shipment window; negative once past it.
	DaysLeft   int
	PastWindow bool
	// Units per article number, as the operator asked (0s dropped).
	Units map[string]int
	// ByAmount is a full capture of a reservation whose lines paydesk does
	// not know, at the amount the operator typed; Warning says so.
	ByAmount bool
	Warning  string
}

// ByAmountWarning is what a capture by amount tells the operator.
const ByAmountWarning = "paydesk does not know this reservation's lines (its order never arrived): " +
	"the amount you typed is sent as a full capture and the gateway checks it against what it reserved"

// PlanCaptureByAmount plans a full capture of a reservation seen only in a
// push, at an amount the operator typed: positive, two decimals at most.
// When the lines are known the capture is by line (PlanCapture) instead.
func PlanCaptureByAmount(r *store.Reservation, amount decimal.Decimal, now time.Time) (CapturePlan, error) {
	p := CapturePlan{Reservation: r, DaysLeft: r.DaysLeft(now), Units: map[string]int{}, Full: true, ByAmount: true, Amount: amount, Warning: ByAmountWarning}
	p.PastWindow = p.DaysLeft < 0
	if err := r.CanCapture(); err != nil {
		return p, fmt.Errorf("capture: %w: %v", ErrNotPossible, err)
	}
	if r.LinesKnown {
		return p, fmt.Errorf("capture: %w: the reservation's lines are known: capture them by line", ErrNotPossible)
	}
	if !amount.IsPositive() || !amount.Equal(amount.Round(2)) {
		return p, fieldErr(api.ActionPay, api.FieldError{Field: api.FieldAmountDebit, Rule: "must be more than 0 with two decimals at most"})
	}
	return p, nil
}

// Op builds the capture the plan sends.
func (p CapturePlan) Op(currency string) api.Capture {
	r := p.Reservation
	if currency == "" {
		currency = r.Currency
	}
	return api.Capture{Currency: currency, Invoice: r.Invoice, ReservationNumber: r.ReservationNumber,
		Amount: p.Amount, Lines: p.Lines}
}

// PlanCapture checks a capture of qty (article number → units; nil means
// everything remaining; 0 skips a line) against what remains per line and
// computes its amount with decimals.
func PlanCapture(r *store.Reservation, qty map[string]int, now time.Time) (CapturePlan, error) {
	p := CapturePlan{Reservation: r, DaysLeft: r.DaysLeft(now), Units: map[string]int{}}
	p.PastWindow = p.DaysLeft < 0
	if err := r.CanCapture(); err != nil {
		return p, fmt.Errorf("capture: %w: %v", ErrNotPossible, err)
	}
	if !r.LinesKnown {
		return p, fmt.Errorf("capture: %w: the reservation's lines are not known to this cache (its order never arrived): "+
			"post the order to the listener's intake (…/orders) or run paydesk import, or capture it in full by amount", ErrNotPossible)
	}
	left := r.Capturable()
	var fe []api.FieldError
	known := map[string]bool{}
	all := true
	for i, l := range r.Lines {
		known[l.ArticleNumber] = true
		want := left[i]
		if qty != nil {
			want = qty[l.ArticleNumber]
		}
		switch {
		case want < 0:
			fe = append(fe, api.FieldError{Field: api.PArticleQuantity, Group: l.ArticleNumber, Rule: "must be 0 (skip) or a positive number of units"})
			continue
		case want > left[i]:
			fe = append(fe, api.FieldError{Field: api.PArticleQuantity, Group: l.ArticleNumber,
				Rule: fmt.Sprintf("only %d left to capture (reserved %d, captured %d, cancelled %d)", left[i], l.Reserved, l.Captured, l.Cancelled)})
			continue
		}
		if want != left[i] {
			all = false
		}
		if want == 0 {
			continue
		}
		p.Units[l.ArticleNumber] = want
		p.Lines = append(p.Lines, api.CaptureLine{ArticleNumber: l.ArticleNumber, Quantity: want})
		p.Amount = p.Amount.Add(l.Price.Mul(decimal.NewFromInt(int64(want))))
	}
	for n := range qty {
		if !known[n] {
			fe = append(fe, api.FieldError{Field: api.PArticleNumber, Group: n, Rule: "is not an article of this reservation"})
		}
	}
	if len(fe) > 0 {
		return p, fieldErr(api.ActionPay, fe...)
	}
	if len(p.Lines) == 0 {
		return p, fieldErr(api.ActionPay, api.FieldError{Field: api.PArticleQuantity, Rule: "at least one line must ship at least one unit"})
	}
	if !p.Amount.IsPositive() {
		return p, fieldErr(api.ActionPay, api.FieldError{Field: api.FieldAmountDebit,
			Rule: "the shipped lines add up to " + api.WireString(p.Amount) + "; a capture must be more than 0 (ship more than the discount)"})
	}
	p.Full = all
	if p.Full {
		p.Lines = nil
	}
	return p, nil
}

// ParseQuantities reads ARTICLE=QTY pairs of the command line.
func ParseQuantities(pairs []string) (map[string]int, error) {
	if len(pairs) == 0 {
		return nil, nil
	}
	out := make(map[string]int, len(pairs))
	for _, p := range pairs {
		name, v, ok := strings.Cut(p, "=")
		if !ok || name == "" {
			return nil, fmt.Errorf("%q: expected ARTICLE=QTY", p)
		}
		n := 0
		if v == "" {
			return nil, fmt.Errorf("%q: quantity missing", p)
		}
		for _, c := range v {
			if c < '0' || c > '9' || n > 1e8 {
				return nil, fmt.Errorf("%q: quantity must be a whole number", p)
			}
			n = n*10 + int(c-'0')
		}
		if _, dup := out[name]; dup {
			return nil, fmt.Errorf("%q: article named twice", p)
		}
		out[name] = n
	}
	return out, nil
}

// PlanCancel checks a cancel and returns the amount it releases.
func PlanCancel(r *store.Reservation) (decimal.Decimal, error) {
	if err := r.CanCancel(); err != nil {
		return decimal.Zero, fmt.Errorf("cancel: %w: %v", ErrNotPossible, err)
	}
	if r.ReservationNumber == "" {
		return decimal.Zero, fmt.Errorf("cancel: %w: no reservation number yet", ErrNotPossible)
	}
	if r.LinesKnown {
		return r.RemainingAmount(), nil
	}
	return r.Amount(), nil
}

// UpdateChange is what the operator changes in an update: new lines (nil:
// unchanged) and address fields (empty fields unchanged).
type UpdateChange struct {
	Articles []api.Article
	Billing  api.Address
	Shipping api.Address
}

// PlanUpdate builds the UpdateReservation and checks it before sending: the
// new total may keep or lower the reserved amount, never raise it; a line
// that is partly captured keeps its price and at least its captured units.
func PlanUpdate(r *store.Reservation, ch UpdateChange) (api.UpdateReservation, error) {
	reserved := r.Amount()
	u := api.UpdateReservation{Currency: r.Currency, Invoice: r.Invoice, ReservationNumber: r.ReservationNumber,
		Articles: ch.Articles, Billing: ch.Billing, Shipping: ch.Shipping, ReservedAmount: &reserved}
	switch st := r.State(); st {
	case store.StateReserved, store.StatePartlyCaptured:
	default:
		return u, fmt.Errorf("update: %w: reservation %s is %s", ErrNotPossible, r.ReservationNumber, st)
	}
	if len(ch.Articles) == 0 && ch.Billing.IsZero() && ch.Shipping.IsZero() {
		return u, fieldErr(api.ActionUpdateReservation, api.FieldError{Field: api.PArticleTitle, Rule: "nothing to change"})
	}
	var fe []api.FieldError
	for _, old := range r.Lines {
		if old.Captured == 0 {
			continue
		}
		found := false
		for _, a := range ch.Articles {
			if a.Number != old.ArticleNumber {
				continue
			}
			found = true
			if a.Quantity < old.Captured {
				fe = append(fe, api.FieldError{Field: api.PArticleQuantity, Group: a.Number,
					Rule: fmt.Sprintf("%d already captured; cannot go below that", old.Captured)})
			}
			if !a.Price.Equal(old.Price) {
				fe = append(fe, api.FieldError{Field: api.PArticlePrice, Group: a.Number,
					Rule: "partly captured at " + api.WireString(old.Price) + "; the price cannot change"})
			}
		}
		if !found && len(ch.Articles) > 0 {
			fe = append(fe, api.FieldError{Field: api.PArticleNumber, Group: old.ArticleNumber, Rule: "has captured units and must stay"})
		}
	}
	if len(ch.Articles) > 0 {
		if t := api.ArticlesTotal(ch.Articles); t.GreaterThan(reserved) {
			fe = append(fe, api.FieldError{Field: api.PArticlePrice, Rule: "the new total " + api.WireString(t) +
				" is above the reserved amount " + api.WireString(reserved) + "; an update may keep or lower the amount, never raise it"})
		}
	}
	if len(fe) > 0 {
		return u, fieldErr(api.ActionUpdateReservation, fe...)
	}
	return u, nil
}

// Refund reasons the audit log keeps.
const (
	ReasonReturn    = "return"
	ReasonDefect    = "defect"
	ReasonGoodwill  = "goodwill"
	ReasonDuplicate = "duplicate"
	ReasonOther     = "other"
)

// Reasons lists the refund reasons in the order forms offer them.
var Reasons = [...]string{ReasonReturn, ReasonDefect, ReasonGoodwill, ReasonDuplicate, ReasonOther}

// Reason is why money goes back: one of Reasons, and free text (required
// for "other").
type Reason struct {
	Code string
	Text string
}

// ParseReason reads "return", "other: text" or "defect: broken seam".
func ParseReason(s string) Reason {
	code, text, _ := strings.Cut(s, ":")
	return Reason{Code: strings.ToLower(strings.TrimSpace(code)), Text: strings.TrimSpace(text)}
}

// String is the reason as the audit log shows it.
func (r Reason) String() string {
	if r.Text == "" {
		return r.Code
	}
	return r.Code + ": " + r.Text
}

// Check names the broken rule, nil when the reason is complete.
func (r Reason) Check() *api.FieldError {
	ok := false
	for _, c := range Reasons {
		if r.Code == c {
			ok = true
		}
	}
	switch {
	case r.Code == "":
		return &api.FieldError{Field: "Reason", Rule: "required: return, defect, goodwill, duplicate or other"}
	case !ok:
		return &api.FieldError{Field: "Reason", Rule: "must be return, defect, goodwill, duplicate or other"}
	case r.Code == ReasonOther && r.Text == "":
		return &api.FieldError{Field: "Reason", Rule: "\"other\" needs a text saying why"}
	}
	return nil
}

// PlanRefund checks a refund of a capture: amount nil means all that is
// left; never above what is left.
func PlanRefund(t *store.Transaction, amount *decimal.Decimal, reason Reason) (api.Refund, error) {
	op := api.Refund{Currency: t.Currency, Invoice: t.Invoice, OriginalTransactionKey: t.Key}
	if t.Kind != store.KindCapture {
		return op, fmt.Errorf("refund: %w: %s is a %s, not a capture", ErrNotPossible, t.Key, t.Kind)
	}
	left := t.Refundable()
	if !left.IsPositive() {
		return op, fmt.Errorf("refund: %w: nothing left to refund of %s", ErrNotPossible, t.Key)
	}
	op.Amount = left
	if amount != nil {
		op.Amount = *amount
	}
	var fe []api.FieldError
	switch {
	case !op.Amount.IsPositive():
		fe = append(fe, api.FieldError{Field: api.FieldAmountCredit, Rule: "must be greater than 0"})
	case !op.Amount.Equal(op.Amount.Round(2)):
		fe = append(fe, api.FieldError{Field: api.FieldAmountCredit, Rule: "must have at most two decimals"})
	case op.Amount.GreaterThan(left):
		fe = append(fe, api.FieldError{Field: api.FieldAmountCredit, Rule: "must not exceed what is left to refund (" + left.StringFixed(2) + ")"})
	}
	if e := reason.Check(); e != nil {
		fe = append(fe, *e)
	}
	if len(fe) > 0 {
		return op, fieldErr(api.ActionRefund, fe...)
	}
	return op, nil
}

// GiftCardRefundChange is what the operator fills in for a gift card refund.
type GiftCardRefundChange struct {
	Amount   *decimal.Decimal // nil: all that is left
	LastName string
	Email    string
	Reason   Reason
}

// PlanGiftCardRefund checks a gift card refund, including the document's
// conditions for a partial refund, before sending.
func PlanGiftCardRefund(t *store.Transaction, ch GiftCardRefundChange, partialRefunds bool) (api.GiftCardRefund, error) {
	orig := t.GiftCardOriginal(partialRefunds)
	op := api.GiftCardRefund{ServiceCode: t.ServiceCode, Currency: t.Currency, Invoice: t.Invoice,
		OriginalTransactionKey: t.Key, LastName: ch.LastName, Email: ch.Email, Original: &orig}
	if t.Kind != store.KindGiftCardPay && t.Kind != store.KindGiftCardRemainder {
		return op, fmt.Errorf("gift card refund: %w: %s is a %s, not a gift card payment", ErrNotPossible, t.Key, t.Kind)
	}
	left := t.Refundable()
	if !left.IsPositive() {
		return op, fmt.Errorf("gift card refund: %w: nothing left to refund of %s", ErrNotPossible, t.Key)
	}
	op.Amount = left
	if ch.Amount != nil {
		op.Amount = *ch.Amount
	}
	var fe []api.FieldError
	if e := ch.Reason.Check(); e != nil {
		fe = append(fe, *e)
	}
	if err := op.Validate(api.Rules{GiftCardCodes: []string{t.ServiceCode}}); err != nil {
		if ve, ok := err.(*api.ValidationError); ok {
			fe = append(fe, ve.Fields...)
		}
	}
	if len(fe) > 0 {
		return op, fieldErr(api.ActionRefund, fe...)
	}
	return op, nil
}
