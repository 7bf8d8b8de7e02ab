package sandbox

import (
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/shopspring/decimal"

	"paydesk/api"
)

// cardParamNames are the number and PIN parameters of a provider's cards,
// for naming them in errors.
func cardParamNames(p api.Provider) (number, pin string) {
	switch p {
	case api.ProviderA:
		return api.PVoucherACardNumber, api.PVoucherBPIN
	case api.ProviderB:
		return api.PVoucherBCardnumber, api.PVoucherBPIN
	case api.ProviderC:
		return api.PVoucherCCardnumber, api.PVoucherCValidationCode
	}
	return api.PCardNumber, api.PPin
}

func (s *Sandbox) giftCardPay(c call, o api.GiftCardPay) (*api.Response, error) {
	numParam, pinParam := cardParamNames(o.Card.Provider)
	var balance decimal.Decimal
	var seeded *card
	if o.Card.Number == api.TestCardNumber {
		cents, err := strconv.ParseInt(o.Card.PIN, 10, 64)
		if err != nil || cents < 0 || cents > 1e12 {
			return nil, refuse(pinParam, "the test card's PIN is its balance in cents: digits only")
		}
		balance = decimal.New(cents, -2)
	} else {
		seeded = s.cards[cardID(o.Card.Provider, o.Card.Number)]
		switch {
		case seeded == nil:
			return nil, refuse(numParam, "unknown card (the sandbox knows the test card and its seeded cards)")
		case seeded.PIN != o.Card.PIN:
			return nil, refuse(pinParam, "wrong PIN for this card")
		case seeded.Currency != o.Currency:
			return nil, refuse(api.FieldCurrency, "the card holds "+seeded.Currency)
		}
		balance = seeded.Balance
	}
	var g *group
	if o.GroupTransaction != "" {
		g = s.groups[o.GroupTransaction]
		if g == nil || g.WebsiteKey != c.websiteKey {
			return nil, refuse(api.FieldOriginalKey, "no partial gift card payment with this group transaction key")
		}
		rf := &refusal{}
		rem := g.remainder()
		switch {
		case !rem.IsPositive():
			rf.add("", api.FieldOriginalKey, "the payment is complete: nothing remains to pay")
		case o.Amount.GreaterThan(rem):
			rf.add("", api.FieldAmountDebit, "must not exceed the remainder "+api.WireString(rem))
		}
		if o.Currency != g.Currency {
			rf.add("", api.FieldCurrency, "must be the payment's currency "+g.Currency)
		}
		if err := rf.orNil(); err != nil {
			return nil, err
		}
	}
	if !balance.IsPositive() {
		return nil, refuse(numParam, "the card has no balance left")
	}
	paid := decimal.Min(o.Amount, balance)
	if g == nil && paid.LessThan(o.Amount) {
		g = &group{Key: s.ids.key(), WebsiteKey: c.websiteKey, Service: o.ServiceCode, Currency: o.Currency, Invoice: o.Invoice,
			Total: o.Amount, PushURL: c.req.PushURL, ReturnURL: c.req.ReturnURL, Created: c.now, Echo: echoOf(c.req)}
		s.groups[g.Key] = g
	}
	tx := &txRecord{Key: s.ids.key(), Kind: api.TypeGiftCardPay, WebsiteKey: c.websiteKey, Service: o.ServiceCode,
		Invoice: o.Invoice, Currency: o.Currency, Amount: paid, Status: api.StatusSuccess, SubCode: api.SubCodeProcessed,
		Created: c.now, PushURL: c.req.PushURL, PaymentKey: s.ids.key(), Provider: o.Card.Provider, Card: o.Card.Number,
		LastName: o.LastName, Email: o.Email}
	if seeded != nil {
		seeded.Balance = seeded.Balance.Sub(paid)
		s.saveCard(seeded)
	}
	return s.bookPart(c, g, tx), nil
}

// bookPart stores a payment (a whole one, or a part of a group) with its
// push and builds its response: S003 and the remainder while a group is
// not paid in full.
func (s *Sandbox) bookPart(c call, g *group, tx *txRecord) *api.Response {
	if g != nil {
		tx.Group = g.Key
		g.Paid = g.Paid.Add(tx.Amount)
		g.Parts = append(g.Parts, tx.Key)
		if g.remainder().IsPositive() {
			tx.SubCode = api.SubCodePartialPayment
		}
		s.saveGroup(g)
	}
	s.addTx(tx, echoOf(c.req))
	s.emitTx(tx, c.now)
	resp := s.txResponse(tx, c.now)
	if g != nil && g.remainder().IsPositive() {
		resp.RequiredAction = &api.RequiredAction{
			Name:        "Redirect",
			RedirectURL: c.base + "/sandbox/giftcard/" + g.Key,
			PayRemainderDetails: &api.PayRemainderDetails{
				RemainderAmount: api.NewAmount(g.remainder()), Currency: g.Currency, GroupTransaction: g.Key,
			},
		}
	}
	return resp
}

