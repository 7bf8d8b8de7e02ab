package ops

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"sync"
	"time"

	"github.com/shopspring/decimal"

	"paydesk/api"
	"paydesk/internal/access"
	"paydesk/store"
)

// Mode is the kind of gateway paydesk talks to; it decides the guards.
type Mode string

// Gateway modes.
const (
	ModeSandbox Mode = "sandbox" // the embedded or standalone sandbox
	ModeTest    Mode = "test"    // the provider's test gateway
	ModeLive    Mode = "live"    // real money
)

// ParseMode reads a mode name; "" is the sandbox.
func ParseMode(s string) (Mode, error) {
	switch Mode(strings.ToLower(strings.TrimSpace(s))) {
	case "", ModeSandbox:
		return ModeSandbox, nil
	case ModeTest:
		return ModeTest, nil
	case ModeLive:
		return ModeLive, nil
	}
	return "", fmt.Errorf("gateway mode %q: must be sandbox, test or live", s)
}

// IsLive reports whether destructive operations need the typed confirmation.
func (m Mode) IsLive() bool { return m == ModeLive }

// Store is what the operations need of the cache; *store.DB is one.
type Store interface {
	Reservation(ctx context.Context, ref string) (*store.Reservation, error)
	Transaction(ctx context.Context, key string) (*store.Transaction, error)
	ResolveTransaction(ctx context.Context, ref string) (*store.Transaction, error)
	Op(ctx context.Context, id uint64) (*store.PendingOp, error)
	Ops(ctx context.Context, states ...store.OpState) ([]*store.PendingOp, error)
	PushesFor(ctx context.Context, keys ...string) ([]*store.PushRecord, error)
	BeginOp(ctx context.Context, op store.PendingOp) (uint64, error)
	ApplyResponse(ctx context.Context, id uint64, resp *api.Response) (*store.PendingOp, error)
	FailOp(ctx context.Context, id uint64, reason string) error
	MarkOutcomeUnknown(ctx context.Context, id uint64, reason string) error
	ResolveOp(ctx context.Context, id uint64, note string) error
	AppendAudit(ctx context.Context, e store.AuditEntry) (uint64, error)
	CompleteAudit(ctx context.Context, opID uint64, result string) error
	Subscribe() (<-chan store.Change, func())
}

// Gateway sends requests; *api.Client is one.
type Gateway interface {
	Do(ctx context.Context, req *api.Request) (*api.Response, error)
	Rules() api.Rules
}

// Config wires a Service.
type Config struct {
	Gateway Gateway
	Store   Store
	Mode    Mode
	// Operator names who acts, for the journal and the audit log ($USER).
	Operator string
	// Currency of new payments and test reservations; "" means EUR.
	Currency string
	// Merchant is the merchant account's configuration at the gateway, the
	// same value the gateway (or the embedded sandbox) acts on: partial
	// gift card refunds per provider, autocapture, the gift card codes.
	Merchant api.Merchant
	// PushURL, when set, is sent with every request so the gateway pushes
	// there (the embedded listener's address).
	PushURL string
	// CustomerStep approves or declines a reservation's customer redirect
	// in a sandbox; nil posts to the redirect URL's approve/decline action.
	CustomerStep func(ctx context.Context, key, redirectURL string, approve bool) error
	// HTTP is used by the default CustomerStep; nil means a client with a
	// 10 s timeout.
	HTTP api.Doer
	// Now is the clock; nil means time.Now.
	Now func() time.Time
	// Principal is who the operations run as (roles.go): the zero value
	// is one person alone, who may do everything. A principal in an
	// operation's context comes first.
	Principal access.Principal
	// Policy is what each role may do, with its refund limits.
	Policy access.Policy
	// ApprovalOver: a refund above it becomes an approval request
	// (approvals.go) instead of being sent; zero: never.
	ApprovalOver decimal.Decimal
	// ApprovalTTL is how long a request may be approved; 0: 72 hours.
	ApprovalTTL time.Duration
}

// Service runs operations. It is safe for concurrent use.
type Service struct {
	cfg Config

	mu       sync.Mutex
	inFlight map[string]bool // action+target being submitted in this process
}

