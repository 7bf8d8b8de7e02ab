package sandbox

import (
	"context"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/shopspring/decimal"

	"paydesk/api"
)

// declineName is the billing last name the sandbox's risk check declines.
const declineName = "Decline"

// reservationWindow is the document's "shipment within 14 days".
const reservationWindow = 14 * 24 * time.Hour

func isDeclined(a api.Address) bool {
	return strings.EqualFold(strings.TrimSpace(a.LastName), declineName)
}

func (s *Sandbox) reserve(c call, o api.Reserve) *api.Response {
	key := s.ids.key()
	res := &reservation{
		Number: s.ids.reservationNumber(), Key: key, WebsiteKey: c.websiteKey, State: resPending, Created: c.now,
		Currency: o.Currency, Invoice: o.Invoice, Billing: o.Billing, Shipping: o.Shipping,
		ShippingSameAsBilling: o.ShippingSameAsBilling, PushURL: o.PushURL, ReturnURL: o.ReturnURL,
		Return: returnURLsOf(c.req), Echo: echoOf(c.req),
	}
	for _, a := range o.Articles {
		res.Lines = append(res.Lines, line{Number: a.Number, Title: a.Title, Type: a.Type, Price: a.Price, Vat: a.Vat, Quantity: a.Quantity})
	}
	tx := &txRecord{Key: key, Kind: kindReserve, WebsiteKey: c.websiteKey, Service: api.ServiceDeferred, Invoice: o.Invoice,
		Currency: o.Currency, Amount: res.total(), Status: api.StatusPendingProcessing, SubCode: api.SubCodeRedirect,
		Created: c.now, PushURL: o.PushURL, ReservationNumber: res.Number, BaseURL: c.base}
	s.addTx(tx, res.Echo)
	s.resByKey[key] = res
	s.resByNumber[res.Number] = res
	s.saveTx(tx)
	s.saveRes(res)

	resp := s.baseResponse(key, api.ServiceDeferred, api.MutationDataRequest, api.StatusPendingProcessing, api.SubCodeRedirect, c.now)
	resp.RequiredAction = &api.RequiredAction{Name: "Redirect", RedirectURL: c.base + "/sandbox/checkout/" + key}
	s.echo(tx, resp)
	return resp
}

// checkoutResult is what the checkout's approve, decline, cancel or fail
// did, and where the customer goes back to with which fields.
type checkoutResult struct {
	Key               string
	Status            int
	ReservationNumber string            `json:",omitempty"`
	CaptureKey        string            `json:",omitempty"` // with autocapture
	ReturnURL         string            `json:",omitempty"`
	ReturnFields      map[string]string `json:",omitempty"`
}

// The customer's choices on the checkout page and the status each gives.
const (
	checkoutApprove = "approve" // 190, or 690 when the risk check declines
	checkoutDecline = "decline" // 690: the provider refuses the customer
	checkoutCancel  = "cancel"  // 890: the customer gives up
	checkoutFail    = "fail"    // 490: the checkout fails
)

func checkoutStatus(verb string) (int, bool) {
	switch verb {
	case checkoutApprove:
		return api.StatusSuccess, true
	case checkoutDecline:
		return api.StatusRejected, true
	case checkoutCancel:
		return api.StatusCancelledByConsumer, true
	case checkoutFail:
		return api.StatusFailed, true
	}
	return 0, false
}

