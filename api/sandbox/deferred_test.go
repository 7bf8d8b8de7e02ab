package sandbox

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"paydesk/api"
)

// State table row 1 and Events "Reserve push": Reserve → 791/S002 with the
// redirect; the customer approves → 190 and the DataRequest push.
func TestReserveThenApproveOnThePage(t *testing.T) {
	e := newEnv(t, nil)
	ctx := context.Background()
	resp, err := e.client.Send(ctx, reserveOp("INV-1", "Jansen"))
	if err != nil {
		t.Fatalf("Reserve: %v", err)
	}
	wantStatus(t, resp, api.StatusPendingProcessing, api.SubCodeRedirect)
	wantKey(t, resp.Key)
	ra := resp.RequiredAction
	if ra == nil || ra.Name != "Redirect" || ra.TypeDeprecated != 0 || ra.RedirectURL != e.srv.URL+"/sandbox/checkout/"+resp.Key || ra.PayRemainderDetails != nil {
		t.Fatalf("RequiredAction = %+v", ra)
	}
	if resp.ServiceCode != api.ServiceDeferred || resp.MutationType != 0 || resp.Services != nil || resp.TransactionType != nil ||
		resp.PaymentKey != nil || resp.RelatedTransactions != nil || resp.Invoice != "" || resp.AmountDebit != nil || resp.RequestErrors != nil {
		t.Fatalf("Reserve response carries more than the document lists: %+v", resp)
	}
	if !responseTime.MatchString(resp.Status.DateTime.String()) {
		t.Errorf("response DateTime %q should have no offset", resp.Status.DateTime)
	}
	e.rc.none(50 * time.Millisecond) // 791 itself is not pushed

	// The page escapes what the shop sent.
	page := get(t, ra.RedirectURL)
	if !strings.Contains(page, "Blue &lt;b&gt;toy&lt;/b&gt;") || strings.Contains(page, "<b>toy") || !strings.Contains(page, "/approve") {
		t.Fatalf("checkout page does not show the escaped lines and buttons:\n%s", page)
	}

	out := postJSON(t, ra.RedirectURL+"/approve", "", http.StatusOK)
	var res checkoutResult
	if err := json.Unmarshal([]byte(out), &res); err != nil || res.Status != api.StatusSuccess || !reservationForm.MatchString(res.ReservationNumber) {
		t.Fatalf("approve answered %s (%v)", out, err)
	}
	dp := wantDataPush(t, e.rc.nextFor(resp.Key), resp.Key, api.ActionReserve, api.StatusSuccess)
	if len(dp.Services) != 1 || dp.Services[0].Name != api.ServiceDeferred || dp.Services[0].Action != nil ||
		dp.Services[0].VersionAsProperty == nil || *dp.Services[0].VersionAsProperty != 1 ||
		len(dp.Services[0].Parameters) != 1 || string(dp.Services[0].Parameters[0].Value) != res.ReservationNumber {
		t.Fatalf("Reserve push services = %+v", dp.Services)
	}
	if dp.Invoice != "INV-1" || dp.Currency != "EUR" {
		t.Errorf("Reserve push invoice/currency = %q/%q", dp.Invoice, dp.Currency)
	}
	// A second approve is refused: the flow is over.
	postJSON(t, ra.RedirectURL+"/approve", "", http.StatusConflict)
	if err := e.sb.Approve(ctx, resp.Key); !errors.Is(err, ErrNotPending) {
		t.Fatalf("second Approve: %v", err)
	}
	if err := e.sb.Approve(ctx, "NOPE"); !errors.Is(err, ErrUnknownKey) {
		t.Fatalf("Approve of an unknown key: %v", err)
	}
}

