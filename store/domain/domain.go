package domain

import (
	"strings"
	"time"

	"github.com/shopspring/decimal"

	"paydesk/api"
)

// ShipmentWindow is how long after the reservation date a shipment should be
// captured (the document's "within 14 days of the reservation date").
const ShipmentWindow = 14

// State is the derived state of a reservation. The values are stable: they
// appear in the command line's JSON.
type State string

// Reservation states, derived from the ledger and the last statuses.
const (
	StateAwaitingCustomer State = "awaiting_customer" // Reserve sent, customer not back yet (79x)
	StateReserved         State = "reserved"          // approved, nothing captured or cancelled
	StatePartlyCaptured   State = "partly_captured"   // some captured, some still open
	StateCaptured         State = "captured"          // everything captured
	StateCancelled        State = "cancelled"         // cancelled before anything was captured
	StateClosed           State = "closed"            // captured part + cancelled remainder
	StateDeclined         State = "declined"          // the Reserve ended in a failure (690 risk check, …)
)

// Words names the state for people, the same in the console and on the
// command line: "partly captured", "awaiting customer"; "unknown" for none.
func (s State) Words() string {
	if s == "" {
		return "unknown"
	}
	return strings.ReplaceAll(string(s), "_", " ")
}

// Status is a gateway status as last stored for a key.
type Status struct {
	Code    int
	SubCode string
	Time    time.Time // Status.DateTime
}

// IsZero reports whether no status is known.
func (s Status) IsZero() bool { return s.Code == 0 }

// IsFinal reports whether the status can never change again.
func (s Status) IsFinal() bool { return api.IsFinal(s.Code) }

// IsSuccess reports status 190.
func (s Status) IsSuccess() bool { return s.Code == api.StatusSuccess }

// Text is "190 S001 Success" style text for lists.
func (s Status) Text() string {
	if s.Code == 0 {
		return ""
	}
	t := api.StatusText(s.Code)
	if s.SubCode != "" {
		return itoa(s.Code) + " " + s.SubCode + " " + t
	}
	return itoa(s.Code) + " " + t
}

// Supersedes reports whether incoming may replace stored: a final status never
// changes; a final beats a pending one whatever the clock says; between two
// pending statuses the newer Status.DateTime wins.
func (s Status) Supersedes(stored Status) bool {
	switch {
	case stored.IsZero():
		return true
	case stored.IsFinal():
		return false
	case s.IsFinal():
		return true
	}
	return s.Time.After(stored.Time)
}

// Line is one article line of a reservation with its ledger. Quantities are
// the ledger; amounts are always derived from them and Price.
type Line struct {
	ArticleNumber string
	Title         string
	Type          string          // General, ShipmentFee, HandlingFee or ""
	Price         decimal.Decimal // per unit, VAT included; negative for a discount
	Vat           decimal.Decimal // percent
	Reserved      int             // current reserved quantity (after updates)
	Captured      int
	Cancelled     int
	// Refunded counts units of captures that were refunded in full, and the
	// returned units of refunds by line; a partial refund by amount alone is
	// kept on the capture, not spread over lines.
	Refunded int
}

// Remaining is what can still be captured: Reserved − Captured − Cancelled,
// never below zero.
func (l Line) Remaining() int {
	r := l.Reserved - l.Captured - l.Cancelled
	if r < 0 {
		return 0
	}
	return r
}

// Amount is Price × Reserved.
func (l Line) Amount() decimal.Decimal { return MulQty(l.Price, l.Reserved) }

// CapturedAmount is Price × Captured.
func (l Line) CapturedAmount() decimal.Decimal { return MulQty(l.Price, l.Captured) }

// RemainingAmount is Price × Remaining().
func (l Line) RemainingAmount() decimal.Decimal { return MulQty(l.Price, l.Remaining()) }

// CancelledAmount is Price × Cancelled.
func (l Line) CancelledAmount() decimal.Decimal { return MulQty(l.Price, l.Cancelled) }

