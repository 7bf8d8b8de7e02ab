package batch

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"paydesk/internal/pgtest"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"paydesk/api"
	"paydesk/api/sandbox"
	"paydesk/internal/ops"
	"paydesk/store"
)

var testCreds = api.Credentials{WebsiteKey: "BATCHTESTKEY", SecretKey: "batch-test-secret-not-real"}

// env is the embedded sandbox behind a front that counts (and can break)
// requests, a push receiver that verifies and stores pushes as the
// listener does, the cache and the operations.
type env struct {
	tb      testing.TB
	sb      *sandbox.Sandbox
	gateway *httptest.Server
	db      *store.DB
	svc     *ops.Service
	client  *api.Client
	dbPath  string

	live     atomic.Pointer[store.DB] // the cache the push receiver writes (swapped on a reopen)
	requests atomic.Int64             // Transaction and DataRequest requests that reached the front
	mu       sync.Mutex
	pays     map[string]int // reservation number → Pay requests the sandbox answered 190
	cancels  map[string]int // reservation number → CancelReservation requests the sandbox answered 190
	// breakFor answers a Pay for a reservation number with this HTTP status
	// without passing it on (0: pass), or drops the connection after the
	// sandbox processed it (-1).
	breakFor map[string]int
	delay    time.Duration // after the sandbox answered, before the client hears it
	// answering counts the gateway's requests being answered (under mu);
	// quiet is signalled when it drops to zero: a test that killed the
	// client waits for the answers under way.
	answering int
	quiet     *sync.Cond
}

type envOpts struct {
	pushURL string // "" : the in-process push receiver
	path    string // cache file; "" : a temp file
}

func newEnv(tb testing.TB, o envOpts) *env {
	tb.Helper()
	e := &env{tb: tb, pays: map[string]int{}, cancels: map[string]int{}, breakFor: map[string]int{}}
	e.quiet = sync.NewCond(&e.mu)
	e.dbPath = o.path
	if e.dbPath == "" {
		e.dbPath = pgtest.StoreAt(tb, filepath.Join(tb.TempDir(), "paydesk.db"))
	}
	db, err := store.Open(e.dbPath, store.Options{NoSync: true})
	if err != nil {
		tb.Fatalf("store.Open: %v", err)
	}
	e.db = db
	e.live.Store(db)
	verifier := api.VerifierFor(testCreds)
	listener := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		if _, err := verifier.Verify(r.Header.Get("Authorization"), r.Method, r.Host+r.URL.Path, body); err != nil {
			http.Error(w, "bad signature", http.StatusUnauthorized)
			return
		}
		p, err := api.DecodePush(body)
		if err != nil {
			http.Error(w, "bad push", http.StatusBadRequest)
			return
		}
		d := e.live.Load()
		if d == nil {
			http.Error(w, "closed", http.StatusServiceUnavailable)
			return
		}
		rec := store.PushRecord{ReceivedAt: time.Now(), Method: r.Method, URL: r.URL.String(), Header: r.Header.Clone(), Body: body}
		if _, err := d.ApplyPush(r.Context(), rec, p); err != nil {
			http.Error(w, err.Error(), http.StatusInternalServerError)
			return
		}
		w.WriteHeader(http.StatusOK)
	}))
	tb.Cleanup(listener.Close)
	pushURL := o.pushURL
	if pushURL == "" {
		pushURL = listener.URL + "/push"
	}
	sb, err := sandbox.New(sandbox.Config{Credentials: []api.Credentials{testCreds}, PushURL: pushURL,
		RetryBase: 20 * time.Millisecond, Seed: 5})
	if err != nil {
		tb.Fatal(err)
	}
	e.sb = sb
	e.gateway = httptest.NewServer(http.HandlerFunc(e.front))
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- sb.Run(ctx) }()
	tb.Cleanup(func() {
		cancel()
		<-done
		e.gateway.CloseClientConnections()
		e.gateway.Close()
		_ = sb.Close()
		if e.db != nil {
			_ = e.db.Close()
		}
	})
	client, err := api.NewClient(api.Config{BaseURL: e.gateway.URL, Credentials: testCreds, Timeout: 5 * time.Second})
	if err != nil {
		tb.Fatal(err)
	}
	e.client = client
	e.svc = rebind(tb, e, db)
	return e
}

// rebind is the operations on db (a reopened cache).
func rebind(tb testing.TB, e *env, db *store.DB) *ops.Service {
	tb.Helper()
	svc, err := ops.New(ops.Config{Gateway: e.client, Store: db, Operator: "batcher",
		CustomerStep: func(ctx context.Context, key, _ string, approve bool) error { return e.sb.Approve(ctx, key) }})
	if err != nil {
		tb.Fatal(err)
	}
	return svc
}

// front passes requests to the sandbox, counting them, counting the Pays
// it answered per reservation number, and breaking the ones asked for.
// waitQuiet waits until the gateway answers no request.
func (e *env) waitQuiet() {
	e.mu.Lock()
	for e.answering > 0 {
		e.quiet.Wait()
	}
	e.mu.Unlock()
}