func (s *Sandbox) finishCheckout(_ context.Context, key, verb string) (checkoutResult, error) {
	code, ok := checkoutStatus(verb)
	if !ok {
		return checkoutResult{}, fmt.Errorf("checkout %s: unknown choice %q", key, verb)
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed {
		return checkoutResult{}, ErrClosed
	}
	res := s.resByKey[key]
	if res == nil {
		return checkoutResult{}, fmt.Errorf("checkout %s: %w", key, ErrUnknownKey)
	}
	if res.State != resPending {
		return checkoutResult{}, fmt.Errorf("checkout %s: %w (the reservation is %s)", key, ErrNotPending, res.State)
	}
	tx := s.txs[key]
	now := s.now()
	tx.StatusAt = now
	out := checkoutResult{Key: key}
	if code == api.StatusSuccess && isDeclined(res.Billing) {
		code = api.StatusRejected
	}
	if code != api.StatusSuccess {
		res.State, tx.Status, tx.SubCode = resDeclined, code, ""
		s.emitData(tx, api.ActionReserve, nil, now)
		out.Status = code
	} else {
		res.State, tx.Status, tx.SubCode = resReserved, api.StatusSuccess, ""
		s.emitData(tx, api.ActionReserve, []api.ResponseParameter{{Name: api.PReservationNumber, Value: api.FlexString(res.Number)}}, now)
		out.Status, out.ReservationNumber = api.StatusSuccess, res.Number
		if s.cfg.Merchant.Autocapture {
			all := make(map[int]int, len(res.Lines))
			for i, l := range res.Lines {
				all[i] = l.left()
			}
			captured := s.recordCapture(res, all, res.remaining(), res.Invoice, res.PushURL, res.WebsiteKey, now, res.Echo)
			out.CaptureKey = captured.Key
		}
	}
	out.ReturnURL, out.ReturnFields = s.customerReturn(res, tx, now)
	s.saveRes(res)
	s.saveTx(tx)
	err := s.flushLocked()
	s.wakeUp()
	return out, err
}

// openReservation finds a reservation the merchant may act on.
func (s *Sandbox) openReservation(c call, number string) (*reservation, error) {
	res := s.resByNumber[number]
	if res == nil || res.WebsiteKey != c.websiteKey {
		return nil, refuse(api.PReservationNumber, "unknown reservation number")
	}
	switch res.State {
	case resPending:
		return nil, refuse(api.PReservationNumber, "the customer has not completed the reservation yet")
	case resDeclined:
		return nil, refuse(api.PReservationNumber, "the reservation was declined")
	case resClosed:
		return nil, refuse(api.PReservationNumber, "the reservation is cancelled")
	}
	return res, nil
}

func (s *Sandbox) capture(c call, o api.Capture) (*api.Response, error) {
	res, err := s.openReservation(c, o.ReservationNumber)
	if err != nil {
		return nil, err
	}
	rf := &refusal{}
	if o.Currency != res.Currency {
		rf.add("", api.FieldCurrency, "must be the reservation's currency "+res.Currency)
	}
	qty := map[int]int{}
	var amount decimal.Decimal
	if len(o.Lines) == 0 {
		if !res.hasLeft() {
			return nil, refuse(api.PReservationNumber, "nothing left to capture: every line is captured")
		}
		for i, l := range res.Lines {
			qty[i] = l.left()
		}
		amount = res.remaining()
		if !o.Amount.Equal(amount) {
			rf.add("", api.FieldAmountDebit, "must equal the remaining total "+api.WireString(amount)+" for a full capture")
		}
	} else {
		for gi, cl := range o.Lines {
			g := strconv.Itoa(gi + 1)
			i := findLine(res.Lines, cl.ArticleNumber)
			if i < 0 {
				rf.add(g, api.PArticleNumber, "article "+strconv.Quote(cl.ArticleNumber)+" is not in the reservation")
				continue
			}
			if left := res.Lines[i].left(); cl.Quantity > left {
				rf.add(g, api.PArticleQuantity, fmt.Sprintf("only %d of article %q left to capture", left, cl.ArticleNumber))
				continue
			}
			qty[i] += cl.Quantity
			amount = amount.Add(res.Lines[i].Price.Mul(decimal.NewFromInt(int64(cl.Quantity))))
		}
		if len(rf.fields) == 0 && !o.Amount.Equal(amount) {
			rf.add("", api.FieldAmountDebit, "must equal the captured lines' total "+api.WireString(amount))
		}
	}
	if err := rf.orNil(); err != nil {
		return nil, err
	}
	tx := s.recordCapture(res, qty, amount, o.Invoice, c.req.PushURL, c.websiteKey, c.now, echoOf(c.req))
	return s.txResponse(tx, c.now), nil
}

func findLine(ls []line, number string) int {
	for i, l := range ls {
		if number != "" && l.Number == number {
			return i
		}
	}
	return -1
}

// recordCapture books a capture of qty (line index → quantity) as a C700
// with its push.
func (s *Sandbox) recordCapture(res *reservation, qty map[int]int, amount decimal.Decimal, invoice, pushURL, websiteKey string, now time.Time, e echoFields) *txRecord {
	if age := now.Sub(res.Created); age > reservationWindow {
		s.logf("%s capture of reservation %s %d days after the reservation: accepted, but the provider may revoke the payout",
			now.Format(time.RFC3339), res.Number, int(age/(24*time.Hour)))
	}
	for i, q := range qty {
		res.Lines[i].Captured += q
	}
	tx := &txRecord{Key: s.ids.key(), Kind: api.TypeDeferredPay, WebsiteKey: websiteKey, Service: api.ServiceDeferred,
		Invoice: invoice, Currency: res.Currency, Amount: amount, Status: api.StatusSuccess, SubCode: api.SubCodeProcessed,
		Created: now, PushURL: pushURL, ReservationNumber: res.Number, InvoiceNumber: s.ids.invoiceNumber(), PaymentKey: s.ids.key()}
	s.addTx(tx, e)
	s.saveRes(res)
	s.emitTx(tx, now)
	return tx
}

func (s *Sandbox) cancel(c call, o api.CancelReservation) (*api.Response, error) {
	res, err := s.openReservation(c, o.ReservationNumber)
	if err != nil {
		return nil, err
	}
	if !res.hasLeft() {
		return nil, refuse(api.PReservationNumber, "nothing left to cancel: every line is captured")
	}
	amount := res.remaining()
	for i := range res.Lines {
		res.Lines[i].Cancelled += res.Lines[i].left()
	}
	res.State = resClosed
	tx := &txRecord{Key: s.ids.key(), Kind: kindCancel, WebsiteKey: c.websiteKey, Service: api.ServiceDeferred, Invoice: o.Invoice,
		Currency: res.Currency, Amount: amount, Status: api.StatusSuccess, SubCode: api.SubCodeProcessed, Created: c.now,
		PushURL: c.req.PushURL, ReservationNumber: res.Number}
	s.addTx(tx, echoOf(c.req))
	s.saveRes(res)
	s.emitData(tx, api.ActionCancelReservation, nil, c.now)
	return s.dataResponse(tx, c.now), nil
}

func (s *Sandbox) update(c call, o api.UpdateReservation) (*api.Response, error) {
	res, err := s.openReservation(c, o.ReservationNumber)
	if err != nil {
		return nil, err
	}
	var lines []line
	if len(o.Articles) > 0 {
		rf := &refusal{}
		for _, a := range o.Articles {
			number := a.Number
			if number == "" { // optional on an update: the line is known by its title
				for _, l := range res.Lines {
					if l.Title == a.Title {
						number = l.Number
						break
					}
				}
			}
			lines = append(lines, line{Number: number, Title: a.Title, Type: a.Type, Price: a.Price, Vat: a.Vat, Quantity: a.Quantity})
		}
		for _, old := range res.Lines {
			if old.Captured == 0 {
				continue
			}
			i := findLine(lines, old.Number)
			if i < 0 {
				rf.add("", api.PArticleNumber, fmt.Sprintf("article %q has %d captured and must stay in the reservation", old.Number, old.Captured))
				continue
			}
			g := strconv.Itoa(i + 1)
			if lines[i].Quantity < old.Captured {
				rf.add(g, api.PArticleQuantity, fmt.Sprintf("article %q has %d captured; the quantity cannot go below that", old.Number, old.Captured))
			}
			if !lines[i].Price.Equal(old.Price) {
				rf.add(g, api.PArticlePrice, fmt.Sprintf("article %q is partly captured at %s; its price cannot change", old.Number, api.WireString(old.Price)))
			}
			lines[i].Captured = old.Captured
		}
		newTotal := decimal.Zero
		for _, l := range lines {
			newTotal = newTotal.Add(l.Price.Mul(decimal.NewFromInt(int64(l.Quantity))))
		}
		if cur := res.total(); newTotal.GreaterThan(cur) {
			rf.add("", api.PArticlePrice, "the new total "+api.WireString(newTotal)+" is above the reserved amount "+
				api.WireString(cur)+"; an update may keep or lower the amount, never raise it")
		}
		if err := rf.orNil(); err != nil {
			return nil, err
		}
	}
	billing, shipping := mergeAddress(res.Billing, o.Billing), mergeAddress(res.Shipping, o.Shipping)
	addressChanged := billing != res.Billing || shipping != res.Shipping
	tx := &txRecord{Key: s.ids.key(), Kind: kindUpdate, WebsiteKey: c.websiteKey, Service: api.ServiceDeferred, Invoice: o.Invoice,
		Currency: res.Currency, Status: api.StatusSuccess, SubCode: api.SubCodeProcessed, Created: c.now,
		PushURL: c.req.PushURL, ReservationNumber: res.Number}
	s.addTx(tx, echoOf(c.req))
	if addressChanged && isDeclined(billing) {
		// The provider's risk check runs again on new address data and
		// declines; the reservation stays as it was.
		tx.Status, tx.SubCode = api.StatusRejected, ""
		s.emitData(tx, api.ActionUpdateReservation, nil, c.now)
		return s.dataResponse(tx, c.now), nil
	}
	if lines != nil {
		res.Lines = lines
	}
	res.Billing, res.Shipping = billing, shipping
	tx.Amount = res.total()
	s.saveRes(res)
	s.emitData(tx, api.ActionUpdateReservation, nil, c.now)
	return s.dataResponse(tx, c.now), nil
}

// mergeAddress applies the fields an update sends over the stored ones.
func mergeAddress(cur, upd api.Address) api.Address {
	set := func(dst *string, v string) {
		if v != "" {
			*dst = v
		}
	}
	set(&cur.FirstName, upd.FirstName)
	set(&cur.LastName, upd.LastName)
	set(&cur.CareOf, upd.CareOf)
	set(&cur.Company, upd.Company)
	set(&cur.Street, upd.Street)
	set(&cur.HouseNumber, upd.HouseNumber)
	set(&cur.HouseNumberSuffix, upd.HouseNumberSuffix)
	set(&cur.PostalCode, upd.PostalCode)
	set(&cur.City, upd.City)
	set(&cur.Country, upd.Country)
	set(&cur.Email, upd.Email)
	set(&cur.CellPhoneNumber, upd.CellPhoneNumber)
	set(&cur.PhoneNumber, upd.PhoneNumber)
	return cur
}

func (s *Sandbox) refund(c call, o api.Refund) (*api.Response, error) {
	orig := s.txs[o.OriginalTransactionKey]
	if orig == nil || orig.WebsiteKey != c.websiteKey || orig.Kind != api.TypeDeferredPay {
		return nil, refuse(api.FieldOriginalKey, "no deferred-invoice payment (C700) with this key")
	}
	rf := &refusal{}
	if o.Currency != orig.Currency {
		rf.add("", api.FieldCurrency, "must be the payment's currency "+orig.Currency)
	}
	if left := orig.Amount.Sub(orig.Refunded); o.Amount.GreaterThan(left) {
		rf.add("", api.FieldAmountCredit, "must not exceed what is left to refund ("+api.WireString(left)+")")
	}
	if err := rf.orNil(); err != nil {
		return nil, err
	}
	orig.Refunded = orig.Refunded.Add(o.Amount)
	s.saveTx(orig)
	tx := &txRecord{Key: s.ids.key(), Kind: api.TypeDeferredRefund, WebsiteKey: c.websiteKey, Service: api.ServiceDeferred,
		Invoice: o.Invoice, Currency: orig.Currency, Amount: o.Amount, Status: api.StatusSuccess, SubCode: api.SubCodeProcessed,
		Created: c.now, PushURL: c.req.PushURL, ReservationNumber: orig.ReservationNumber, PaymentKey: orig.PaymentKey,
		Original: orig.Key}
	s.addTx(tx, echoOf(c.req))
	s.emitTx(tx, c.now)
	return s.txResponse(tx, c.now), nil
}

// dataResponse is the response of a CancelReservation or
// UpdateReservation: status only, with the echoed fields.
func (s *Sandbox) dataResponse(tx *txRecord, now time.Time) *api.Response {
	resp := s.baseResponse(tx.Key, api.ServiceDeferred, api.MutationDataRequest, tx.Status, tx.SubCode, now)
	s.echo(tx, resp)
	return resp
}