// RefundedAmount is Price × Refunded.
func (l Line) RefundedAmount() decimal.Decimal { return MulQty(l.Price, l.Refunded) }

func MulQty(p decimal.Decimal, q int) decimal.Decimal { return p.Mul(decimal.NewFromInt(int64(q))) }

// Request is a data request (Reserve, CancelReservation, UpdateReservation)
// that belongs to a reservation: its key, what it asked and its status.
type Request struct {
	Key    string
	Action string // api.ActionReserve, api.ActionCancelReservation, api.ActionUpdateReservation
	Status Status
	// Update holds what an UpdateReservation asked for; it takes effect in the
	// ledger once its status is 190. Nil for a push-only update (lines unknown).
	Update *Update `json:",omitempty"`
	// OpID is the pending operation that sent it, 0 when it came from elsewhere.
	OpID uint64 `json:",omitempty"`
}

// Update is what an UpdateReservation changes: new lines (when given) and
// address fields (only the non-empty ones).
type Update struct {
	Articles []api.Article `json:",omitempty"`
	Billing  api.Address
	Shipping api.Address
}

// Reservation is a deferred-invoice reservation with its article lines and
// everything that happened to it. The ledger fields (Lines' quantities,
// Cancelled) are recomputed from Requests and the linked transactions on every
// change, so applying the same facts in any order gives the same record.
type Reservation struct {
	Key               string // key of the Reserve data request
	ReservationNumber string // from the Reserve push; "" until the customer approved
	Invoice           string
	Currency          string
	IsTest            bool
	CustomerName      string
	CustomerEmail     string
	Country           string
	Billing           api.Address
	Shipping          api.Address
	// Original is what the Reserve sent (articles and addresses); updates
	// and the ledger are computed on top of it.
	Original Update
	// Lines are the article lines with their ledger; nil when the
	// reservation was only seen in a push from another tool (LinesKnown
	// false).
	Lines      []Line
	LinesKnown bool
	// OrderSource says where the lines came from when the webshop's order
	// brought them (intake, import); "" when paydesk sent the Reserve.
	OrderSource string `json:",omitempty"`
	// UnsplitCaptured is what captures made elsewhere took whose lines could
	// not be told from their amount: booked as an amount, per-line split
	// unknown.
	UnsplitCaptured decimal.Decimal
	// InvoiceNumbers are the provider's invoice numbers of its successful
	// captures (C700), one per shipment.
	InvoiceNumbers []string `json:",omitempty"`
	// CapturedInFull is true when a full capture (no article groups)
	// succeeded on a reservation whose lines are not known: nothing remains.
	CapturedInFull bool `json:",omitempty"`
	// Status is the Reserve's status (791 awaiting the customer, 190, 690 …).
	Status      Status
	Created     time.Time // the reservation date: when the Reserve was answered
	RedirectURL string    // where the customer approves (sandbox checkout page)
	// Requests are the data requests of this reservation in the order they
	// were first seen: the Reserve, then cancels and updates (update history).
	Requests []Request
	// Transactions are the keys of its captures and their refunds.
	Transactions []string
	// Cancelled is true once a CancelReservation succeeded.
	Cancelled bool
	// CapturedAmount is the sum of successful captures; RefundedAmount the
	// sum of successful refunds against them (exact, as the gateway booked
	// them).
	CapturedAmount decimal.Decimal
	RefundedAmount decimal.Decimal
	// OutcomeUnknown is true while an operation on it has an unknown
	// outcome; UnknownOps are their IDs.
	OutcomeUnknown bool
	UnknownOps     []uint64  `json:",omitempty"`
	Updated        time.Time // last change in the cache
}

// Amount is the reserved amount: the sum of the lines at their current
// quantities.
func (r *Reservation) Amount() decimal.Decimal {
	t := decimal.Zero
	for _, l := range r.Lines {
		t = t.Add(l.Amount())
	}
	return t
}

