package sandbox

import (
	"context"
	"encoding/json"
	"net/http"
	"strings"
	"testing"

	"paydesk/api"
)

var (
	cardA25  = api.Card{Provider: api.ProviderA, Number: "6064360000000000011", PIN: "1234"}
	cardA100 = api.Card{Provider: api.ProviderA, Number: "6064360000000000029", PIN: "2345"}
	cardB50  = api.Card{Provider: api.ProviderB, Number: "6299440000000000015", PIN: "1111"}
	cardB10  = api.Card{Provider: api.ProviderB, Number: "6299440000000000023", PIN: "2222"}
	cardC75  = api.Card{Provider: api.ProviderC, Number: "5010000000000000017", PIN: "4321"}
	custom20 = api.Card{Provider: api.ProviderCustom, Number: "9990000000000000010", PIN: "0000"}
)

func (e *env) balance(c api.Card) string {
	e.t.Helper()
	for _, ci := range e.sb.Cards() {
		if ci.Number == c.Number {
			return ci.Balance.StringFixed(2)
		}
	}
	e.t.Fatalf("card %s not seeded", c.Number)
	return ""
}

// State table "gift card Pay, balance covers the whole amount" and Events
// "Gift card pay push", for every service code.
func TestGiftCardPayFullCover(t *testing.T) {
	e := newEnv(t, nil)
	for _, tc := range []struct {
		service string
		card    api.Card
		amount  string
		left    string
	}{
		{"vouchera", cardA25, "5", "20.00"},
		{"voucherb", cardB50, "12.5", "37.50"},
		{"voucherc", cardC75, "75", "0.00"},
		{"customgiftcard", custom20, "19.99", "0.01"},
		{"customgiftcard2", testCard("1000"), "10", ""},
		{"customgiftcard3", api.Card{Provider: api.ProviderA, Number: api.TestCardNumber, PIN: "99999"}, "999.99", ""},
	} {
		t.Run(tc.service, func(t *testing.T) {
			resp, err := e.giftPay(tc.service, tc.card, tc.amount)
			if err != nil {
				t.Fatalf("Pay: %v", err)
			}
			wantStatus(t, resp, api.StatusSuccess, api.SubCodeProcessed)
			if resp.Type() != api.TypeGiftCardPay || resp.MutationType != api.MutationGiftCard || resp.RequiredAction != nil ||
				resp.RelatedTransactions != nil || resp.ServiceCode != tc.service || !resp.AmountDebit.Equal(dec(tc.amount)) ||
				resp.Invoice != "INV-GC" || resp.PaymentKey == nil {
				t.Fatalf("response %+v", resp)
			}
			tp := wantTxPush(t, e.rc.nextFor(resp.Key), resp.Key, api.TypeGiftCardPay, api.MutationGiftCard, api.StatusSuccess, api.SubCodeProcessed)
			if tp.RelatedTransactions != nil || !tp.AmountDebit.Equal(dec(tc.amount)) || tp.ServiceCode != tc.service {
				t.Fatalf("push %+v", tp)
			}
			if tc.left != "" {
				if got := e.balance(tc.card); got != tc.left {
					t.Errorf("balance %s, want %s", got, tc.left)
				}
			}
		})
	}
}

func TestGiftCardRefusals(t *testing.T) {
	e := newEnv(t, nil)
	for _, tc := range []struct {
		name   string
		card   api.Card
		amount string
		param  string
	}{
		{"unknown card", api.Card{Provider: api.ProviderA, Number: "6064360000000000999", PIN: "1"}, "1", api.PVoucherACardNumber},
		{"wrong PIN", api.Card{Provider: api.ProviderB, Number: cardB50.Number, PIN: "9999"}, "1", api.PVoucherBPIN},
		{"card of another provider", api.Card{Provider: api.ProviderC, Number: cardB50.Number, PIN: cardB50.PIN}, "1", api.PVoucherCCardnumber},
		{"test card with a PIN that is no amount", testCard("10.00"), "1", api.PVoucherBPIN},
		{"test card with balance 0", testCard("0"), "1", api.PVoucherBCardnumber},
	} {
		t.Run(tc.name, func(t *testing.T) {
			resp, err := e.giftPay("voucherb", tc.card, tc.amount)
			wantRefused(t, resp, err, tc.param)
		})
	}
	e.sb.mu.Lock()
	n := len(e.sb.txs)
	e.sb.mu.Unlock()
	if n != 0 {
		t.Fatalf("refused payments created %d transactions", n)
	}
}

