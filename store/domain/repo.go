package domain

import (
	"context"
	"encoding/json"
)

// The engine contract in domain terms. The rules of the store — the
// ledger (recompute, allocate, applyArticles), the life cycle of a
// reservation, idempotency of pushes, "a status never moves back",
// settling operations — are written once against RepoTx: one engine
// transaction's reads and writes of reservations, transactions, pushes,
// the journal and the logs. The rules live in package store; each engine
// implements the contract natively: the bucket-backed engine (store's
// kvrepo*.go) over bbolt's buckets, the relational engine (store/postgres) over
// PostgreSQL's typed tables.
//
// Domain values go in and come out: no byte keys, no bucket names, no
// codec. How a value is stored (JSON, the binary codec, columns) is the
// engine's business; what the rules may rely on is written on each method.
//
// Common to every method:
//   - Absent is not an error: a getter returns nil (or "", 0, an empty
//     slice) and a nil error when there is no such record.
//   - A returned value is the caller's own (a copy): changing it changes
//     nothing stored until it is put back.
//   - Lists come in the order the method names; the rules rely on it,
//     since their results must not depend on the engine.
//   - An error is the engine's (I/O, a record that does not decode, a
//     constraint): the rules return it and the transaction rolls back.
//   - Writes are seen by the transaction's later reads at once and are
//     durable, all or nothing, when Repo.Update returns nil.