// RemainingAmount is what can still be captured (or cancelled).
func (r *Reservation) RemainingAmount() decimal.Decimal {
	if r.Cancelled {
		return decimal.Zero
	}
	t := decimal.Zero
	for _, l := range r.Lines {
		t = t.Add(l.RemainingAmount())
	}
	// Captures made elsewhere whose lines are unknown still took money.
	if t = t.Sub(r.UnsplitCaptured); t.Sign() < 0 {
		return decimal.Zero
	}
	return t
}

// State derives the reservation state.
func (r *Reservation) State() State {
	switch {
	case r.Status.IsZero() || api.IsPending(r.Status.Code):
		return StateAwaitingCustomer
	case !r.Status.IsSuccess():
		return StateDeclined
	}
	captured := r.CapturedAmount.Sign() != 0 || r.capturedUnits() > 0
	if r.Cancelled {
		if captured {
			return StateClosed
		}
		return StateCancelled
	}
	if !captured {
		return StateReserved
	}
	if (r.LinesKnown && r.remainingUnits() == 0) || (!r.LinesKnown && r.CapturedInFull) {
		return StateCaptured
	}
	return StatePartlyCaptured
}

func (r *Reservation) capturedUnits() int {
	n := 0
	for _, l := range r.Lines {
		n += l.Captured
	}
	return n
}

func (r *Reservation) remainingUnits() int {
	n := 0
	for _, l := range r.Lines {
		n += l.Remaining()
	}
	return n
}

// DaysLeft is the number of calendar days (in now's location) left in the
// 14-day shipment window: 14 on the reservation date, 0 on the last day,
// negative once past it.
func (r *Reservation) DaysLeft(now time.Time) int { return daysLeft(r.Created, now) }

func daysLeft(created, now time.Time) int {
	if created.IsZero() {
		return ShipmentWindow
	}
	c := created.In(now.Location())
	y1, m1, d1 := c.Date()
	y2, m2, d2 := now.Date()
	from := time.Date(y1, m1, d1, 0, 0, 0, 0, time.UTC)
	to := time.Date(y2, m2, d2, 0, 0, 0, 0, time.UTC)
	return ShipmentWindow - int(to.Sub(from).Hours()/24)
}

// Capturable lists, per line index, how many units can still be captured.
func (r *Reservation) Capturable() []int {
	out := make([]int, len(r.Lines))
	if r.Cancelled || r.State() == StateDeclined || r.State() == StateAwaitingCustomer {
		return out
	}
	for i, l := range r.Lines {
		out[i] = l.Remaining()
	}
	return out
}

// CaptureAmount computes what a capture of the given lines costs, checking
// every quantity against what remains. No lines means everything remaining.
func (r *Reservation) CaptureAmount(lines []api.CaptureLine) (decimal.Decimal, error) {
	if len(lines) == 0 {
		return r.RemainingAmount(), nil
	}
	left := r.Capturable()
	total := decimal.Zero
	for _, cl := range lines {
		if cl.Quantity <= 0 {
			return decimal.Zero, errorf("article %q: quantity %d must be positive", cl.ArticleNumber, cl.Quantity)
		}
		want := cl.Quantity
		found := false
		for i, l := range r.Lines {
			if l.ArticleNumber != cl.ArticleNumber || left[i] == 0 {
				continue
			}
			found = true
			n := min(want, left[i])
			left[i] -= n
			want -= n
			total = total.Add(MulQty(l.Price, n))
			if want == 0 {
				break
			}
		}
		if !found && want == cl.Quantity {
			return decimal.Zero, errorf("article %q: nothing left to capture", cl.ArticleNumber)
		}
		if want > 0 {
			return decimal.Zero, errorf("article %q: only %d left to capture, asked %d", cl.ArticleNumber, cl.Quantity-want, cl.Quantity)
		}
	}
	return total, nil
}