// Decline on the page, and the risk rule (last name Decline) on approve,
// both end in 690 pushed with ActionCode Reserve; neither can be captured.
func TestDeclineAndRiskRule(t *testing.T) {
	e := newEnv(t, nil)
	ctx := context.Background()
	for _, tc := range []struct {
		name, lastName string
		approve        bool
	}{
		{"customer declines", "Jansen", false},
		{"risk check declines", "Decline", true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			resp, err := e.client.Send(ctx, reserveOp("INV-D", tc.lastName))
			if err != nil {
				t.Fatal(err)
			}
			verb := "/decline"
			if tc.approve {
				verb = "/approve"
			}
			out := postJSON(t, resp.RequiredAction.RedirectURL+verb, "", http.StatusOK)
			if !strings.Contains(out, `"Status":690`) {
				t.Fatalf("answer %s", out)
			}
			dp := wantDataPush(t, e.rc.nextFor(resp.Key), resp.Key, api.ActionReserve, api.StatusRejected)
			if dp.Services != nil {
				t.Errorf("a declined Reserve push has no reservation number: %+v", dp.Services)
			}
		})
	}
}

func TestCaptureFullPartialAndOverCapture(t *testing.T) {
	e := newEnv(t, nil)
	_, number := e.reserved("INV-2")

	// Partial: one A1 and the shipping fee.
	resp, err := e.capture(number, "14.95", api.CaptureLine{ArticleNumber: "A1", Quantity: 1}, api.CaptureLine{ArticleNumber: "SHIP", Quantity: 1})
	if err != nil {
		t.Fatalf("partial capture: %v", err)
	}
	wantStatus(t, resp, api.StatusSuccess, api.SubCodeProcessed)
	if resp.Type() != api.TypeDeferredPay || resp.MutationType != api.MutationDeferred || resp.Invoice != "INV-CAP" ||
		resp.Currency != "EUR" || !resp.AmountDebit.Equal(dec("14.95")) || resp.PaymentKey == nil || resp.RequiredAction != nil {
		t.Fatalf("capture response %+v", resp)
	}
	inv1 := resp.Param(api.PInvoiceNumber)
	if len(resp.Services) != 1 || resp.Services[0].Action != nil || resp.Services[0].VersionAsProperty != nil || len(inv1) != 8 {
		t.Fatalf("capture services %+v", resp.Services)
	}
	tp := wantTxPush(t, e.rc.nextFor(resp.Key), resp.Key, api.TypeDeferredPay, api.MutationDeferred, api.StatusSuccess, api.SubCodeProcessed)
	if p := tp.Services; len(p) != 1 || *p[0].VersionAsProperty != 1 || string(p[0].Parameters[0].Value) != inv1 || !tp.AmountDebit.Equal(dec("14.95")) {
		t.Fatalf("capture push services %+v amount %v", p, tp.AmountDebit)
	}

	// Over-capture: only one A1 is left.
	resp, err = e.capture(number, "20", api.CaptureLine{ArticleNumber: "A1", Quantity: 2})
	wantRefused(t, resp, err, api.PArticleQuantity)
	resp, err = e.capture(number, "1", api.CaptureLine{ArticleNumber: "ZZ", Quantity: 1})
	wantRefused(t, resp, err, api.PArticleNumber)
	// Amount not matching the lines.
	resp, err = e.capture(number, "9", api.CaptureLine{ArticleNumber: "A1", Quantity: 1})
	wantRefused(t, resp, err, api.FieldAmountDebit)
	// A full capture must take exactly what remains: 10 + 5.50.
	resp, err = e.capture(number, "30.45")
	wantRefused(t, resp, err, api.FieldAmountDebit)
	resp, err = e.capture(number, "15.5")
	if err != nil {
		t.Fatalf("full capture of the rest: %v", err)
	}
	if inv2 := resp.Param(api.PInvoiceNumber); inv2 == inv1 || inv2 == "" {
		t.Fatalf("invoice numbers not unique: %q %q", inv1, inv2)
	}
	e.rc.nextFor(resp.Key)
	resp, err = e.capture(number, "1")
	wantRefused(t, resp, err, api.PReservationNumber)
	resp, err = e.capture("6c24888a-24ba-42bf-be19-7ceec6f0ee23", "1")
	wantRefused(t, resp, err, api.PReservationNumber)
}

