package sandbox

import (
	"context"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/shopspring/decimal"

	"paydesk/api"
)

var testCreds = api.Credentials{WebsiteKey: "TESTWEBSITEKEY", SecretKey: "test-secret-not-real"}

// receivedPush is one push as the receiver got it.
type receivedPush struct {
	push *api.Push
	body []byte
}

// receiver is a push endpoint that verifies every push's signature over its
// own URL, as a merchant's listener does.
type receiver struct {
	t        *testing.T
	srv      *httptest.Server
	verifier api.Verifier
	mu       sync.Mutex
	failNext int // answer this many pushes with 503 first
	down     bool
	attempts int
	bad      []string
	ch       chan receivedPush
}

func newReceiver(t *testing.T) *receiver {
	t.Helper()
	rc := &receiver{t: t, verifier: api.VerifierFor(testCreds), ch: make(chan receivedPush, 1000)}
	rc.srv = httptest.NewServer(http.HandlerFunc(rc.serve))
	t.Cleanup(rc.srv.Close)
	return rc
}

func (rc *receiver) url() string { return rc.srv.URL + "/push" }

func (rc *receiver) serve(w http.ResponseWriter, r *http.Request) {
	body, _ := io.ReadAll(r.Body)
	rc.mu.Lock()
	rc.attempts++
	fail := rc.down || rc.failNext > 0
	if rc.failNext > 0 {
		rc.failNext--
	}
	rc.mu.Unlock()
	if fail {
		http.Error(w, "down", http.StatusServiceUnavailable)
		return
	}
	if _, err := rc.verifier.Verify(r.Header.Get("Authorization"), r.Method, r.Host+r.URL.Path, body); err != nil {
		rc.mu.Lock()
		rc.bad = append(rc.bad, err.Error())
		rc.mu.Unlock()
		http.Error(w, "bad signature", http.StatusUnauthorized)
		return
	}
	p, err := api.DecodePush(body)
	if err != nil {
		rc.mu.Lock()
		rc.bad = append(rc.bad, err.Error())
		rc.mu.Unlock()
		http.Error(w, "bad push", http.StatusBadRequest)
		return
	}
	rc.ch <- receivedPush{push: p, body: body}
}

func (rc *receiver) setDown(down bool) {
	rc.mu.Lock()
	rc.down = down
	rc.mu.Unlock()
}

func (rc *receiver) attemptCount() int {
	rc.mu.Lock()
	defer rc.mu.Unlock()
	return rc.attempts
}

// stuck bounds the tests' waits for a push or a state: long enough that
// only a stuck test reaches it, on a busy machine under the race detector.
const stuck = 2 * time.Minute

// next waits for the next push.
func (rc *receiver) next() receivedPush {
	rc.t.Helper()
	select {
	case p := <-rc.ch:
		return p
	case <-time.After(stuck):
		rc.mu.Lock()
		bad := rc.bad
		rc.mu.Unlock()
		rc.t.Fatalf("no push within %s (refused: %v)", stuck, bad)
	}
	return receivedPush{}
}

// nextFor waits for the push of a key, keeping others for later calls.
func (rc *receiver) nextFor(key string) receivedPush {
	rc.t.Helper()
	var others []receivedPush
	defer func() {
		for _, o := range others {
			rc.ch <- o
		}
	}()
	for i := 0; i < 50; i++ {
		p := rc.next()
		if p.push.Key() == key {
			return p
		}
		others = append(others, p)
	}
	rc.t.Fatalf("no push for %s", key)
	return receivedPush{}
}

// none asserts that no push arrives for a short while.
func (rc *receiver) none(d time.Duration) {
	rc.t.Helper()
	select {
	case p := <-rc.ch:
		rc.t.Fatalf("unexpected push %s %s", p.push.Key(), p.body)
	case <-time.After(d):
	}
}

// env is a sandbox behind a test server, a client and a push receiver.
type env struct {
	t      *testing.T
	sb     *Sandbox
	srv    *httptest.Server
	client *api.Client
	rc     *receiver
	cfg    Config
	stop   func()
}