func (s *Sandbox) giftCardRefund(c call, o api.GiftCardRefund) (*api.Response, error) {
	orig := s.txs[o.OriginalTransactionKey]
	if orig == nil || orig.WebsiteKey != c.websiteKey || orig.Kind != api.TypeGiftCardPay {
		return nil, refuse(api.FieldOriginalKey, "no gift card payment (V238) with this key")
	}
	if !strings.EqualFold(orig.Service, o.ServiceCode) {
		return nil, refuse(api.FieldOriginalKey, "is a payment of service "+orig.Service+", not "+o.ServiceCode)
	}
	if o.Currency != orig.Currency {
		return nil, refuse(api.FieldCurrency, "must be the payment's currency "+orig.Currency)
	}
	rule := api.GiftCardOriginal{
		Amount: orig.Amount, Refunded: orig.Refunded, Provider: orig.Provider,
		HasContact: orig.LastName != "" && orig.Email != "", PartialRefunds: s.cfg.Merchant.PartialRefundsFor(orig.Provider),
	}
	if fe := api.PartialRefundRule(rule, o.Amount, o.LastName, o.Email); len(fe) > 0 {
		return nil, &refusal{fields: fe}
	}
	orig.Refunded = orig.Refunded.Add(o.Amount)
	s.saveTx(orig)
	if cd := s.cards[cardID(orig.Provider, orig.Card)]; cd != nil {
		cd.Balance = cd.Balance.Add(o.Amount)
		s.saveCard(cd)
	}
	tx := &txRecord{Key: s.ids.key(), Kind: api.TypeGiftCardRefund, WebsiteKey: c.websiteKey, Service: orig.Service,
		Invoice: o.Invoice, Currency: orig.Currency, Amount: o.Amount, Status: api.StatusSuccess, SubCode: api.SubCodeProcessed,
		Created: c.now, PushURL: c.req.PushURL, PaymentKey: orig.PaymentKey, Original: orig.Key,
		Provider: orig.Provider, Card: orig.Card}
	s.addTx(tx, echoOf(c.req))
	s.emitTx(tx, c.now)
	return s.txResponse(tx, c.now), nil
}

// payRemainderByCard pays (part of) a group's remainder with a card, as
// the remainder page does.
func (s *Sandbox) payRemainderByCard(groupKey, base string, card api.Card, service string) (*api.Response, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed {
		return nil, ErrClosed
	}
	g := s.groups[groupKey]
	if g == nil {
		return nil, fmt.Errorf("gift card group %s: %w", groupKey, ErrUnknownKey)
	}
	if service == "" {
		service = g.Service
	}
	c := call{websiteKey: g.WebsiteKey, req: g.request(), base: base, now: s.now()}
	op := api.GiftCardPay{ServiceCode: service, Currency: g.Currency, Invoice: g.Invoice, Amount: g.remainder(),
		Card: card, GroupTransaction: g.Key}
	if err := op.Validate(s.rules); err != nil {
		return nil, err
	}
	resp, err := s.giftCardPay(c, op)
	_ = s.flushLocked()
	s.wakeUp()
	return resp, err
}

// payRemainderByTransfer settles a group's remainder with the bank
// transfer stand-in: a C001 transaction of the "transfer" service, paid at
// once.
func (s *Sandbox) payRemainderByTransfer(groupKey, base string) (*api.Response, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed {
		return nil, ErrClosed
	}
	g := s.groups[groupKey]
	if g == nil {
		return nil, fmt.Errorf("gift card group %s: %w", groupKey, ErrUnknownKey)
	}
	rem := g.remainder()
	if !rem.IsPositive() {
		return nil, refuse(api.FieldOriginalKey, "the payment is complete: nothing remains to pay")
	}
	now := s.now()
	c := call{websiteKey: g.WebsiteKey, req: g.request(), base: base, now: now}
	tx := &txRecord{Key: s.ids.key(), Kind: kindTransfer, WebsiteKey: g.WebsiteKey, Service: serviceTransfer,
		Invoice: g.Invoice, Currency: g.Currency, Amount: rem, Status: api.StatusSuccess, SubCode: api.SubCodeProcessed,
		Created: now, PushURL: g.PushURL, PaymentKey: s.ids.key()}
	resp := s.bookPart(c, g, tx)
	_ = s.flushLocked()
	s.wakeUp()
	return resp, nil
}

// groupView is what the remainder page shows.
type groupView struct {
	Key, Invoice, Currency, Service string
	Total, Paid, Remainder          decimal.Decimal
	Parts                           []partView
	ReturnURL                       string
}

type partView struct {
	Key, Type, Service, Card string
	Amount                   decimal.Decimal
	Created                  time.Time
}

func (s *Sandbox) groupView(key string) (groupView, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	g := s.groups[key]
	if g == nil {
		return groupView{}, false
	}
	v := groupView{Key: g.Key, Invoice: g.Invoice, Currency: g.Currency, Service: g.Service, Total: g.Total, Paid: g.Paid,
		Remainder: g.remainder(), ReturnURL: g.ReturnURL}
	for _, k := range g.Parts {
		if t := s.txs[k]; t != nil {
			v.Parts = append(v.Parts, partView{Key: t.Key, Type: t.Kind, Service: t.Service, Card: maskCard(t.Card), Amount: t.Amount, Created: t.Created})
		}
	}
	return v, true
}

// maskCard shows the last four digits of a card number.
func maskCard(n string) string {
	if len(n) <= 4 {
		return n
	}
	return strings.Repeat("•", 4) + n[len(n)-4:]
}

// request stands in for the request of a part the remainder page pays: it
// carries the group's push URL and echoed fields.
func (g *group) request() *api.Request {
	return &api.Request{PushURL: g.PushURL, Order: g.Echo.Order,
		AdditionalParameters: &api.ParamList{List: g.Echo.Additional}, CustomParameters: &api.ParamList{List: g.Echo.Custom}}
}