// RepoTx is one engine transaction: what the rules read and write.
type RepoTx interface {
	ApprovalsTx // four-eyes approval requests (store/approvals.go)

	// --- Reservations ---

	// Reservation returns the reservation stored under its gateway key
	// (the Reserve's key), nil when there is none.
	Reservation(key string) (*Reservation, error)
	// ReservationLedger is Reservation for a reader that needs only the
	// ledger (Key, ReservationNumber, Invoice, Currency, CustomerName,
	// Lines, LinesKnown, CapturedInFull, Status, Created, Cancelled,
	// CapturedAmount, OutcomeUnknown, UnknownOps): an engine may leave the
	// other fields empty to read faster (a batch's pre-flight reads
	// 100,000). Nil when there is none.
	ReservationLedger(key string) (*Reservation, error)
	// ReservationKeyByNumber returns the key of the reservation with that
	// reservation number (the gateway's, which a capture names), "" when
	// none has it. A number names one reservation: the last put wins.
	ReservationKeyByNumber(number string) (string, error)
	// ReservationKeysByInvoice returns the keys of the reservations whose
	// Invoice is invoice, in key order; empty when none (or invoice is "").
	// An invoice may name several (a shop that reserved again).
	ReservationKeysByInvoice(invoice string) ([]string, error)
	// OwnerOf returns the key of the reservation that a data request key
	// (one of its Requests) or a transaction key (one of its
	// Transactions) belongs to, "" when no reservation lists it.
	OwnerOf(key string) (string, error)
	// PutReservation stores r as given (the rules have recomputed its
	// ledger and set Updated) together with everything that is derived
	// from it: its list row (r.Summary(), which LoadReservationSummaries
	// and the list pages read), the number lookup (ReservationNumber), the
	// invoice lookup (Invoice) and the owner lookup of every key in
	// Requests and Transactions. It replaces a reservation with the same
	// key and reports whether there was none (created).
	PutReservation(r *Reservation) (created bool, err error)
	// DeleteReservation removes the reservation under key with its list
	// row and every lookup that still leads to it (number, invoice,
	// owners); nothing when there is none. Only an order's placeholder is
	// ever deleted (store/orders.go), once its real reservation took it over.
	DeleteReservation(key string) error
	// Summaries returns every reservation's list row, in key order.
	Summaries() ([]Summary, error)

	// --- Transactions (captures, refunds, gift card payments) ---

	// Transaction returns the transaction stored under its gateway key,
	// nil when there is none.
	Transaction(key string) (*Transaction, error)
	// PutTransaction stores t as given with its list row (the transaction
	// list) and, for a capture or refund (KindCapture, KindRefund) with an
	// Invoice, its invoice lookup (TransactionKeysByInvoice). Gift card
	// payments are not looked up by invoice here: the list's search finds
	// them. It replaces a transaction with the same key and reports
	// whether there was none (created).
	PutTransaction(t *Transaction) (created bool, err error)
	// TransactionKeysByInvoice returns the keys of the captures and
	// refunds put with that invoice, in key order; empty when none.
	TransactionKeysByInvoice(invoice string) ([]string, error)
	// Transactions returns every transaction, in key order.
	Transactions() ([]*Transaction, error)
	// TransactionGroup returns a gift card group: the transaction whose
	// key is group (when stored) and every transaction whose Group is
	// group, each once, in no particular order (the caller sorts).
	TransactionGroup(group string) ([]*Transaction, error)
	// LinkRefund records that refund (a transaction key) refunds original.
	// Linking twice is linking once; the refund need not be stored yet.
	LinkRefund(original, refund string) error
	// RefundKeys returns the keys linked to original by LinkRefund, in key
	// order; empty when none. Whether each is stored (and succeeded) is
	// for the caller to read.
	RefundKeys(original string) ([]string, error)

	// --- Orphan data requests: a cancel or update push whose reservation
	// is not (yet) stored. They join it when it appears (adoptOrphans). ---

	// Orphan returns the orphan data request under its key, nil when
	// there is none.
	Orphan(key string) (*OrphanRequest, error)
	// PutOrphan stores o under o.Key, replacing one with the same key,
	// and, when o.Invoice is set, its invoice lookup.
	PutOrphan(o *OrphanRequest) error
	// OrphanKeysByInvoice returns the keys of the orphans put with that
	// invoice, in key order; empty when none.
	OrphanKeysByInvoice(invoice string) ([]string, error)
	// DeleteOrphan removes the orphan under key and its invoice lookup;
	// nothing when there is none.
	DeleteOrphan(key string) error

	// --- Pushes: the log of pushes received, and their de-duplication ---

	// PushDuplicate returns the ID of a stored push about key whose
	// content hash (PushRecord.Hash) is hash, 0 when there is none: a
	// push's identity is its key and hash, stored once.
	PushDuplicate(key string, hash [32]byte) (uint64, error)
	// AppendPush stores rec as the newest push: it assigns rec.ID (greater
	// than every push ID before, never reused) and indexes the push under
	// rec.Key with rec.Hash (PushDuplicate, PushIDsOf). enc is what
	// Repo.EncodePush made of the same record before the transaction (the
	// fields set after it — ID, Applied, Ignored, ReservationKey — may
	// differ), or the zero PushEncoding.
	AppendPush(rec *PushRecord, enc PushEncoding) (uint64, error)
	// Push returns the push with that ID, nil when there is none.
	Push(id uint64) (*PushRecord, error)
	// PushesBefore returns up to limit pushes (limit ≤ 0: all) with IDs
	// below before (0: from the newest), newest first.
	PushesBefore(before uint64, limit int) ([]*PushRecord, error)
	// PushIDsOf returns the IDs of the pushes stored about key (their
	// PushRecord.Key), ascending; empty when none.
	PushIDsOf(key string) ([]uint64, error)

	// --- The rejected log: requests refused before they were applied,
	// one entry per source and kind (store/rejected.go keeps it bounded) ---

	// AppendRejected stores rec as the newest entry of the rejected log,
	// assigning rec.ID (greater than every entry's before, never reused).
	AppendRejected(rec *PushRecord) (uint64, error)
	// Rejected returns the entry with that ID, nil when there is none.
	Rejected(id uint64) (*PushRecord, error)
	// OldestRejected returns the entry with the lowest ID, nil when the
	// log is empty.
	OldestRejected() (*PushRecord, error)
	// DeleteRejected removes the entry with that ID; nothing when there
	// is none.
	DeleteRejected(id uint64) error
	// RejectedEntries counts the entries in the log now.
	RejectedEntries() (int, error)
	// RejectedNewest returns up to limit entries (limit ≤ 0: all), newest
	// first.
	RejectedNewest(limit int) ([]*PushRecord, error)
	// RejectedGroupEntry returns the ID of the entry that aggregates the
	// group (source, class), 0 when the group has none.
	RejectedGroupEntry(source, class string) (uint64, error)
	// SetRejectedGroupEntry makes id the group's entry.
	SetRejectedGroupEntry(source, class string, id uint64) error
	// DeleteRejectedGroup forgets the group's entry.
	DeleteRejectedGroup(source, class string) error

	// --- The gateway log (exchanges) ---

	// AppendExchange stores x as the newest exchange, assigning x.ID, and
	// removes the oldest beyond the keep newest (keep ≤ 0: keeps all).
	AppendExchange(x *Exchange, keep int) (uint64, error)
	// Exchanges returns up to limit exchanges (limit ≤ 0: all), newest
	// first.
	Exchanges(limit int) ([]Exchange, error)

	// --- The operation journal ---

	// NextOpID returns a new operation ID, greater than every one before;
	// the operation is stored by PutOp.
	NextOpID() (uint64, error)
	// Op returns the operation with that ID, nil when there is none.
	Op(id uint64) (*PendingOp, error)
	// PutOp stores op under op.ID, replacing it, and keeps the open
	// operations (OpenOps) in line with op.State.IsOpen().
	PutOp(op *PendingOp) error
	// OpenOps returns the operations whose state is open, ascending by
	// ID, each as its ID, result key and invoice: enough for a push to
	// pass by the ones it cannot answer without reading them (matchOp).
	OpenOps() ([]OpenOp, error)
	// Ops returns every operation, newest first.
	Ops() ([]*PendingOp, error)

	// --- The audit log: append-only, each entry chained to the one
	// before and keyed (store/auditkey.go) ---

	// AppendAudit stores e as the newest entry: it assigns e.ID (one
	// more than the highest ID ever assigned, AuditSequence), sets e.Prev to ChainHash of the entry
	// before exactly as stored ("" for the first entry) and stores what
	// seal makes of it. It returns the entry as stored. Nothing ever
	// edits or removes an entry.
	AppendAudit(e AuditEntry, seal AuditSealer) (AuditEntry, error)
	// AuditEntry returns the entry with that ID, nil when there is none.
	AuditEntry(id uint64) (*AuditEntry, error)
	// LastAudit returns the newest entry, its ID being its place in the
	// log (as WalkAudit's id); nil when the log is empty.
	LastAudit() (*AuditEntry, error)
	// WalkAudit calls fn with every entry, oldest first (newestFirst:
	// newest first), until fn returns false. id is the entry's place in
	// the log (what AppendAudit assigned), whatever the stored text says;
	// stored is the entry exactly as stored, what the chain and the key
	// cover (VerifyAudit), valid during the call only. An entry that does
	// not decode comes with err set and e empty: fn decides.
	WalkAudit(newestFirst bool, fn func(id uint64, e *AuditEntry, stored []byte, err error) bool) error
	// AuditSequence returns the highest ID ever assigned, which is the
	// newest entry's unless entries at the end were removed.
	AuditSequence() (uint64, error)

	// --- Webshop orders and their conflicts ---

	// Order returns the order stored for an invoice, nil when none.
	Order(invoice string) (*Order, error)
	// PutOrder stores o under o.Invoice, replacing the one there.
	PutOrder(o *Order) error
	// Orders returns every stored order, in invoice order.
	Orders() ([]*Order, error)
	// PutOrderConflict keeps o, refused because its invoice was known
	// with other lines, under its invoice and o.Hash (the same conflict
	// twice is kept once).
	PutOrderConflict(o *Order) error
	// OrderConflicts returns the conflicts of an invoice ("" : of every
	// invoice), in invoice and hash order.
	OrderConflicts(invoice string) ([]*Order, error)

	// --- Batches ---

	// NextBatchNumber returns a new batch number, greater than every one
	// before; the batch's ID is "B" and the number.
	NextBatchNumber() (uint64, error)
	// PutBatch stores b under b.ID and, when b.Hash is set, the lookup
	// BatchByHash(b.Kind, b.Hash).
	PutBatch(b *Batch) error
	// Batch returns the batch with that ID, nil when there is none.
	Batch(id string) (*Batch, error)
	// BatchByHash returns the ID of the batch of kind run from the
	// manifest with hash, "" when none.
	BatchByHash(kind, hash string) (string, error)
	// Batches returns every batch, in ID order (as text: B10 before B2).
	Batches() ([]Batch, error)
	// PutBatchItem stores an item of batch id under it.Index, replacing
	// it.
	PutBatchItem(id string, it BatchItem) error
	// BatchItems returns the items of batch id, by Index.
	BatchItems(id string) ([]BatchItem, error)

	// --- Counters (the status bar's figures) ---

	// AddTally adds d to the counters; the writers call it once per
	// commit. An engine shared by processes may keep counters per process
	// so that they do not wait on each other: Tally is their sum.
	AddTally(d Tally) error
	// Tally returns the counters.
	Tally() (Tally, error)

	UsersTx  // the users (store/users.go)
	OutboxTx // the deliveries of pushes to the shop (store/outbox.go)
	// ReceiptsTx: repeated receipts of a stored push (receipts.go).
	ReceiptsTx
}