func newEnv(t *testing.T, tweak func(*Config)) *env {
	t.Helper()
	rc := newReceiver(t)
	cfg := Config{Credentials: []api.Credentials{testCreds}, PushURL: rc.url(), RetryBase: 5 * time.Millisecond, Seed: 7}
	if tweak != nil {
		tweak(&cfg)
	}
	e := &env{t: t, rc: rc}
	e.start(cfg)
	return e
}

func (e *env) start(cfg Config) {
	e.t.Helper()
	e.cfg = cfg
	sb, err := New(cfg)
	if err != nil {
		e.t.Fatalf("New: %v", err)
	}
	e.sb = sb
	e.srv = httptest.NewServer(sb)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- sb.Run(ctx) }()
	stopped := false
	e.stop = func() {
		if stopped {
			return
		}
		stopped = true
		cancel()
		if err := <-done; err != nil {
			e.t.Errorf("Run: %v", err)
		}
		e.srv.Close()
		if err := sb.Close(); err != nil {
			e.t.Errorf("Close: %v", err)
		}
	}
	e.t.Cleanup(e.stop)
	cl, err := api.NewClient(api.Config{BaseURL: e.srv.URL, Credentials: testCreds, Now: cfg.Now})
	if err != nil {
		e.t.Fatal(err)
	}
	e.client = cl
}

func dec(s string) decimal.Decimal { return decimal.RequireFromString(s) }

// reserveOp is a valid Reserve of 2×A1 at 10, 1×B2 at 5.50 and a 4.95
// shipping fee: 30.45 in all.
func reserveOp(invoice, lastName string) api.Reserve {
	return api.Reserve{
		Currency: "EUR", Invoice: invoice, ClientIP: api.ClientIP{Type: api.IPv4, Address: "192.0.2.10"},
		Articles: []api.Article{
			{Number: "A1", Title: "Blue <b>toy</b>", Type: api.ArticleTypeGeneral, Price: dec("10"), Quantity: 2, Vat: dec("21")},
			{Number: "B2", Title: "Red ball", Price: dec("5.50"), Quantity: 1, Vat: dec("21")},
			{Number: "SHIP", Title: "Shipping", Type: api.ArticleTypeShipment, Price: dec("4.95"), Quantity: 1, Vat: dec("21")},
		},
		Billing: api.Address{FirstName: "Jan", LastName: lastName, Street: "Hoofdstraat", HouseNumber: "1", PostalCode: "1234AB",
			City: "Heerenveen", Country: "NL", Email: "jan@example.com", PhoneNumber: "0612345678"},
		ShippingSameAsBilling: true,
		Customer:              api.Customer{Gender: 1, OperatingCountry: "NL", Pno: "01011990"},
	}
}

// reserved makes a reservation, approves it and returns the Reserve key
// and the reservation number, consuming the Reserve push.
func (e *env) reserved(invoice string) (key, number string) {
	e.t.Helper()
	resp, err := e.client.Send(context.Background(), reserveOp(invoice, "Jansen"))
	if err != nil {
		e.t.Fatalf("Reserve: %v", err)
	}
	if err := e.sb.Approve(context.Background(), resp.Key); err != nil {
		e.t.Fatalf("Approve: %v", err)
	}
	p := e.rc.nextFor(resp.Key)
	return resp.Key, p.push.Param(api.PReservationNumber)
}

func (e *env) capture(number, amount string, lines ...api.CaptureLine) (*api.Response, error) {
	return e.client.Send(context.Background(), api.Capture{Currency: "EUR", Invoice: "INV-CAP", ReservationNumber: number, Amount: dec(amount), Lines: lines})
}

func (e *env) giftPay(service string, card api.Card, amount string) (*api.Response, error) {
	return e.client.Send(context.Background(), api.GiftCardPay{ServiceCode: service, Currency: "EUR", Invoice: "INV-GC", Amount: dec(amount), Card: card})
}