// CanCancel says why a cancel is not possible, nil when it is: a reservation
// can be cancelled while it is approved and something remains.
func (r *Reservation) CanCancel() error {
	switch st := r.State(); st {
	case StateReserved, StatePartlyCaptured:
		return nil
	default:
		return errorf("reservation %s is %s: nothing to cancel", r.Ref(), st)
	}
}

// CanCapture says why a capture is not possible, nil when it is.
func (r *Reservation) CanCapture() error {
	switch st := r.State(); st {
	case StateReserved, StatePartlyCaptured:
		if r.ReservationNumber == "" {
			return errorf("reservation %s has no reservation number yet", r.Ref())
		}
		return nil
	default:
		return errorf("reservation %s is %s: nothing to capture", r.Ref(), st)
	}
}

func (r *Reservation) Ref() string {
	if r.ReservationNumber != "" {
		return r.ReservationNumber
	}
	return r.Key
}

// Summary is the compact row of a reservation that lists show. It is kept in
// its own bucket, encoded compactly, so the console loads 100,000 of them fast.
type Summary struct {
	Key               string
	ReservationNumber string
	Invoice           string
	Customer          string
	Country           string
	Currency          string
	Amount            decimal.Decimal // reserved
	Captured          decimal.Decimal
	Remaining         decimal.Decimal
	State             State
	Created           time.Time
	OutcomeUnknown    bool
	IsTest            bool
	// Articles are the article numbers and titles joined by "\n", for the
	// list filter ("filter by article").
	Articles string
	// Email is the customer's e-mail and InvoiceNumbers the provider's
	// invoice numbers of its captures (joined by "\n"), for the search.
	Email          string
	InvoiceNumbers string
	// LinesUnknown: the reservation was only seen in a push (its order
	// never arrived), so Amount and Remaining are not known.
	LinesUnknown bool
}

// DaysLeft is the number of days left in the 14-day shipment window.
func (s Summary) DaysLeft(now time.Time) int { return daysLeft(s.Created, now) }

// Summary returns the reservation's list row.
func (r *Reservation) Summary() Summary {
	s := Summary{Key: r.Key, ReservationNumber: r.ReservationNumber, Invoice: r.Invoice, Customer: r.CustomerName,
		Country: r.Country, Currency: r.Currency, Amount: r.Amount(), Captured: r.CapturedAmount,
		Remaining: r.RemainingAmount(), State: r.State(), Created: r.Created, OutcomeUnknown: r.OutcomeUnknown, IsTest: r.IsTest}
	var b []byte
	for i, l := range r.Lines {
		if i > 0 {
			b = append(b, '\n')
		}
		b = append(b, l.ArticleNumber...)
		b = append(b, ' ')
		b = append(b, l.Title...)
	}
	s.Articles = string(b)
	s.Email = r.CustomerEmail
	s.LinesUnknown = !r.LinesKnown
	s.InvoiceNumbers = strings.Join(r.InvoiceNumbers, "\n")
	return s
}

// Kind tells what a transaction is.
type Kind string

// Transaction kinds.
const (
	KindCapture           Kind = "capture"            // deferredkp Pay, C700
	KindRefund            Kind = "refund"             // deferredkp Refund, C701
	KindGiftCardPay       Kind = "giftcard_pay"       // V238
	KindGiftCardRemainder Kind = "giftcard_remainder" // V238 sent as PayRemainder
	KindGiftCardRefund    Kind = "giftcard_refund"    // V239
	KindUnknown           Kind = "unknown"            // a type paydesk does not know
)

// KindOf maps a TransactionType to a Kind.
func KindOf(transactionType string) Kind {
	switch transactionType {
	case api.TypeDeferredPay:
		return KindCapture
	case api.TypeDeferredRefund:
		return KindRefund
	case api.TypeGiftCardPay:
		return KindGiftCardPay
	case api.TypeGiftCardRefund:
		return KindGiftCardRefund
	}
	return KindUnknown
}