// OpenOp is an open operation as OpenOps lists it.
type OpenOp struct {
	ID        uint64
	ResultKey string // "" until a response or push named it
	Invoice   string
}

// Tally holds the counters kept with the records: stored pushes and
// rejected requests ever, reservations and transactions stored. Given to
// AddTally it is a change, which may be negative (an order's placeholder
// deleted).
type Tally struct {
	Pushes, Rejected, Reservations, Transactions int64
}

// PushEncoding is the part of a push's stored form an engine can make
// before the transaction (Repo.EncodePush), on the caller's goroutine, so
// that the single writer only does what must be serial. Its content is the
// engine's; the zero value means "nothing prepared".
type PushEncoding struct{ b []byte }

// EncodedPush is the PushEncoding of b, what an engine's EncodePush made.
func EncodedPush(b []byte) PushEncoding { return PushEncoding{b: b} }

// Bytes is what EncodedPush was given; nil for the zero value.
func (e PushEncoding) Bytes() []byte { return e.b }

// AuditSealer makes the stored form of an audit entry: the rules own the
// key (the store's audit keyring), the engine stores what it returns. It
// returns the entry as stored (with KeyID and MAC set when keyed) and its
// bytes, which the next entry's Prev chains to (ChainHash).
type AuditSealer interface {
	SealEntry(e AuditEntry) (AuditEntry, []byte, error)
}

