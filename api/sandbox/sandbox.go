package sandbox

import (
	"context"
	"errors"
	"net/http"
	"time"

	"github.com/shopspring/decimal"

	"paydesk/api"
)

// Config configures a Sandbox.
type Config struct {
	// Credentials are the accepted website keys; pushes are signed with the
	// first.
	Credentials []api.Credentials
	// PushURL is the default push target; a request's PushURL overrides it
	// for that transaction.
	PushURL string
	// PublicBaseURL is the base for RedirectURL links; "" derives it from the
	// request's Host.
	PublicBaseURL string
	// Autocapture captures every approved reservation in full at once.
	Autocapture bool
	// PartialRefunds is provider B's merchant setting for partial gift card
	// refunds (off by default, as with the real provider).
	PartialRefunds bool
	// StatePath is "" for memory only, else a bbolt file holding the state
	// and the push outbox.
	StatePath string
	// Now is the clock; nil means time.Now.
	Now func() time.Time
	// Seed makes keys, reservation and invoice numbers deterministic; 0
	// means random.
	Seed uint64
	// Rules are the merchant rules requests are validated with.
	Rules api.Rules
	// HTTP sends pushes; nil means a client with timeouts.
	HTTP api.Doer
	// RetryBase is the push retry backoff base (doubling, 10 tries); zero
	// means 1 s.
	RetryBase time.Duration
	// Logf gets one line per request; nil means silent.
	Logf func(format string, args ...any)
}

// CardInfo is a seeded gift card and its balance.
type CardInfo struct {
	ServiceCode string // a service code that accepts the card
	Provider    api.Provider
	Number      string
	PIN         string
	Balance     decimal.Decimal
	Currency    string
}

// Sandbox is the gateway. It is safe for concurrent use.
type Sandbox struct {
	cfg Config
}

var errNotBuilt = errors.New("sandbox: not built yet")

// New checks cfg, opens the state file if any and seeds the gift cards.
func New(cfg Config) (*Sandbox, error) { return &Sandbox{cfg: cfg}, nil }

// ServeHTTP serves the two gateway endpoints and the sandbox's own pages.
func (s *Sandbox) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	http.Error(w, "not built yet", http.StatusNotImplemented)
}

// Run sends pushes from the outbox until ctx is done.
func (s *Sandbox) Run(ctx context.Context) error {
	<-ctx.Done()
	return nil
}

// Close flushes and closes the state; pushes not yet acknowledged stay in
// the outbox.
func (s *Sandbox) Close() error { return nil }

// Approve completes the customer flow of a pending reservation, as the
// checkout page's approve button does.
func (s *Sandbox) Approve(ctx context.Context, key string) error { return errNotBuilt }

// Decline ends the customer flow of a pending reservation with 690.
func (s *Sandbox) Decline(ctx context.Context, key string) error { return errNotBuilt }

// Resend queues the pushes of a transaction key again.
func (s *Sandbox) Resend(key string) error { return errNotBuilt }

// Cards lists the seeded gift cards with their balances.
func (s *Sandbox) Cards() []CardInfo { return nil }

// SetPushURL changes the default push target (the console learns its
// listener address after start).
func (s *Sandbox) SetPushURL(url string) {}

// PendingPushes is the number of pushes not yet acknowledged.
func (s *Sandbox) PendingPushes() int { return 0 }
