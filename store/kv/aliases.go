package kv

import (
	"paydesk/internal/fold"
	"paydesk/store/domain"
)

// The domain values and the engine contract live in store/domain. The
// bucket engine's files name them as they did inside package store, by
// these aliases, so that their text stays as it was.

type (
	AuditSealer  = domain.AuditSealer
	Approval     = domain.Approval
	AuditEntry   = domain.AuditEntry
	Batch        = domain.Batch
	BatchItem    = domain.BatchItem
	Capabilities = domain.Capabilities
	Delivery     = domain.Delivery
	Exchange     = domain.Exchange
	Kind         = domain.Kind
	Line         = domain.Line
	Lister       = domain.Lister
	OpenDelivery = domain.OpenDelivery
	OpenOp       = domain.OpenOp
	Order        = domain.Order
	PushReceipt  = domain.PushReceipt
	PushRef      = domain.PushRef
	PushRepeats  = domain.PushRepeats
	Page         = domain.Page
	PageQuery    = domain.PageQuery
	PageRow      = domain.PageRow
	PendingOp    = domain.PendingOp
	PushEncoding = domain.PushEncoding
	PushRecord   = domain.PushRecord
	Repo         = domain.Repo
	RepoTx       = domain.RepoTx
	Reservation  = domain.Reservation
	SortBy       = domain.SortBy
	State        = domain.State
	Status       = domain.Status
	Summary      = domain.Summary
	Tally        = domain.Tally
	Transaction  = domain.Transaction
	TxPage       = domain.TxPage
	TxPageRow    = domain.TxPageRow
	Update       = domain.Update
	User         = domain.User
)

const (
	KindCapture         = domain.KindCapture
	KindRefund          = domain.KindRefund
	MaxPushReceipts     = domain.MaxPushReceipts
	OpPending           = domain.OpPending
	SignatureValid      = domain.SignatureValid
	SortAmount          = domain.SortAmount
	SortCreated         = domain.SortCreated
	SortCustomer        = domain.SortCustomer
	SortInvoice         = domain.SortInvoice
	SortState           = domain.SortState
	StateOrderMissing   = domain.StateOrderMissing
	StateOutcomeUnknown = domain.StateOutcomeUnknown
	TxSortAmount        = domain.TxSortAmount
	TxSortCreated       = domain.TxSortCreated
	TxSortCustomer      = domain.TxSortCustomer
	TxSortInvoice       = domain.TxSortInvoice
	TxSortKind          = domain.TxSortKind
	TxSortStatus        = domain.TxSortStatus
)

// OrderMissing is domain.OrderMissing.
func OrderMissing(s *Summary) bool { return domain.OrderMissing(s) }

// An orphan data request, by the name the bucket contract uses.
type orphanRequest = domain.OrphanRequest

// The number of sort orders of each list.
const (
	SortCount   = domain.SortCount
	TxSortCount = domain.TxSortCount
)

// AppendSearchText is domain.AppendSearchText.
func AppendSearchText(dst []byte, s *Summary, f *fold.Folder) []byte {
	return domain.AppendSearchText(dst, s, f)
}

// AppendTxSearchText is domain.AppendTxSearchText.
func AppendTxSearchText(dst []byte, t *Transaction, f *fold.Folder) []byte {
	return domain.AppendTxSearchText(dst, t, f)
}

// boltTx and boltBucket are the bbolt transaction and bucket under the
// Engine interface (engine.go), by the names the list indexes use.
type (
	boltTx     = BoltTx
	boltBucket = BoltBucket
)

// The list filter's meaning (store/domain/where.go), by the names the
// bucket engine's lists use.
func keepSummary(s *Summary, q *PageQuery, f *fold.Folder) bool { return domain.KeepSummary(s, q, f) }
func keepTxWhere(t *Transaction, q *PageQuery, f *fold.Folder) bool {
	return domain.KeepTxWhere(t, q, f)
}
func containsAll(text []byte, words [][]byte) bool { return domain.ContainsAll(text, words) }
func wordBytes(words []string) [][]byte            { return domain.WordBytes(words) }
func window(n int, pos func(i int) []byte, q *PageQuery) (from, to int) {
	return domain.Window(n, pos, q)
}