// Repo is an engine: it runs transactions over the contract.
type Repo interface {
	// Update runs fn in a write transaction and commits it, durably, when
	// fn returns nil; an error from fn rolls everything back. fn may run
	// more than once (Capabilities.Reruns): it must derive everything from
	// the transaction and its own arguments. ctx bounds the wait for the
	// transaction, not a transaction half-way.
	Update(ctx context.Context, fn func(RepoTx) error) error
	// View runs fn in a read transaction: a consistent snapshot.
	View(ctx context.Context, fn func(RepoTx) error) error
	// EncodePush prepares what AppendPush stores of rec (PushEncoding);
	// the zero value when the engine has nothing to prepare.
	EncodePush(rec *PushRecord) PushEncoding
	// Capabilities says what the engine has or lacks beyond the contract.
	Capabilities() Capabilities
	Close() error
}

// Capabilities is what an engine has or lacks beyond RepoTx.
type Capabilities struct {
	// Shared: other processes write the same store (a team's
	// database); what a transaction reads may have changed before it
	// commits, and the engine serializes conflicting writers.
	Shared bool
	// Reruns: Update may run fn more than once (a transaction that lost
	// a race with another writer runs again).
	Reruns bool
	// Lists pages the reservation and transaction lists in the engine
	// (indexes, SQL); nil: the store pages Summaries and Transactions in
	// memory, which suits small stores and tests only.
	Lists Lister
	// Pushes pages the push log in the engine (an index, SQL); nil: the
	// store pages the pushes in memory (PagePushes).
	Pushes PushLister
}

// PushLister pages the push log in an engine, in PushPos's order, with
// KeepPushRow's filter: every engine shows the same pushes in the same
// order as PagePushes. Each call is a read transaction of its own.
type PushLister interface {
	// PushPage is DB.PushPage: one window of the push log.
	PushPage(ctx context.Context, q PushQuery) (PushPage, error)
	// PushCount is DB.PushCount: the pushes q keeps, counted up to
	// q.Limit (0: all).
	PushCount(ctx context.Context, q PushQuery) (int, error)
}

// Lister pages the lists in an engine: the order, the filter and the
// cursors are the ones list.go defines (PosKey, TxPosKey,
// AppendSearchText, AppendTxSearchText), so every engine shows the same
// rows in the same order. Each call is a read transaction of its own.
type Lister interface {
	// ReservationPage is DB.ReservationPage: one window of the
	// reservation list.
	ReservationPage(ctx context.Context, q PageQuery) (Page, error)
	// ReservationCount is DB.ReservationCount: the rows q keeps, counted
	// up to q.Limit (0: all).
	ReservationCount(ctx context.Context, q PageQuery) (int, error)
	// TransactionPage is DB.TransactionPage.
	TransactionPage(ctx context.Context, q PageQuery) (TxPage, error)
	// TransactionCount is DB.TransactionCount.
	TransactionCount(ctx context.Context, q PageQuery) (int, error)
}

// SealAudit is s.SealEntry(e); a nil s stores e unkeyed (its JSON, without
// KeyID and MAC).
func SealAudit(s AuditSealer, e AuditEntry) (AuditEntry, []byte, error) {
	if s == nil {
		e.MAC, e.KeyID = "", ""
		v, err := json.Marshal(e)
		return e, v, err
	}
	return s.SealEntry(e)
}
