package store

import (
	"errors"
	"net/http"
	"time"

	"github.com/shopspring/decimal"

	"paydesk/api"
)

// Signature verdicts of a push, as the push log shows them.
const (
	SignatureValid     = "valid"
	SignatureMissing   = "missing"
	SignatureMalformed = "malformed"
	SignatureUnknown   = "unknown website key"
	SignatureStale     = "stale timestamp"
	SignatureMismatch  = "mismatch"
	SignatureUnchecked = "not checked" // the body was refused before the signature was looked at
)

// SignatureVerdict names the check an api.Verifier error failed; nil is
// SignatureValid.
func SignatureVerdict(err error) string {
	switch {
	case err == nil:
		return SignatureValid
	case errors.Is(err, api.ErrSignatureMissing):
		return SignatureMissing
	case errors.Is(err, api.ErrSignatureMalformed):
		return SignatureMalformed
	case errors.Is(err, api.ErrUnknownWebsiteKey):
		return SignatureUnknown
	case errors.Is(err, api.ErrStaleTimestamp):
		return SignatureStale
	default:
		return SignatureMismatch
	}
}

// PushRecord is one push as received: the raw request and a decoded summary.
// Untrusted text fields are stored as received; sanitize before drawing
// (internal/textsafe).
type PushRecord struct {
	ID         uint64 // assigned by the store, increasing
	ReceivedAt time.Time
	RemoteAddr string
	Method     string
	URL        string      // path (and query) as requested
	Header     http.Header // as received; Authorization holds a signature, no secret
	Body       []byte      // raw bytes as received (bounded by the listener)

	// Decoded summary; empty for a push that could not be decoded.
	Envelope   string // api.EnvelopeDataRequest or api.EnvelopeTransaction
	Key        string
	Invoice    string
	Service    string
	Kind       string // ActionCode of a data request, TransactionType of a transaction
	Status     Status
	Currency   string
	Amount     decimal.Decimal
	HasAmount  bool   // the push carried an amount (see AmountShown)
	WebsiteKey string // from the Authorization header

	Signature string // one of the Signature* verdicts
	// Rejected pushes were answered 401/400 and changed nothing; Reason
	// says which check failed.
	Rejected bool
	Reason   string
	// Applied is true when the push changed the cache; otherwise Ignored says
	// why (older than the stored status, final status already stored, …).
	Applied bool
	Ignored string
	// ReservationKey links the push to its reservation when it has one.
	ReservationKey string
	// Hash identifies the push's content for de-duplication; for a
	// rejected request it is the SHA-256 of the whole body.
	Hash [32]byte

	// For a rejected request, whose Body is only an excerpt: the body's
	// size, how many requests of the same source and kind the entry
	// stands for, and when the last of them came (ReceivedAt is the
	// first's).
	BodySize int
	Count    uint64
	LastSeen time.Time
}

// ApplyResult tells what ApplyPush did.
type ApplyResult struct {
	ID        uint64 // the stored push's ID (the earlier one for a duplicate)
	Duplicate bool   // the same push was stored before; nothing changed
	Applied   bool   // the push changed the cache
	Ignored   string // why it changed nothing
	// Settled lists operations that this push settled.
	Settled        []uint64
	ReservationKey string
}

// OpState is the state of a pending operation.
type OpState string

// Operation states.
const (
	OpPending        OpState = "pending"         // journaled, the request is on its way
	OpSent           OpState = "sent"            // answered with a pending status; a push finishes it
	OpOutcomeUnknown OpState = "outcome_unknown" // sent, no trustworthy answer: never retried on its own
	OpSettled        OpState = "settled"         // final success (by response or push)
	OpFailed         OpState = "failed"          // final failure, or not sent at all
	OpResolved       OpState = "resolved"        // the operator closed an unknown outcome by hand
)

// IsOpen reports whether the operation still waits for something.
func (s OpState) IsOpen() bool { return s == OpPending || s == OpSent || s == OpOutcomeUnknown }

// PendingOp is an entry of the operation journal: written before a request is
// sent, settled by its response or a matching push.
type PendingOp struct {
	ID       uint64 // assigned by BeginOp
	Created  time.Time
	Updated  time.Time
	Operator string
	Action   string // api action: Reserve, Pay, Refund, PayRemainder, …
	Service  string
	// Target is what the operation works on: a reservation number, the key a
	// refund refunds, or the invoice of a new payment.
	Target         string
	ReservationKey string
	Invoice        string
	Currency       string
	Amount         decimal.Decimal
	// Request is the envelope as sent; card PINs are masked when stored.
	Request *api.Request
	// Lines are the returned article units a refund pays back (a refund on
	// the wire carries only an amount); its transaction takes them over, so
	// the ledger counts refunded units per line.
	Lines []api.CaptureLine `json:",omitempty"`
	// Parcels are what a capture shipped (from a manifest); its
	// transaction takes them over.
	Parcels []Parcel `json:",omitempty"`
	State   OpState
	// ResultKey and ResultStatus come from the response or the push.
	ResultKey    string
	ResultStatus Status
	Error        string // why it failed or why the outcome is unknown
	Note         string // the operator's note when resolving
	// AuditID is the operation's audit entry, written with the journal
	// entry (BeginOp with Audit set) and completed when it settles.
	AuditID uint64 `json:",omitempty"`
	// Lease is the liveness lock of the process that journaled it, on a
	// team's database (pglease.go): when nobody holds it any more, a
	// pending operation's outcome is unknown.
	Lease int64 `json:",omitempty"`
	// Audit, given to BeginOp, is the audit entry to write in the same
	// transaction as the journal entry: an operation cut short after
	// sending (killed, a full disk) is in the audit log all the same.
	Audit *AuditEntry `json:"-"`
}

