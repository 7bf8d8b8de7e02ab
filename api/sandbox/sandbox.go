package sandbox

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/shopspring/decimal"
	bolt "go.etcd.io/bbolt"

	"paydesk/api"
)

// Config configures a Sandbox.
type Config struct {
	// Credentials are the accepted website keys; pushes are signed with the
	// credentials of the website key that made the transaction (the first
	// when that key is no longer configured).
	Credentials []api.Credentials
	// PushURL is the default push target; a request's PushURL overrides it
	// for that transaction.
	PushURL string
	// PublicBaseURL is the base for RedirectURL links; "" derives it from the
	// request's Host.
	PublicBaseURL string
	// Merchant is the merchant account's configuration: autocapture,
	// partial gift card refunds per provider, the gift card codes offered.
	// The client side reads the same value (api.Merchant).
	Merchant api.Merchant
	// StatePath is "" for memory only, else a bbolt file holding the state
	// and the push outbox.
	StatePath string
	// Now is the clock of timestamps, signatures and the 14-day window; nil
	// means time.Now. Retry timing always uses the real clock.
	Now func() time.Time
	// Seed makes keys, reservation and invoice numbers deterministic; 0
	// means random.
	Seed uint64
	// HTTP sends pushes; nil means a client with timeouts.
	HTTP api.Doer
	// RetryBase is the push retry backoff base (doubling, 10 tries); zero
	// means 1 s.
	RetryBase time.Duration
	// Logf gets one line per request and per push attempt; nil means
	// silent. It is called from several goroutines.
	Logf func(format string, args ...any)
	// Chaos, when set, makes the sandbox misbehave deterministically (see
	// Chaos); pushes then go out one at a time.
	Chaos *Chaos
	// SettleDays is how many days after its success a payment or refund is
	// settled, on the statement of that day (GET /sandbox/statement); 0
	// settles it the same day.
	SettleDays int
	// SettleFee is what the payout keeps of every settled transaction.
	SettleFee decimal.Decimal
}

// CardInfo is a seeded gift card and its balance.
type CardInfo struct {
	ServiceCode string // the service code meant for the card
	Provider    api.Provider
	Number      string
	PIN         string // for provider C the validation code
	Balance     decimal.Decimal
	Currency    string
}

// Errors of the Go API and the sandbox pages.
var (
	ErrUnknownKey = errors.New("no such transaction key")
	ErrNotPending = errors.New("not awaiting the customer")
	ErrClosed     = errors.New("sandbox is closed")
)

// Sandbox is the gateway. It is safe for concurrent use.
type Sandbox struct {
	cfg      Config
	rules    api.Rules // from cfg.Merchant
	creds    map[string]api.Credentials
	verifier api.Verifier
	client   api.Doer
	mux      *http.ServeMux
	wake     chan struct{}

	mu          sync.Mutex
	db          *bolt.DB
	writes      []storeOp
	closed      bool
	ids         idSource
	pushURL     string
	txs         map[string]*txRecord
	byInvoice   map[string][]*txRecord // InvoiceInfo's index: an invoice is set when its record is made and never changes
	resByNumber map[string]*reservation
	resByKey    map[string]*reservation
	cards       map[string]*card
	groups      map[string]*group
	// The outbox: per transaction key, the pushes not yet acknowledged, in
	// the order they were made; dead ones gave up and wait for Resend.
	outboxSeq uint64
	queues    map[string][]*outboxEntry
	dead      map[uint64]*outboxEntry
	queued    int
	inFlight  int
	chaos     *chaosState // nil without chaos
	// backOffice is set while a back-office request is applied: what it
	// makes is recorded, and no push is made for it.
	backOffice bool
}