func TestCaptureOfPendingReservationRefused(t *testing.T) {
	e := newEnv(t, nil)
	if _, err := e.client.Send(context.Background(), reserveOp("INV-P", "Jansen")); err != nil {
		t.Fatal(err)
	}
	var number string
	e.sb.mu.Lock()
	for n := range e.sb.resByNumber {
		number = n
	}
	e.sb.mu.Unlock()
	resp, err := e.capture(number, "30.45")
	wantRefused(t, resp, err, api.PReservationNumber)
}

func TestCancelWholeAndRemainder(t *testing.T) {
	e := newEnv(t, nil)
	ctx := context.Background()
	cancel := func(number string) (*api.Response, error) {
		return e.client.Send(ctx, api.CancelReservation{Currency: "EUR", Invoice: "INV-C", ReservationNumber: number})
	}

	_, whole := e.reserved("INV-C1")
	resp, err := cancel(whole)
	if err != nil {
		t.Fatalf("cancel: %v", err)
	}
	wantStatus(t, resp, api.StatusSuccess, api.SubCodeProcessed)
	if resp.MutationType != 0 || resp.Services != nil || resp.TransactionType != nil || resp.ServiceCode != api.ServiceDeferred {
		t.Fatalf("cancel response %+v", resp)
	}
	dp := wantDataPush(t, e.rc.nextFor(resp.Key), resp.Key, api.ActionCancelReservation, api.StatusSuccess)
	if dp.Services != nil {
		t.Errorf("CancelReservation push services %+v, want null", dp.Services)
	}
	r2, err := e.capture(whole, "30.45")
	wantRefused(t, r2, err, api.PReservationNumber)
	r2, err = cancel(whole)
	wantRefused(t, r2, err, api.PReservationNumber)

	// The unshipped remainder after a partial shipment.
	_, partly := e.reserved("INV-C2")
	if r, err := e.capture(partly, "20", api.CaptureLine{ArticleNumber: "A1", Quantity: 2}); err != nil {
		t.Fatal(err)
	} else {
		e.rc.nextFor(r.Key)
	}
	resp, err = cancel(partly)
	if err != nil {
		t.Fatalf("cancel remainder: %v", err)
	}
	e.rc.nextFor(resp.Key)
	e.sb.mu.Lock()
	res := e.sb.resByNumber[partly]
	if res.State != resClosed || res.Lines[0].Captured != 2 || res.Lines[1].Cancelled != 1 || res.Lines[2].Cancelled != 1 {
		t.Errorf("ledger after cancelling the remainder: %+v", res.Lines)
	}
	e.sb.mu.Unlock()

	// Nothing left: everything captured.
	_, full := e.reserved("INV-C3")
	if r, err := e.capture(full, "30.45"); err != nil {
		t.Fatal(err)
	} else {
		e.rc.nextFor(r.Key)
	}
	r2, err = cancel(full)
	wantRefused(t, r2, err, api.PReservationNumber)
}