// New checks cfg and returns a Service.
func New(cfg Config) (*Service, error) {
	if cfg.Gateway == nil {
		return nil, errors.New("ops: no gateway client")
	}
	if cfg.Store == nil {
		return nil, errors.New("ops: no cache")
	}
	if cfg.Mode == "" {
		cfg.Mode = ModeSandbox
	}
	if _, err := ParseMode(string(cfg.Mode)); err != nil {
		return nil, fmt.Errorf("ops: %w", err)
	}
	if cfg.Operator == "" {
		cfg.Operator = "unknown"
	}
	if cfg.Currency == "" {
		cfg.Currency = "EUR"
	}
	if cfg.Now == nil {
		cfg.Now = time.Now
	}
	if cfg.HTTP == nil {
		cfg.HTTP = &http.Client{Timeout: 10 * time.Second}
	}
	return &Service{cfg: cfg, inFlight: map[string]bool{}}, nil
}

// Mode is the gateway mode the service guards for.
func (s *Service) Mode() Mode { return s.cfg.Mode }

// Merchant is the merchant configuration the service validates with; forms
// read it so they allow what the gateway accepts.
func (s *Service) Merchant() api.Merchant { return s.cfg.Merchant }

// Operator is who the service acts as.
func (s *Service) Operator() string { return s.cfg.Operator }

// Store is the cache the service writes.
func (s *Service) Store() Store { return s.cfg.Store }

// Now is the service's clock.
func (s *Service) Now() time.Time { return s.cfg.Now() }

// Errors callers branch on.
var (
	// ErrAlreadyOpen: the same operation on the same target is still open
	// (pending, or its outcome is unknown). It is never sent twice.
	ErrAlreadyOpen = errors.New("the same operation is still open for this target")
	// ErrConfirmRequired: a guard needs the operator's explicit confirmation
	// (live-mode invoice number, a capture past the 14-day window).
	ErrConfirmRequired = errors.New("confirmation required")
	// ErrLiveRefused: the operation is not allowed against a live gateway.
	ErrLiveRefused = errors.New("not allowed against a live gateway")
	// ErrNotPossible: the target's state does not allow the operation.
	ErrNotPossible = errors.New("not possible in this state")
)

// Result is what an operation did.
type Result struct {
	OpID     uint64
	Action   string
	Service  string
	Target   string
	Invoice  string
	Currency string
	Amount   decimal.Decimal
	// State of the journal entry: settled, failed, sent (pending, e.g. the
	// customer step of a Reserve) or outcome_unknown.
	State store.OpState
	// Key, Status, SubCode come from the gateway's answer.
	Key     string
	Status  int
	SubCode string
	// InvoiceNumber is the provider's invoice of a capture.
	InvoiceNumber string
	// RedirectURL is where the customer goes: the checkout of a Reserve, the
	// remainder page of a partial gift card payment.
	RedirectURL string
	// Remainder is what is left to pay of a partial gift card payment, and
	// GroupTransaction the key that pays it (PayRemainder).
	Remainder        decimal.Decimal
	GroupTransaction string
	// Message says in words what happened (for a failure: why).
	Message string
	// Errors lists the gateway's RequestErrors of a 491, one per item.
	Errors []api.ErrorItem
	// Warning is a problem beside the outcome (the audit log could not be
	// written).
	Warning string
	// Approval is the approval request the operation became (nothing was
	// sent) or, for an approval, the request it carried out.
	Approval uint64
}

// OK reports whether the gateway accepted the operation (190, or a pending
// 79x such as a Reserve awaiting the customer).
func (r Result) OK() bool {
	if r.AwaitsApproval() {
		return true
	}
	return r.State == store.OpSettled || r.State == store.OpSent
}

// AwaitsApproval reports an operation kept as an approval request: nothing
// was sent.
func (r Result) AwaitsApproval() bool { return r.Approval != 0 && r.OpID == 0 && r.State == "" }

// OutcomeUnknown reports whether it is open whether the gateway acted.
func (r Result) OutcomeUnknown() bool { return r.State == store.OpOutcomeUnknown }

// Partial reports a gift card payment that covered only part of the amount.
func (r Result) Partial() bool {
	return r.SubCode == api.SubCodePartialPayment || r.Remainder.IsPositive()
}

// StatusText is "190 S001 Success" style text, "" without an answer.
func (r Result) StatusText() string {
	return store.Status{Code: r.Status, SubCode: r.SubCode}.Text()
}

// OperationError is an operation that reached the journal and did not
// succeed; it carries the Result so callers can show what is known.
type OperationError struct {
	Result Result
	Err    error
}

func (e *OperationError) Error() string {
	return fmt.Sprintf("%s %s: %v", e.Result.Action, e.Result.Target, e.Err)
}
func (e *OperationError) Unwrap() error { return e.Err }