// New checks cfg, opens the state file if any and seeds the gift cards.
func New(cfg Config) (*Sandbox, error) {
	if len(cfg.Credentials) == 0 {
		return nil, errors.New("sandbox: at least one website key is required")
	}
	if err := cfg.Merchant.Validate(); err != nil {
		return nil, fmt.Errorf("sandbox: merchant settings: %w", err)
	}
	s := &Sandbox{
		cfg:         cfg,
		rules:       cfg.Merchant.Rules(),
		creds:       make(map[string]api.Credentials, len(cfg.Credentials)),
		wake:        make(chan struct{}, 1),
		ids:         newIDSource(cfg.Seed),
		pushURL:     cfg.PushURL,
		txs:         map[string]*txRecord{},
		byInvoice:   map[string][]*txRecord{},
		resByNumber: map[string]*reservation{},
		resByKey:    map[string]*reservation{},
		cards:       map[string]*card{},
		groups:      map[string]*group{},
		queues:      map[string][]*outboxEntry{},
		dead:        map[uint64]*outboxEntry{},
	}
	for _, c := range cfg.Credentials {
		if c.WebsiteKey == "" || c.SecretKey == "" {
			return nil, errors.New("sandbox: a website key or its secret is empty")
		}
		s.creds[c.WebsiteKey] = c
	}
	if s.cfg.Now == nil {
		s.cfg.Now = time.Now
	}
	if s.cfg.RetryBase <= 0 {
		s.cfg.RetryBase = time.Second
	}
	s.cfg.PublicBaseURL = strings.TrimSuffix(cfg.PublicBaseURL, "/")
	s.verifier = api.NewVerifier(func(k string) (string, bool) {
		c, ok := s.creds[k]
		return c.SecretKey, ok
	})
	s.verifier.Now = s.cfg.Now
	s.client = cfg.HTTP
	if s.client == nil {
		s.client = &http.Client{Timeout: pushTimeout, Transport: &http.Transport{
			MaxIdleConnsPerHost:   4,
			IdleConnTimeout:       30 * time.Second,
			ResponseHeaderTimeout: pushTimeout,
		}}
	}
	if cfg.StatePath != "" {
		db, err := openState(cfg.StatePath)
		if err != nil {
			return nil, err
		}
		s.db = db
		if err := s.load(); err != nil {
			db.Close()
			return nil, fmt.Errorf("load sandbox state %s: %w", cfg.StatePath, err)
		}
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if cfg.Chaos != nil {
		s.chaos = newChaosState(*cfg.Chaos)
		for _, e := range s.pendingInOrder() { // left from an earlier run
			s.chaos.plan(e, time.Now())
		}
	}
	if len(s.cards) == 0 {
		for _, c := range seededCards() {
			c := c
			s.cards[cardID(c.Provider, c.Number)] = &c
			s.saveCard(&c)
		}
	}
	if err := s.flushLocked(); err != nil {
		s.db.Close()
		return nil, err
	}
	s.routes()
	return s, nil
}

// seededCards are the gift cards every new sandbox starts with (listed in
// docs/sandbox.md). The test card 0000000000000000001 is not among them: its
// PIN is its balance.
func seededCards() []card {
	eur := func(s string) decimal.Decimal { return decimal.RequireFromString(s) }
	return []card{
		{Provider: api.ProviderA, Number: "6064360000000000011", PIN: "1234", Balance: eur("25"), Currency: "EUR", Service: "vouchera"},
		{Provider: api.ProviderA, Number: "6064360000000000029", PIN: "2345", Balance: eur("100"), Currency: "EUR", Service: "vouchera"},
		{Provider: api.ProviderB, Number: "6299440000000000015", PIN: "1111", Balance: eur("50"), Currency: "EUR", Service: "voucherb"},
		{Provider: api.ProviderB, Number: "6299440000000000023", PIN: "2222", Balance: eur("10"), Currency: "EUR", Service: "voucherb"},
		{Provider: api.ProviderC, Number: "5010000000000000017", PIN: "4321", Balance: eur("75"), Currency: "EUR", Service: "voucherc"},
		{Provider: api.ProviderCustom, Number: "9990000000000000010", PIN: "0000", Balance: eur("20"), Currency: "EUR", Service: "customgiftcard"},
	}
}

// Close flushes and closes the state; pushes not yet acknowledged stay in
// the outbox. Call it after Run has returned.
func (s *Sandbox) Close() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed {
		return nil
	}
	s.closed = true
	if s.db == nil {
		return nil
	}
	err := s.flushLocked()
	if cerr := s.db.Close(); cerr != nil && err == nil {
		err = fmt.Errorf("close sandbox state: %w", cerr)
	}
	return err
}

// Cards lists the seeded gift cards with their balances.
func (s *Sandbox) Cards() []CardInfo {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := make([]CardInfo, 0, len(s.cards))
	for _, c := range s.cards {
		out = append(out, CardInfo{ServiceCode: c.Service, Provider: c.Provider, Number: c.Number, PIN: c.PIN, Balance: c.Balance, Currency: c.Currency})
	}
	sort.Slice(out, func(i, j int) bool {
		if out[i].Provider != out[j].Provider {
			return providerRank(out[i].Provider) < providerRank(out[j].Provider)
		}
		return out[i].Number < out[j].Number
	})
	return out
}

func providerRank(p api.Provider) int {
	switch p {
	case api.ProviderA:
		return 0
	case api.ProviderB:
		return 1
	case api.ProviderC:
		return 2
	}
	return 3
}

// SetPushURL changes the default push target (the console learns its
// listener address after start). Pushes waiting for a target go out now.
func (s *Sandbox) SetPushURL(url string) {
	s.mu.Lock()
	s.pushURL = url
	s.mu.Unlock()
	s.wakeUp()
}

// PendingPushes is the number of pushes not yet acknowledged, including
// those that gave up and wait for Resend.
func (s *Sandbox) PendingPushes() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.queued + len(s.dead)
}

func (s *Sandbox) now() time.Time { return s.cfg.Now() }

func (s *Sandbox) logf(format string, args ...any) {
	if s.cfg.Logf != nil {
		s.cfg.Logf(format, args...)
	}
}

func (s *Sandbox) credsFor(websiteKey string) api.Credentials {
	if c, ok := s.creds[websiteKey]; ok {
		return c
	}
	return s.cfg.Credentials[0]
}

func (s *Sandbox) wakeUp() {
	select {
	case s.wake <- struct{}{}:
	default:
	}
}

// Approve completes the customer flow of a pending reservation, as the
// checkout page's approve button does: 190 and the Reserve push, or 690
// when the risk rule declines the customer.
func (s *Sandbox) Approve(ctx context.Context, key string) error {
	_, err := s.finishCheckout(ctx, key, checkoutApprove)
	return err
}

// Decline ends the customer flow of a pending reservation with 690.
func (s *Sandbox) Decline(ctx context.Context, key string) error {
	_, err := s.finishCheckout(ctx, key, checkoutDecline)
	return err
}

// Cancel ends the customer flow of a pending reservation with 890, as the
// customer giving up on the checkout page does.
func (s *Sandbox) Cancel(ctx context.Context, key string) error {
	_, err := s.finishCheckout(ctx, key, checkoutCancel)
	return err
}

// pendingInOrder lists the outbox's waiting pushes in the order they were
// made.
func (s *Sandbox) pendingInOrder() []*outboxEntry {
	var out []*outboxEntry
	for _, q := range s.queues {
		out = append(out, q...)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Seq < out[j].Seq })
	return out
}
