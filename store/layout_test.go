package store

import (
	"encoding/binary"

	"paydesk/store/kv"
	"paydesk/store/kvlayout"
)

// The bucket layout (store/kvlayout, store/kv) by the names the tests use
// that build or damage a layout-7 file or database by hand.
var (
	allBuckets     = kvlayout.AllBuckets
	kSchema        = kvlayout.KSchema
	bMeta          = kvlayout.BMeta
	bReservation   = kvlayout.BReservation
	bSummary       = kvlayout.BSummary
	bResNumber     = kvlayout.BResNumber
	bKeyOwner      = kvlayout.BKeyOwner
	bInvoice       = kvlayout.BInvoice
	bTransaction   = kvlayout.BTransaction
	bRelated       = kvlayout.BRelated
	bOrphan        = kvlayout.BOrphan
	bPush          = kvlayout.BPush
	bPushKey       = kvlayout.BPushKey
	bOp            = kvlayout.BOp
	bAudit         = kvlayout.BAudit
	bExchange      = kvlayout.BExchange
	bBatch         = kvlayout.BBatch
	bBatchItem     = kvlayout.BBatchItem
	bBatchHash     = kvlayout.BBatchHash
	bDelivery      = []byte("deliveries")
	bDeliveryChain = []byte("deliverieschain")
	bDeliveryDue   = []byte("deliveriesdue")
)

// Index kinds in the invoice index (invoice 0x00 key → kind).
const (
	invReservation = 'r'
	invTransaction = 't'
	invOrphan      = 'd'
)

func u64(v uint64) []byte {
	var b [8]byte
	binary.BigEndian.PutUint64(b[:], v)
	return b[:]
}

func pairKey(a, b string) []byte {
	k := make([]byte, 0, len(a)+1+len(b))
	k = append(k, a...)
	k = append(k, 0)
	return append(k, b...)
}

// The bucket engine's transaction and bucket (store/kv).
type (
	Tx     = kv.Tx
	Bucket = kv.Bucket
)