func TestUpdateReservation(t *testing.T) {
	e := newEnv(t, nil)
	ctx := context.Background()
	_, number := e.reserved("INV-U")
	update := func(u api.UpdateReservation) (*api.Response, error) {
		u.Currency, u.Invoice, u.ReservationNumber = "EUR", "INV-U", number
		return e.client.Send(ctx, u)
	}
	lines := func(a1Qty int, a1Price string) []api.Article {
		return []api.Article{
			{Number: "A1", Title: "Blue toy", Price: dec(a1Price), Quantity: a1Qty, Vat: dec("21")},
			{Number: "SHIP", Title: "Shipping", Type: api.ArticleTypeShipment, Price: dec("4.95"), Quantity: 1, Vat: dec("21")},
		}
	}
	// Capture one A1 first; it must survive every update.
	r, err := e.capture(number, "10", api.CaptureLine{ArticleNumber: "A1", Quantity: 1})
	if err != nil {
		t.Fatal(err)
	}
	e.rc.nextFor(r.Key)

	// Raising the amount is refused (30.45 reserved).
	resp, err := update(api.UpdateReservation{Articles: lines(3, "10")})
	wantRefused(t, resp, err, api.PArticlePrice)
	// A captured line cannot go below what was captured, change price or vanish.
	resp, err = update(api.UpdateReservation{Articles: lines(0, "10")[1:]})
	wantRefused(t, resp, err, api.PArticleNumber)
	resp, err = update(api.UpdateReservation{Articles: lines(1, "9")})
	wantRefused(t, resp, err, api.PArticlePrice)

	// Lowering: drop B2, keep two A1 → 24.95.
	resp, err = update(api.UpdateReservation{Articles: lines(2, "10"), Billing: api.Address{City: "Sneek"}})
	if err != nil {
		t.Fatalf("update: %v", err)
	}
	wantStatus(t, resp, api.StatusSuccess, api.SubCodeProcessed)
	if resp.Services != nil || resp.MutationType != 0 {
		t.Fatalf("update response %+v", resp)
	}
	dp := wantDataPush(t, e.rc.nextFor(resp.Key), resp.Key, api.ActionUpdateReservation, api.StatusSuccess)
	if dp.Services != nil {
		t.Errorf("UpdateReservation push services %+v, want null", dp.Services)
	}

	// A changed address that the risk check declines: 690, nothing changes.
	resp, err = update(api.UpdateReservation{Billing: api.Address{LastName: "Decline", Street: "Elders"}})
	var rej *api.RejectedError
	if !errors.As(err, &rej) || resp.Status.Code.Code != api.StatusRejected {
		t.Fatalf("want 690, got %v %+v", err, resp)
	}
	wantDataPush(t, e.rc.nextFor(resp.Key), resp.Key, api.ActionUpdateReservation, api.StatusRejected)
	e.sb.mu.Lock()
	res := e.sb.resByNumber[number]
	if res.Billing.LastName != "Jansen" || res.Billing.City != "Sneek" || len(res.Lines) != 2 {
		t.Errorf("a declined update changed the reservation: %+v", res)
	}
	e.sb.mu.Unlock()

	// The rest of the updated reservation: one A1 and shipping.
	if r, err := e.capture(number, "14.95"); err != nil {
		t.Fatalf("capture after update: %v", err)
	} else {
		e.rc.nextFor(r.Key)
	}
}

func TestRefundOfCapture(t *testing.T) {
	e := newEnv(t, nil)
	ctx := context.Background()
	reserveKey, number := e.reserved("INV-R")
	capResp, err := e.capture(number, "30.45")
	if err != nil {
		t.Fatal(err)
	}
	e.rc.nextFor(capResp.Key)
	refund := func(key, amount string) (*api.Response, error) {
		return e.client.Send(ctx, api.Refund{Currency: "EUR", Invoice: "INV-R", OriginalTransactionKey: key, Amount: dec(amount)})
	}
	resp, err := refund(capResp.Key, "10")
	if err != nil {
		t.Fatalf("refund: %v", err)
	}
	wantStatus(t, resp, api.StatusSuccess, api.SubCodeProcessed)
	if resp.Type() != api.TypeDeferredRefund || resp.MutationType != api.MutationDeferred || !resp.AmountCredit.Equal(dec("10")) ||
		resp.AmountDebit != nil || resp.Related(api.RelationRefund) != capResp.Key || resp.Services != nil ||
		resp.PaymentKey == nil || *resp.PaymentKey != *capResp.PaymentKey {
		t.Fatalf("refund response %+v", resp)
	}
	tp := wantTxPush(t, e.rc.nextFor(resp.Key), resp.Key, api.TypeDeferredRefund, api.MutationDeferred, api.StatusSuccess, api.SubCodeProcessed)
	if tp.Services != nil || len(tp.RelatedTransactions) != 1 || tp.RelatedTransactions[0].RelationType != api.RelationRefund ||
		tp.RelatedTransactions[0].RelatedTransactionKey != capResp.Key || !tp.AmountCredit.Equal(dec("10")) || tp.AmountDebit != nil {
		t.Fatalf("refund push %+v", tp)
	}
	// 20.45 is left: more is refused, exactly that is fine, then nothing.
	resp, err = refund(capResp.Key, "20.46")
	wantRefused(t, resp, err, api.FieldAmountCredit)
	if resp, err = refund(capResp.Key, "20.45"); err != nil {
		t.Fatalf("refund of the rest: %v", err)
	}
	e.rc.nextFor(resp.Key)
	resp, err = refund(capResp.Key, "0.01")
	wantRefused(t, resp, err, api.FieldAmountCredit)
	// Only a C700 can be refunded.
	resp, err = refund(reserveKey, "1")
	wantRefused(t, resp, err, api.FieldOriginalKey)
	resp, err = refund("0123456789ABCDEF0123456789ABCDEF", "1")
	wantRefused(t, resp, err, api.FieldOriginalKey)
}