func (e *env) front(w http.ResponseWriter, r *http.Request) {
	e.mu.Lock()
	e.answering++
	e.mu.Unlock()
	defer func() {
		e.mu.Lock()
		if e.answering--; e.answering == 0 {
			e.quiet.Broadcast()
		}
		e.mu.Unlock()
	}()
	if r.URL.Path != api.PathTransaction && r.URL.Path != api.PathDataRequest {
		e.sb.ServeHTTP(w, r)
		return
	}
	e.requests.Add(1)
	body, _ := io.ReadAll(r.Body)
	r.Body = io.NopCloser(strings.NewReader(string(body)))
	num, cancelled := "", ""
	if req, err := api.DecodeRequest(body); err == nil {
		switch req.Service().Action {
		case api.ActionPay:
			num, _ = req.Param(api.PReservationNumber)
		case api.ActionCancelReservation:
			cancelled, _ = req.Param(api.PReservationNumber)
		}
	}
	e.mu.Lock()
	brk := e.breakFor[num]
	delay := e.delay
	e.mu.Unlock()
	if num != "" && brk > 0 {
		http.Error(w, "broken on purpose", brk)
		return
	}
	rec := httptest.NewRecorder()
	e.sb.ServeHTTP(rec, r)
	if cancelled != "" && rec.Code == http.StatusOK {
		if resp, err := api.DecodeResponse(rec.Body.Bytes()); err == nil && resp.Status.Code.Code == api.StatusSuccess {
			e.mu.Lock()
			e.cancels[cancelled]++
			e.mu.Unlock()
		}
	}
	if num != "" && rec.Code == http.StatusOK {
		if resp, err := api.DecodeResponse(rec.Body.Bytes()); err == nil && resp.Status.Code.Code == api.StatusSuccess {
			e.mu.Lock()
			e.pays[num]++
			e.mu.Unlock()
		}
	}
	if delay > 0 {
		time.Sleep(delay)
	}
	if num != "" && brk < 0 {
		if hj, ok := w.(http.Hijacker); ok {
			if conn, _, err := hj.Hijack(); err == nil {
				conn.Close()
				return
			}
		}
	}
	for k, v := range rec.Header() {
		w.Header()[k] = v
	}
	w.WriteHeader(rec.Code)
	_, _ = w.Write(rec.Body.Bytes())
}

func (e *env) paysOf(num string) int {
	e.mu.Lock()
	defer e.mu.Unlock()
	return e.pays[num]
}

// reserveMany makes n approved reservations of the test order (SHOE-42 ×3
// at 59.95, SOCK-3P ×2 at 14.50, SHIP 4.95), invoices BT-0001…, and waits
// for their Reserve pushes. It returns their reservation numbers.
func (e *env) reserveMany(ctx context.Context, n int) []string {
	e.tb.Helper()
	keys := make([]string, n)
	for i := range n {
		rs := ops.TestReservation(time.Now(), "EUR")
		rs.Invoice = fmt.Sprintf("BT-%04d", i+1)
		res, err := e.svc.Reserve(ctx, rs)
		if err != nil {
			e.tb.Fatalf("Reserve %d: %v", i, err)
		}
		if err := e.sb.Approve(ctx, res.Key); err != nil {
			e.tb.Fatalf("Approve: %v", err)
		}
		keys[i] = res.Key
	}
	nums := make([]string, n)
	for i, k := range keys {
		r, ok, err := e.svc.Waiter().Reservation(ctx, k, 2*time.Minute)
		if err != nil || !ok || r.ReservationNumber == "" {
			e.tb.Fatalf("Reserve push of %s: ok=%v err=%v", k, ok, err)
		}
		nums[i] = r.ReservationNumber
	}
	return nums
}

// shipmentManifest ships, per reservation, SHOE-42 in two parcels of one,
// SOCK-3P in two rows of one and SHIP: five rows, 153.85 EUR each.
func shipmentManifest(n int) string {
	var b strings.Builder
	b.WriteString("invoice,article,quantity,amount,parcel,tracking\n")
	for i := range n {
		inv := fmt.Sprintf("BT-%04d", i+1)
		fmt.Fprintf(&b, "%s,SHOE-42,1,59.95,P%d-1,TT%d1\n", inv, i, i)
		fmt.Fprintf(&b, "%s,SHOE-42,1,59.95,P%d-2,TT%d2\n", inv, i, i)
		fmt.Fprintf(&b, "%s,SOCK-3P,1,14.50,P%d-1,TT%d1\n", inv, i, i)
		fmt.Fprintf(&b, "%s,SOCK-3P,1,14.50,P%d-2,TT%d2\n", inv, i, i)
		fmt.Fprintf(&b, "%s,SHIP,1,4.95,P%d-1,TT%d1\n", inv, i, i)
	}
	return b.String()
}

// ledger is a reservation's ledger in one line.
func ledger(r *store.Reservation) string {
	var parts []string
	for _, l := range r.Lines {
		parts = append(parts, fmt.Sprintf("%s r%d c%d", l.ArticleNumber, l.Reserved, l.Captured))
	}
	return fmt.Sprintf("%s captured %s [%s]", r.State(), r.CapturedAmount.StringFixed(2), strings.Join(parts, "; "))
}

const wantShipped = "partly_captured captured 153.85 [SHOE-42 r3 c2; SOCK-3P r2 c2; SHIP r1 c1]"
