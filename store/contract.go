package store

import (
	"paydesk/api"
	"paydesk/internal/fold"
	"paydesk/internal/query"
	"paydesk/store/domain"
	"time"
)

// The domain values and the engine contract live in store/domain, the leaf
// package both the rules here and the engines import. These aliases keep
// store's API as it was for its callers.

type (
	AuditSealer    = domain.AuditSealer
	ApplyResult    = domain.ApplyResult
	Approval       = domain.Approval
	ApprovalState  = domain.ApprovalState
	ApprovalsTx    = domain.ApprovalsTx
	Attempt        = domain.Attempt
	AuditEntry     = domain.AuditEntry
	Batch          = domain.Batch
	BatchItem      = domain.BatchItem
	BatchItemState = domain.BatchItemState
	Capabilities   = domain.Capabilities
	Counts         = domain.Counts
	Delivery       = domain.Delivery
	DeliveryQuery  = domain.DeliveryQuery
	DeliveryState  = domain.DeliveryState
	Exchange       = domain.Exchange
	Kind           = domain.Kind
	Line           = domain.Line
	Lister         = domain.Lister
	OpState        = domain.OpState
	OpenDelivery   = domain.OpenDelivery
	OpenOp         = domain.OpenOp
	Order          = domain.Order
	OrphanRequest  = domain.OrphanRequest
	OutboxTx       = domain.OutboxTx
	PushReceipt    = domain.PushReceipt
	PushRef        = domain.PushRef
	PushRepeats    = domain.PushRepeats
	ReceiptsTx     = domain.ReceiptsTx
	Page           = domain.Page
	PageQuery      = domain.PageQuery
	PageRow        = domain.PageRow
	Parcel         = domain.Parcel
	PendingOp      = domain.PendingOp
	PushEncoding   = domain.PushEncoding
	PushRecord     = domain.PushRecord
	Repo           = domain.Repo
	RepoTx         = domain.RepoTx
	Request        = domain.Request
	Reservation    = domain.Reservation
	SortBy         = domain.SortBy
	State          = domain.State
	Status         = domain.Status
	Summary        = domain.Summary
	Tally          = domain.Tally
	Transaction    = domain.Transaction
	TxPage         = domain.TxPage
	TxPageRow      = domain.TxPageRow
	Update         = domain.Update
	User           = domain.User
	UsersTx        = domain.UsersTx
)

const (
	ApprovalApproved      = domain.ApprovalApproved
	ApprovalDenied        = domain.ApprovalDenied
	ApprovalExpired       = domain.ApprovalExpired
	ApprovalPending       = domain.ApprovalPending
	BatchCancelRest       = domain.BatchCancelRest
	BatchCapture          = domain.BatchCapture
	Confirms              = domain.Confirms
	DeliveryDelivered     = domain.DeliveryDelivered
	DeliveryFailed        = domain.DeliveryFailed
	DeliveryPending       = domain.DeliveryPending
	ItemFailed            = domain.ItemFailed
	ItemOutcomeUnknown    = domain.ItemOutcomeUnknown
	ItemPlanned           = domain.ItemPlanned
	ItemRefused           = domain.ItemRefused
	ItemResolved          = domain.ItemResolved
	ItemSent              = domain.ItemSent
	ItemSettled           = domain.ItemSettled
	KindCapture           = domain.KindCapture
	KindGiftCardPay       = domain.KindGiftCardPay
	KindGiftCardRefund    = domain.KindGiftCardRefund
	KindGiftCardRemainder = domain.KindGiftCardRemainder
	KindRefund            = domain.KindRefund
	KindUnknown           = domain.KindUnknown
	MaxAttemptsKept       = domain.MaxAttemptsKept
	MaxPushReceipts       = domain.MaxPushReceipts
	OpFailed              = domain.OpFailed
	OpOutcomeUnknown      = domain.OpOutcomeUnknown
	OpPending             = domain.OpPending
	OpResolved            = domain.OpResolved
	OpSent                = domain.OpSent
	OpSettled             = domain.OpSettled
	OutcomeApplied        = domain.OutcomeApplied
	OutcomeConfirmed      = domain.OutcomeConfirmed
	OutcomeDuplicate      = domain.OutcomeDuplicate
	OutcomeIgnored        = domain.OutcomeIgnored
	OutcomeRejected       = domain.OutcomeRejected
	OutcomeStored         = domain.OutcomeStored
	PlaceholderPrefix     = domain.PlaceholderPrefix
	ProvenanceSync        = domain.ProvenanceSync
	ShipmentWindow        = domain.ShipmentWindow
	SignatureMalformed    = domain.SignatureMalformed
	SignatureMismatch     = domain.SignatureMismatch
	SignatureMissing      = domain.SignatureMissing
	SignatureStale        = domain.SignatureStale
	SignatureUnchecked    = domain.SignatureUnchecked
	SignatureUnknown      = domain.SignatureUnknown
	SignatureValid        = domain.SignatureValid
	SortAmount            = domain.SortAmount
	SortCreated           = domain.SortCreated
	SortCustomer          = domain.SortCustomer
	SortInvoice           = domain.SortInvoice
	SortState             = domain.SortState
	StateAwaitingCustomer = domain.StateAwaitingCustomer
	StateCancelled        = domain.StateCancelled
	StateCaptured         = domain.StateCaptured
	StateClosed           = domain.StateClosed
	StateDeclined         = domain.StateDeclined
	StateOrderMissing     = domain.StateOrderMissing
	StateOutcomeUnknown   = domain.StateOutcomeUnknown
	StatePartlyCaptured   = domain.StatePartlyCaptured
	StateReserved         = domain.StateReserved
	TxSortAmount          = domain.TxSortAmount
	TxSortCreated         = domain.TxSortCreated
	TxSortCustomer        = domain.TxSortCustomer
	TxSortInvoice         = domain.TxSortInvoice
	TxSortKind            = domain.TxSortKind
	TxSortStatus          = domain.TxSortStatus
)

// ExchangeFrom is domain.ExchangeFrom.
func ExchangeFrom(x api.Exchange) Exchange { return domain.ExchangeFrom(x) }

// KindOf is domain.KindOf.
func KindOf(transactionType string) Kind { return domain.KindOf(transactionType) }

// RefOf is the PushRef of a stored push.
func RefOf(p *PushRecord) PushRef { return domain.RefOf(p) }

// OrderMissing is domain.OrderMissing.
func OrderMissing(s *Summary) bool { return domain.OrderMissing(s) }

// PushOutcome is domain.PushOutcome.
func PushOutcome(rejected bool, applied bool, duplicate bool, ignored string, reason string) (word string, detail string) {
	return domain.PushOutcome(rejected, applied, duplicate, ignored, reason)
}

// SignatureVerdict is domain.SignatureVerdict.
func SignatureVerdict(err error) string { return domain.SignatureVerdict(err) }

// Unexported names the rules use for domain values.
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

// The list filter's meaning (store/domain/where.go), by the names the
// log filters use.
func inCreated(r *query.TimeRange, t time.Time) bool { return domain.InCreated(r, t) }
func containsAll(text []byte, words [][]byte) bool   { return domain.ContainsAll(text, words) }
func wordBytes(words []string) [][]byte              { return domain.WordBytes(words) }
func foldGerman(s string) (string, bool)             { return domain.FoldGerman(s) }
func keepTxWhere(t *Transaction, q *PageQuery, f *fold.Folder) bool {
	return domain.KeepTxWhere(t, q, f)
}