// State table "gift card Pay, balance below amount" and the partial payment
// push: the card is used up, 190/S003 with the remainder; PayRemainder
// pays the rest as a further part linked by partialpayment.
func TestGiftCardPartialThenPayRemainder(t *testing.T) {
	e := newEnv(t, nil)
	resp, err := e.giftPay("vouchera", testCard("1000"), "50")
	if err != nil {
		t.Fatal(err)
	}
	wantStatus(t, resp, api.StatusSuccess, api.SubCodePartialPayment)
	group := resp.Related(api.RelationPartialPayment)
	wantKey(t, group)
	ra := resp.RequiredAction
	if ra == nil || ra.Name != "Redirect" || ra.RedirectURL != e.srv.URL+"/sandbox/giftcard/"+group || ra.PayRemainderDetails == nil ||
		!ra.PayRemainderDetails.RemainderAmount.Equal(dec("40")) || ra.PayRemainderDetails.Currency != "EUR" ||
		ra.PayRemainderDetails.GroupTransaction != group {
		t.Fatalf("RequiredAction %+v", ra)
	}
	if !resp.AmountDebit.Equal(dec("10")) || resp.Type() != api.TypeGiftCardPay {
		t.Fatalf("a part carries what the card paid: %+v", resp)
	}
	tp := wantTxPush(t, e.rc.nextFor(resp.Key), resp.Key, api.TypeGiftCardPay, api.MutationGiftCard, api.StatusSuccess, api.SubCodePartialPayment)
	if len(tp.RelatedTransactions) != 1 || tp.RelatedTransactions[0].RelationType != api.RelationPartialPayment || tp.RelatedTransactions[0].RelatedTransactionKey != group {
		t.Fatalf("partial push relations %+v", tp.RelatedTransactions)
	}

	rem := func(card api.Card, amount string) (*api.Response, error) {
		return e.client.Send(context.Background(), api.GiftCardPay{ServiceCode: "vouchera", Currency: "EUR", Invoice: "INV-GC",
			Amount: dec(amount), Card: card, GroupTransaction: group})
	}
	r2, err := rem(cardA100, "40.01")
	wantRefused(t, r2, err, api.FieldAmountDebit)
	r2, err = rem(cardA100, "40")
	if err != nil {
		t.Fatalf("PayRemainder: %v", err)
	}
	wantStatus(t, r2, api.StatusSuccess, api.SubCodeProcessed)
	if r2.RequiredAction != nil || r2.Related(api.RelationPartialPayment) != group || !r2.AmountDebit.Equal(dec("40")) {
		t.Fatalf("PayRemainder response %+v", r2)
	}
	wantTxPush(t, e.rc.nextFor(r2.Key), r2.Key, api.TypeGiftCardPay, api.MutationGiftCard, api.StatusSuccess, api.SubCodeProcessed)
	if got := e.balance(cardA100); got != "60.00" {
		t.Errorf("balance %s, want 60.00", got)
	}
	r2, err = rem(cardA100, "1")
	wantRefused(t, r2, err, api.FieldOriginalKey)
	r2, err = e.client.Send(context.Background(), api.GiftCardPay{ServiceCode: "vouchera", Currency: "EUR", Invoice: "X",
		Amount: dec("1"), Card: cardA100, GroupTransaction: "0123456789ABCDEF0123456789ABCDEF"})
	wantRefused(t, r2, err, api.FieldOriginalKey)
}

// The remainder page: another card that does not cover it (another part),
// then the bank transfer stand-in for the rest.
func TestGiftCardRemainderPage(t *testing.T) {
	e := newEnv(t, nil)
	resp, err := e.giftPay("voucherb", cardB10, "50")
	if err != nil {
		t.Fatal(err)
	}
	e.rc.nextFor(resp.Key)
	if got := e.balance(cardB10); got != "0.00" {
		t.Fatalf("the card is not used up: %s", got)
	}
	url := resp.RequiredAction.RedirectURL
	if page := get(t, url); !strings.Contains(page, "40.00") || !strings.Contains(page, "/transfer") {
		t.Fatalf("remainder page:\n%s", page)
	}
	out := postJSON(t, url+"/card", `{"Provider":"A","Number":"6064360000000000011","Pin":"1234"}`, http.StatusOK)
	part, err := api.DecodeResponse([]byte(out))
	if err != nil {
		t.Fatal(err)
	}
	wantStatus(t, part, api.StatusSuccess, api.SubCodePartialPayment)
	if !part.AmountDebit.Equal(dec("25")) || !part.RequiredAction.PayRemainderDetails.RemainderAmount.Equal(dec("15")) {
		t.Fatalf("card part %s", out)
	}
	e.rc.nextFor(part.Key)
	postJSON(t, url+"/card", `{"Provider":"A","Number":"6064360000000000011","Pin":"1234"}`, http.StatusUnprocessableEntity) // used up now

	out = postJSON(t, url+"/transfer", "", http.StatusOK)
	tr, err := api.DecodeResponse([]byte(out))
	if err != nil {
		t.Fatal(err)
	}
	wantStatus(t, tr, api.StatusSuccess, api.SubCodeProcessed)
	if tr.Type() != typeTransfer || tr.ServiceCode != serviceTransfer || !tr.AmountDebit.Equal(dec("15")) || tr.Related(api.RelationPartialPayment) != resp.Related(api.RelationPartialPayment) {
		t.Fatalf("transfer part %s", out)
	}
	tp := wantTxPush(t, e.rc.nextFor(tr.Key), tr.Key, typeTransfer, api.MutationDeferred, api.StatusSuccess, api.SubCodeProcessed)
	if tp.RelatedTransactions[0].RelationType != api.RelationPartialPayment {
		t.Fatalf("transfer push %+v", tp)
	}
	if page := get(t, url); !strings.Contains(page, "Paid in full") {
		t.Fatalf("page after paying:\n%s", page)
	}
	postJSON(t, url+"/transfer", "", http.StatusUnprocessableEntity)
}

