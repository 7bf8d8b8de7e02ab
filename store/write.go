package store

import (
	"context"

	"paydesk/api"
)

// ApplyPush stores a verified, decoded push and its effects in one
// transaction and returns after that transaction is on disk (group commit:
// concurrent calls share one fsync). It is idempotent (a push with the same
// content is stored once and changes nothing the second time) and
// order-independent (a status never moves back; a final status never
// changes). A push for a key the cache has never seen creates the record:
// a Reserve push creates a reservation shell, a Pay/Refund push a
// transaction. A push matching an open operation settles it.
//
// rec carries the raw request; ID, the decoded summary and the verdict
// fields are filled in by the store.
func (db *DB) ApplyPush(ctx context.Context, rec PushRecord, p *api.Push) (ApplyResult, error) {
	return ApplyResult{}, errNotYet
}

// RecordRejectedPush keeps a push that was refused (bad signature, malformed
// body) in the bounded rejected log, with rec.Reason saying which check
// failed. It changes nothing else. Group-committed like ApplyPush.
func (db *DB) RecordRejectedPush(ctx context.Context, rec PushRecord) (uint64, error) {
	return 0, errNotYet
}

// BeginOp writes op to the journal before its request is sent and returns
// its ID. Action, Service, Invoice, Currency, Amount and Target are filled
// from op.Request when empty.
func (db *DB) BeginOp(op PendingOp) (uint64, error) { return 0, errNotYet }

// ApplyResponse records the gateway's answer to operation id: the domain
// effects (a Reserve response creates the reservation with the sent lines, a
// capture response records the capture with its lines, …) and the operation's
// new state (settled, failed, or sent while the status is pending), in one
// transaction. A response with status 491 or without a key created nothing
// at the gateway: the operation fails and the ledger is untouched.
func (db *DB) ApplyResponse(id uint64, resp *api.Response) (*PendingOp, error) {
	return nil, errNotYet
}

// FailOp marks operation id failed without a response: the request was not
// sent (api.NotSentError) or the gateway refused it (HTTP 400/500).
func (db *DB) FailOp(id uint64, reason string) error { return errNotYet }

// MarkOutcomeUnknown marks operation id "outcome unknown": the request may
// have reached the gateway but no trustworthy answer came back. It stays
// visible until a matching push settles it or the operator resolves it; it is
// never retried.
func (db *DB) MarkOutcomeUnknown(id uint64, reason string) error { return errNotYet }

// ResolveOp closes an open operation by hand with the operator's note.
func (db *DB) ResolveOp(id uint64, note string) error { return errNotYet }

// AppendAudit adds an entry to the append-only audit log and returns its ID.
// A zero Time is set to now.
func (db *DB) AppendAudit(e AuditEntry) (uint64, error) { return 0, errNotYet }

// AppendExchange adds an entry to the gateway log, keeping the newest
// Options.MaxExchanges.
func (db *DB) AppendExchange(x Exchange) (uint64, error) { return 0, errNotYet }

// PutReservations writes reservations as given (their ledger fields are
// recomputed), replacing any with the same key. It is for imports, fixtures
// and generated benchmark data (storetest.Generate), not for gateway
// answers.
func (db *DB) PutReservations(rs []*Reservation) error { return errNotYet }