func testCard(pin string) api.Card {
	return api.Card{Provider: api.ProviderB, Number: api.TestCardNumber, PIN: pin}
}

// wantGatewayError asserts a 491 that names param.
func wantRefused(t *testing.T, resp *api.Response, err error, param string) {
	t.Helper()
	var ve *api.ValidationError
	if !errors.As(err, &ve) {
		t.Fatalf("want a 491 naming %s, got resp=%v err=%v", param, resp, err)
	}
	if resp == nil || resp.Status.Code.Code != api.StatusValidationFailure || resp.RequestErrors == nil {
		t.Fatalf("want status 491 with RequestErrors, got %+v", resp)
	}
	if !ve.Has(param) {
		t.Fatalf("491 does not name %s: %v", param, err)
	}
}

func wantStatus(t *testing.T, resp *api.Response, code int, sub string) {
	t.Helper()
	if resp == nil {
		t.Fatalf("no response")
	}
	if resp.Status.Code.Code != code || resp.Status.SubCodeString() != sub {
		t.Fatalf("status %d/%q, want %d/%q", resp.Status.Code.Code, resp.Status.SubCodeString(), code, sub)
	}
	if !resp.IsTest {
		t.Errorf("IsTest is false")
	}
}

var (
	keyShape        = regexp.MustCompile(`^[0-9A-F]{32}$`)
	responseTime    = regexp.MustCompile(`^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d$`)
	pushTime        = regexp.MustCompile(`^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d[+-]\d\d:\d\d$`)
	reservationForm = regexp.MustCompile(`^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$`)
)

func wantKey(t *testing.T, k string) {
	t.Helper()
	if !keyShape.MatchString(k) {
		t.Fatalf("key %q is not 32 upper-case hex characters", k)
	}
}

// wantTxPush checks a Transaction push's envelope.
func wantTxPush(t *testing.T, p receivedPush, key, txType string, mutation int, code int, sub string) *api.TransactionPush {
	t.Helper()
	tp := p.push.Transaction
	if tp == nil {
		t.Fatalf("push is not a Transaction: %s", p.body)
	}
	if tp.Key != key || tp.TransactionType != txType || tp.MutationType != mutation || !tp.IsTest || tp.IsCancelable {
		t.Fatalf("push %s: key/type/mutation/IsTest/IsCancelable wrong, want %s %s %d", p.body, key, txType, mutation)
	}
	if tp.Status.Code.Code != code || tp.Status.SubCodeString() != sub {
		t.Fatalf("push status %d/%q, want %d/%q", tp.Status.Code.Code, tp.Status.SubCodeString(), code, sub)
	}
	if !pushTime.MatchString(tp.Status.DateTime.String()) {
		t.Errorf("push DateTime %q has no offset", tp.Status.DateTime)
	}
	for _, field := range []string{`"Order":null`, `"CustomParameters":null`, `"IsCancelable":false`, `"StartRecurrent":false`, `"PayerHash":null`} {
		if !strings.Contains(string(p.body), field) {
			t.Errorf("push lacks %s: %s", field, p.body)
		}
	}
	return tp
}

func wantDataPush(t *testing.T, p receivedPush, key, action string, code int) *api.DataRequestPush {
	t.Helper()
	dp := p.push.DataRequest
	if dp == nil {
		t.Fatalf("push is not a DataRequest: %s", p.body)
	}
	if dp.Key != key || dp.ActionCode != action || dp.Status.Code.Code != code || dp.Status.SubCode != nil ||
		dp.MutationType != api.MutationDataRequest || !dp.IsTest || dp.ServiceCode != api.ServiceDeferred {
		t.Fatalf("data push %s, want key %s action %s status %d, SubCode null", p.body, key, action, code)
	}
	if dp.AmountDebit == nil || !dp.AmountDebit.IsZero() {
		t.Errorf("data push AmountDebit is not 0: %s", p.body)
	}
	if !pushTime.MatchString(dp.Status.DateTime.String()) {
		t.Errorf("push DateTime %q has no offset", dp.Status.DateTime)
	}
	return dp
}
