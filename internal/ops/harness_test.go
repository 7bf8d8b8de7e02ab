package ops

import (
	"context"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"paydesk/internal/pgtest"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/shopspring/decimal"

	"paydesk/api"
	"paydesk/api/sandbox"
	"paydesk/store"
)

var testCreds = api.Credentials{WebsiteKey: "OPSTESTKEY", SecretKey: "ops-test-secret-not-real"}

// env is the embedded sandbox, a push receiver that verifies and stores
// every push (as the push listener does), the cache and the service.
type env struct {
	t       *testing.T
	sb      *sandbox.Sandbox
	gateway *httptest.Server
	db      *store.DB
	svc     *Service
	client  *api.Client

	pushDown atomic.Bool  // answer pushes 503 (the sandbox retries)
	pushes   atomic.Int64 // pushes stored
	requests atomic.Int64 // gateway requests that reached the sandbox
}

type envOpt struct {
	mode           Mode
	partialRefunds bool
	// front wraps the sandbox handler (e.g. a connection-dropping proxy).
	front func(e *env, h http.Handler) http.Handler
}

// stuck bounds the tests' waits for a push or a state in the cache: only a
// stuck test reaches it, on a busy machine under the race detector.
const stuck = 2 * time.Minute

func newEnv(t *testing.T, o envOpt) *env {
	t.Helper()
	e := &env{t: t}
	db, err := store.Open(pgtest.StoreAt(t, filepath.Join(t.TempDir(), "paydesk.db")), store.Options{NoSync: true})
	if err != nil {
		t.Fatalf("store.Open: %v", err)
	}
	e.db = db
	verifier := api.VerifierFor(testCreds)
	listener := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		if e.pushDown.Load() {
			http.Error(w, "down", http.StatusServiceUnavailable)
			return
		}
		if _, err := verifier.Verify(r.Header.Get("Authorization"), r.Method, r.Host+r.URL.Path, body); err != nil {
			http.Error(w, "bad signature", http.StatusUnauthorized)
			return
		}
		p, err := api.DecodePush(body)
		if err != nil {
			http.Error(w, "bad push", http.StatusBadRequest)
			return
		}
		rec := store.PushRecord{ReceivedAt: time.Now(), RemoteAddr: r.RemoteAddr, Method: r.Method, URL: r.URL.String(),
			Header: r.Header.Clone(), Body: body}
		if _, err := db.ApplyPush(r.Context(), rec, p); err != nil {
			http.Error(w, "store: "+err.Error(), http.StatusInternalServerError)
			return
		}
		e.pushes.Add(1)
		w.WriteHeader(http.StatusOK)
	}))
	t.Cleanup(listener.Close)

	sb, err := sandbox.New(sandbox.Config{Credentials: []api.Credentials{testCreds}, PushURL: listener.URL + "/push",
		RetryBase: 20 * time.Millisecond, Seed: 11, Merchant: merchant(o.partialRefunds)})
	if err != nil {
		t.Fatal(err)
	}
	e.sb = sb
	var h http.Handler = http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == api.PathTransaction || r.URL.Path == api.PathDataRequest {
			e.requests.Add(1)
		}
		sb.ServeHTTP(w, r)
	})
	if o.front != nil {
		h = o.front(e, h)
	}
	e.gateway = httptest.NewServer(h)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- sb.Run(ctx) }()
	t.Cleanup(func() {
		cancel()
		<-done
		e.gateway.Close()
		_ = sb.Close()
		_ = db.Close()
	})

	var exMu sync.Mutex
	client, err := api.NewClient(api.Config{BaseURL: e.gateway.URL, Credentials: testCreds, Timeout: 5 * time.Second,
		Observe: func(x api.Exchange) {
			exMu.Lock()
			defer exMu.Unlock()
			if _, err := db.AppendExchange(ctx, store.ExchangeFrom(x)); err != nil {
				t.Errorf("AppendExchange: %v", err)
			}
		}})
	if err != nil {
		t.Fatal(err)
	}
	e.client = client
	mode := o.mode
	if mode == "" {
		mode = ModeSandbox
	}
	svc, err := New(Config{Gateway: client, Store: db, Mode: mode, Operator: "tester", Merchant: merchant(o.partialRefunds),
		CustomerStep: func(ctx context.Context, key, _ string, approve bool) error {
			if approve {
				return sb.Approve(ctx, key)
			}
			return sb.Decline(ctx, key)
		}})
	if err != nil {
		t.Fatal(err)
	}
	e.svc = svc
	return e
}

// merchant is the merchant setting with or without provider B's partial
// refunds.
func merchant(partialRefunds bool) api.Merchant {
	if partialRefunds {
		return api.Merchant{PartialRefunds: []api.Provider{api.ProviderB}}
	}
	return api.Merchant{}
}

func dec(s string) decimal.Decimal { return decimal.RequireFromString(s) }

func ptr(d decimal.Decimal) *decimal.Decimal { return &d }

// reserved creates the test reservation and approves it, returning it as
// the cache has it after the Reserve push.
func (e *env) reserved(ctx context.Context) *store.Reservation {
	e.t.Helper()
	res, err := e.svc.Reserve(ctx, TestReservation(time.Now(), "EUR"))
	if err != nil {
		e.t.Fatalf("Reserve: %v", err)
	}
	if res.Status != api.StatusPendingProcessing || res.RedirectURL == "" || res.State != store.OpSent {
		e.t.Fatalf("Reserve result = %+v, want 791 with a redirect, journal sent", res)
	}
	if err := e.svc.CustomerStep(ctx, res.Key, true); err != nil {
		e.t.Fatalf("CustomerStep: %v", err)
	}
	r, ok, err := e.svc.Waiter().Reservation(ctx, res.Key, stuck)
	if err != nil || !ok {
		e.t.Fatalf("no Reserve push settled %s: ok=%v err=%v", res.Key, ok, err)
	}
	if r.State() != store.StateReserved || r.ReservationNumber == "" {
		e.t.Fatalf("after approve: state %s, number %q", r.State(), r.ReservationNumber)
	}
	return r
}

// dropAfterForwarding is a proxy that lets the gateway process the request,
// then closes the client's connection without an answer: the request was
// sent, the outcome is unknown to the client.
func dropAfterForwarding(drop *atomic.Bool) func(e *env, h http.Handler) http.Handler {
	return func(e *env, h http.Handler) http.Handler {
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			if !drop.Load() {
				h.ServeHTTP(w, r)
				return
			}
			rec := httptest.NewRecorder()
			h.ServeHTTP(rec, r)
			hj, ok := w.(http.Hijacker)
			if !ok {
				e.t.Error("proxy: cannot hijack")
				return
			}
			conn, _, err := hj.Hijack()
			if err != nil {
				e.t.Errorf("proxy: hijack: %v", err)
				return
			}
			if tc, ok := conn.(*net.TCPConn); ok {
				_ = tc.SetLinger(0) // a reset, as a dropped connection looks
			}
			conn.Close()
		})
	}
}

func decFromInt(n int) decimal.Decimal { return decimal.NewFromInt(int64(n)) }