// AuditEntry is one line of the append-only audit log.
type AuditEntry struct {
	ID       uint64 // assigned by the store
	Time     time.Time
	Operator string // $USER
	Action   string
	Target   string
	Amount   decimal.Decimal
	Currency string
	Result   string
	Reason   string
	OpID     uint64
	// Completes is set on an entry that records how an operation ended:
	// the entry it completes. The log only grows — nothing is edited — and
	// Audit shows the completed entry with its latest result.
	Completes uint64 `json:",omitempty"`
	// Prev is the SHA-256 (hex) of the previous entry as stored, so the log
	// is a chain: an entry removed or edited later shows (VerifyAudit).
	Prev string `json:",omitempty"`
	// KeyID names the audit key the entry is keyed with (auditkey.go) and
	// MAC is the HMAC-SHA256 of the entry as stored without MAC, under
	// that key: an entry written by anyone without the key (an INSERT into
	// the database) shows. Empty on entries written before keying. MAC
	// stays the last field: the stored JSON without it is what it covers.
	KeyID string `json:",omitempty"`
	MAC   string `json:",omitempty"`
}

// Exchange is one entry of the gateway log: a request paydesk sent and what
// came back. Bodies hold no secret (the client never puts it there); card PINs
// are masked when stored.
type Exchange struct {
	ID           uint64 // assigned by the store
	Time         time.Time
	Action       string
	Service      string
	Method       string
	URL          string
	RequestBody  []byte
	HTTPStatus   int
	ResponseBody []byte
	Duration     time.Duration
	Error        string
}

// ExchangeFrom converts what api.Config.Observe reports.
func ExchangeFrom(x api.Exchange) Exchange {
	e := Exchange{Time: x.Time, Action: x.Action, Service: x.Service, Method: x.Method, URL: x.URL,
		RequestBody: x.RequestBody, HTTPStatus: x.HTTPStatus, ResponseBody: x.ResponseBody, Duration: x.Duration}
	if x.Err != nil {
		e.Error = x.Err.Error()
	}
	return e
}

// Counts are the figures the status bar shows.
type Counts struct {
	Pushes         uint64 // stored pushes, ever
	Rejected       uint64 // rejected pushes, ever
	OutcomeUnknown int    // operations whose outcome is unknown now
	Reservations   int
	Transactions   int
}

// Change is sent to subscribers after each commit.
type Change struct {
	Pushes       int      // pushes stored by the commit
	Rejected     int      // rejected pushes logged
	Receipts     int      // repeated receipts of stored pushes recorded (receipts.go)
	ReceiptKeys  []string // the keys of those pushes; nil when more than maxReceiptKeys (reload them all)
	Reservations []string // keys of reservations that changed
	Transactions []string // keys of transactions that changed
	Ops          bool     // the operation journal changed
	Audit        bool
	Exchanges    bool
	Orders       bool // an order was stored (intake, import) or refused as a conflict
	Approvals    bool // an approval request was made, decided or sent
	// Overflow means earlier notifications were dropped because the
	// subscriber was slow: reload everything.
	Overflow bool

	// keys keys the audit entries the commit writes (auditkey.go); nil
	// writes them unkeyed.
	keys *auditKeyring

	// inbox: the commit applied pushes from the push inbox (PostgreSQL):
	// listeners waiting to hear what became of theirs look.
	inbox bool

	// keys already listed, while the commit runs
	seenReservations, seenTransactions map[string]struct{}

	// Records the commit created, for the counts in meta: they are added
	// once per commit (writeCounts), not read and written per record.
	newReservations, newTransactions int
}

// writeCounts adds what the commit stored to the counters. The writers call
// it once, after every change of the transaction: the counters are added
// once per commit, not read and written per record.
func (c *Change) writeCounts(tx RepoTx) error {
	d := Tally{Pushes: int64(c.Pushes), Rejected: int64(c.Rejected),
		Reservations: int64(c.newReservations), Transactions: int64(c.newTransactions)}
	if d == (Tally{}) {
		return nil
	}
	return tx.AddTally(d)
}

func (c *Change) addReservation(key string) {
	if c != nil && addKey(&c.seenReservations, key) {
		c.Reservations = append(c.Reservations, key)
	}
}

func (c *Change) addTransaction(key string) {
	if c != nil && addKey(&c.seenTransactions, key) {
		c.Transactions = append(c.Transactions, key)
	}
}

// addKey adds key to the set *seen and reports whether it was new.
func addKey(seen *map[string]struct{}, key string) bool {
	if _, ok := (*seen)[key]; ok {
		return false
	}
	if *seen == nil {
		*seen = map[string]struct{}{}
	}
	(*seen)[key] = struct{}{}
	return true
}

// AmountShown reports whether the push's amount means anything to a
// person: a data request push (Reserve, cancel, update) carries
// AmountDebit 0 by the spec, which is no amount.
func (rec *PushRecord) AmountShown() bool {
	return rec.HasAmount && !(rec.Envelope == api.EnvelopeDataRequest && rec.Amount.IsZero())
}