// IsRefund reports whether the kind moves money back to the customer.
func (k Kind) IsRefund() bool { return k == KindRefund || k == KindGiftCardRefund }

// Transaction is a Pay or Refund of either service.
type Transaction struct {
	Key             string
	Kind            Kind
	TransactionType string // C700, C701, V238, V239
	ServiceCode     string
	Invoice         string
	Currency        string
	Amount          decimal.Decimal // AmountDebit for a payment, AmountCredit for a refund
	Status          Status
	IsTest          bool
	// ReservationKey and ReservationNumber link a capture (or a refund via
	// its capture) to its reservation; empty for gift cards.
	ReservationKey    string
	ReservationNumber string
	InvoiceNumber     string // the provider's invoice of a capture
	PaymentKey        string
	// Original is the key a refund refunds (RelatedTransactions "refund" or
	// OriginalTransactionKey); Group is the partial payment group of a gift
	// card payment ("partialpayment").
	Original            string
	Group               string
	RelatedTransactions []api.RelatedTransaction
	// Lines are the articles a capture took; nil with FullCapture for "all
	// that remained", nil without it when unknown (captured by another tool).
	Lines       []api.CaptureLine
	FullCapture bool
	// Refunded is what successful refunds took back from this payment so far.
	Refunded decimal.Decimal
	Refunds  []string // keys of refunds against it
	// Gift card facts that the partial refund rule needs.
	Provider   api.Provider
	HasContact bool // LastName and Email were on the payment
	// RemainderAmount of a partial gift card payment (PayRemainderDetails).
	RemainderAmount decimal.Decimal
	CustomerName    string
	OpID            uint64 // the operation that sent it, 0 if none
	Created         time.Time
	Updated         time.Time
	// Order and the merchant's own name/value pairs (AdditionalParameters,
	// CustomParameters) as the gateway echoed them; shops match pushes on
	// them.
	Order      string
	Additional []api.NameValue
	Custom     []api.NameValue
	// Parcels are the parcels a capture shipped, with their tracking
	// numbers, as the warehouse's manifest named them (none when unknown).
	Parcels []Parcel `json:",omitempty"`
}

// Parcel is one parcel of a shipment: the warehouse's parcel ID and the
// carrier's tracking number, either of which may be empty.
type Parcel struct {
	ID       string `json:",omitempty"`
	Tracking string `json:",omitempty"`
}

// String is "parcel ID tracking T", or the half that is known.
func (p Parcel) String() string {
	switch {
	case p.ID != "" && p.Tracking != "":
		return "parcel " + p.ID + " tracking " + p.Tracking
	case p.ID != "":
		return "parcel " + p.ID
	case p.Tracking != "":
		return "tracking " + p.Tracking
	}
	return ""
}

// Refundable is what is left to refund of a successful payment (zero for
// anything else).
func (t *Transaction) Refundable() decimal.Decimal {
	if t.Kind.IsRefund() || !t.Status.IsSuccess() {
		return decimal.Zero
	}
	left := t.Amount.Sub(t.Refunded)
	if left.Sign() < 0 {
		return decimal.Zero
	}
	return left
}

// GiftCardOriginal is what the gift card partial refund rule needs to know of
// this payment; partialRefunds is the merchant's provider setting.
func (t *Transaction) GiftCardOriginal(partialRefunds bool) api.GiftCardOriginal {
	return api.GiftCardOriginal{Amount: t.Amount, Refunded: t.Refunded, Provider: t.Provider,
		HasContact: t.HasContact, PartialRefunds: partialRefunds}
}

// StatusOf is the status a push or response carries, as stored.
func StatusOf(s api.Status) Status {
	return Status{Code: s.Code.Code, SubCode: s.SubCodeString(), Time: s.DateTime.Time}
}