func TestAutocaptureCapturesOnApproval(t *testing.T) {
	e := newEnv(t, func(c *Config) { c.Merchant.Autocapture = true })
	resp, err := e.client.Send(context.Background(), reserveOp("INV-AC", "Jansen"))
	if err != nil {
		t.Fatal(err)
	}
	out := postJSON(t, resp.RequiredAction.RedirectURL+"/approve", "", http.StatusOK)
	var res checkoutResult
	if err := json.Unmarshal([]byte(out), &res); err != nil || res.CaptureKey == "" {
		t.Fatalf("approve answered %s", out)
	}
	wantDataPush(t, e.rc.nextFor(resp.Key), resp.Key, api.ActionReserve, api.StatusSuccess)
	tp := wantTxPush(t, e.rc.nextFor(res.CaptureKey), res.CaptureKey, api.TypeDeferredPay, api.MutationDeferred, api.StatusSuccess, api.SubCodeProcessed)
	if !tp.AmountDebit.Equal(dec("30.45")) || tp.Invoice != "INV-AC" {
		t.Fatalf("autocapture push %+v", tp)
	}
	r, err := e.capture(res.ReservationNumber, "1")
	wantRefused(t, r, err, api.PReservationNumber)
}

func get(t *testing.T, url string) string {
	t.Helper()
	r, err := http.Get(url)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Body.Close()
	b, _ := io.ReadAll(r.Body)
	if r.StatusCode != http.StatusOK {
		t.Fatalf("GET %s: %d %s", url, r.StatusCode, b)
	}
	return string(b)
}

func postJSON(t *testing.T, url, body string, want int) string {
	t.Helper()
	r, err := http.Post(url, "application/json", strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	defer r.Body.Close()
	b, _ := io.ReadAll(r.Body)
	if r.StatusCode != want {
		t.Fatalf("POST %s: %d %s, want %d", url, r.StatusCode, b, want)
	}
	return string(b)
}

// A capture after the 14-day reservation window is accepted (the document
// says the provider may revoke the payout) and logged.
func TestCaptureAfterReservationWindowLogged(t *testing.T) {
	var clock atomic.Int64
	clock.Store(time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC).Unix())
	now := func() time.Time { return time.Unix(clock.Load(), 0) }
	var logMu sync.Mutex
	var logs []string
	e := newEnv(t, func(c *Config) {
		c.Now = now
		c.Logf = func(format string, args ...any) {
			logMu.Lock()
			logs = append(logs, fmt.Sprintf(format, args...))
			logMu.Unlock()
		}
	})
	e.rc.verifier.Now = now
	_, number := e.reserved("INV-LATE")
	clock.Add(15 * 24 * 3600)
	resp, err := e.capture(number, "30.45")
	if err != nil {
		t.Fatalf("late capture: %v", err)
	}
	wantStatus(t, resp, api.StatusSuccess, api.SubCodeProcessed)
	e.rc.nextFor(resp.Key)
	logMu.Lock()
	defer logMu.Unlock()
	for _, l := range logs {
		if strings.Contains(l, "15 days after the reservation") && strings.Contains(l, "may revoke the payout") {
			return
		}
	}
	t.Fatalf("no log line about the late capture:\n%s", strings.Join(logs, "\n"))
}