// State table "gift card Refund" and Events "Gift card refund push", with
// the document's three conditions for partial refunds.
func TestGiftCardRefund(t *testing.T) {
	ctx := context.Background()
	refund := func(e *env, service, key, amount, last, email string) (*api.Response, error) {
		return e.client.Send(ctx, api.GiftCardRefund{ServiceCode: service, Currency: "EUR", Invoice: "INV-GR",
			OriginalTransactionKey: key, Amount: dec(amount), LastName: last, Email: email})
	}
	t.Run("full refund restores the balance", func(t *testing.T) {
		e := newEnv(t, nil)
		pay, err := e.giftPay("vouchera", cardA25, "20")
		if err != nil {
			t.Fatal(err)
		}
		e.rc.nextFor(pay.Key)
		resp, err := refund(e, "vouchera", pay.Key, "20", "", "")
		if err != nil {
			t.Fatalf("refund: %v", err)
		}
		wantStatus(t, resp, api.StatusSuccess, api.SubCodeProcessed)
		if resp.Type() != api.TypeGiftCardRefund || resp.MutationType != api.MutationGiftCard || resp.Related(api.RelationRefund) != pay.Key ||
			!resp.AmountCredit.Equal(dec("20")) || resp.AmountDebit != nil {
			t.Fatalf("refund response %+v", resp)
		}
		tp := wantTxPush(t, e.rc.nextFor(resp.Key), resp.Key, api.TypeGiftCardRefund, api.MutationGiftCard, api.StatusSuccess, "")
		if tp.RelatedTransactions[0].RelationType != api.RelationRefund || tp.RelatedTransactions[0].RelatedTransactionKey != pay.Key {
			t.Fatalf("refund push %+v", tp)
		}
		if got := e.balance(cardA25); got != "25.00" {
			t.Errorf("balance after refund %s, want 25.00", got)
		}
		r, err := refund(e, "vouchera", pay.Key, "0.01", "", "")
		wantRefused(t, r, err, api.FieldAmountCredit)
		r, err = refund(e, "voucherb", pay.Key, "1", "", "")
		wantRefused(t, r, err, api.FieldOriginalKey)
	})
	t.Run("partial refunds", func(t *testing.T) {
		for _, tc := range []struct {
			name           string
			partialRefunds bool
			card           api.Card
			payContact     bool
			last, email    string
			refusedParam   string // "" = accepted
		}{
			{"provider A never", true, cardA100, true, "Jansen", "jan@example.com", api.FieldAmountCredit},
			{"provider B not configured", false, cardB50, true, "Jansen", "jan@example.com", api.FieldAmountCredit},
			{"provider B without contact", true, cardB50, false, "", "", api.PLastName},
			{"provider B, contact on the refund", true, cardB50, false, "Jansen", "jan@example.com", ""},
			{"provider B, contact on the payment", true, cardB50, true, "", "", ""},
		} {
			t.Run(tc.name, func(t *testing.T) {
				e := newEnv(t, func(c *Config) {
					if tc.partialRefunds {
						c.Merchant.PartialRefunds = []api.Provider{api.ProviderB}
					}
				})
				op := api.GiftCardPay{ServiceCode: "voucherb", Currency: "EUR", Invoice: "INV", Amount: dec("30"), Card: tc.card}
				if tc.payContact {
					op.LastName, op.Email = "Jansen", "jan@example.com"
				}
				pay, err := e.client.Send(ctx, op)
				if err != nil {
					t.Fatal(err)
				}
				e.rc.nextFor(pay.Key)
				resp, err := refund(e, "voucherb", pay.Key, "10", tc.last, tc.email)
				if tc.refusedParam != "" {
					wantRefused(t, resp, err, tc.refusedParam)
					return
				}
				if err != nil {
					t.Fatalf("partial refund: %v", err)
				}
				e.rc.nextFor(resp.Key)
				if got := e.balance(tc.card); got != "30.00" {
					t.Errorf("balance %s, want 30.00 (50 - 30 + 10)", got)
				}
				r, err := refund(e, "voucherb", pay.Key, "20.01", tc.last, tc.email)
				wantRefused(t, r, err, api.FieldAmountCredit)
			})
		}
	})
}

func TestCardsListing(t *testing.T) {
	e := newEnv(t, nil)
	cards := e.sb.Cards()
	if len(cards) != 6 || cards[0].Provider != api.ProviderA || cards[5].Provider != api.ProviderCustom {
		t.Fatalf("Cards() = %+v", cards)
	}
	var listed []map[string]any
	if err := json.Unmarshal([]byte(get(t, e.srv.URL+"/sandbox/cards")), &listed); err != nil || len(listed) != 6 {
		t.Fatalf("/sandbox/cards: %v %v", listed, err)
	}
	if page := get(t, e.srv.URL+"/"); !strings.Contains(page, cardC75.Number) {
		t.Fatalf("index page lacks the cards")
	}
}
