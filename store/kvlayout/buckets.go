package kvlayout

import (
	"bytes"
	"fmt"
	"strings"
)

// Buckets. Keys of sequence-numbered buckets are 8-byte big-endian IDs so a
// cursor walks them in order.
var (
	BMeta        = []byte("meta")         // schema version, counters
	BReservation = []byte("reservations") // key → Reservation (binary; JSON before layout 8)
	BSummary     = []byte("summaries")    // key → Summary (binary): the kv PostgreSQL's; a file reads its rows from the records since layout 13
	BResNumber   = []byte("resnumbers")   // reservation number → key
	BKeyOwner    = []byte("keyowner")     // data request / transaction key → reservation key
	BInvoice     = []byte("invoices")     // invoice 0x00 key → kind byte
	BTransaction = []byte("transactions") // key → Transaction (binary); key 0x00 id → push content hash
	BRelated     = []byte("related")      // original key 0x00 refund key → nil
	BOrphan      = []byte("orphans")      // data request key → orphanRequest (JSON)
	BPush        = []byte("pushes")       // id → PushRecord (binary)
	BPushKey     = []byte("pushkey")      // key 0x00 id → content hash, for pushes stored before the index moved
	BRejected    = []byte("rejected")     // id → PushRecord (binary)
	BOp          = []byte("ops")          // id → PendingOp (JSON)
	BOpOpen      = []byte("opsopen")      // id → result key 0x00 invoice, for ops whose state IsOpen
	BAudit       = []byte("audit")        // id → AuditEntry (JSON)
	BExchange    = []byte("exchanges")    // id → Exchange (JSON)
	// Orders from the webshop (intake, import): invoice → Order (JSON), and
	// the ones refused for other lines under a known invoice: invoice 0x00
	// content hash → Order (JSON).
	BOrder         = []byte("orders")
	BOrderConflict = []byte("orderconflicts")
	// Batches of work from a shipment manifest (store/batches.go): id → Batch
	// (JSON); id 0x00 index → BatchItem (JSON); kind 0x00 manifest hash → id.
	BBatch     = []byte("batches")
	BBatchItem = []byte("batchitems")
	BBatchHash = []byte("batchhashes")
	// The users (name → User, JSON) and the four-eyes approval requests
	// (id → Approval, JSON): created by their first write.
	BUsers    = []byte("users")
	BApproval = []byte("approvals")
)

// The outbox (store/kv/kvrepo_outbox.go): BDelivery holds id → Delivery
// (delivery.go), the others are its indexes; KForwardTo in BMeta holds the
// store's forward endpoints, their URLs joined by newlines.
var (
	BDelivery      = []byte("deliveries")
	BDeliveryOpen  = []byte("deliveriesopen")
	BDeliveryChain = []byte("deliverieschain")
	BDeliveryDue   = []byte("deliveriesdue")
	KForwardTo     = []byte("forward-to")
)

var AllBuckets = [][]byte{BMeta, BReservation, BSummary, BResNumber, BKeyOwner, BInvoice, BTransaction, BRelated,
	BOrphan, BPush, BPushKey, BRejected, BOp, BOpOpen, BAudit, BExchange, BOrder, BOrderConflict,
	BBatch, BBatchItem, BBatchHash}

var (
	KSchema        = []byte("schema")
	KPushCount     = []byte("pushcount")
	KRejectedCount = []byte("rejectedcount")
	// Counters kept per commit: bbolt's Bucket.Stats walks every page.
	KReservationCount = []byte("reservationcount")
	KTransactionCount = []byte("transactioncount")
)

// Be64 reads a big-endian number (a sequence key, a counter).
func Be64(b []byte) uint64 {
	var v uint64
	for _, c := range b {
		v = v<<8 | uint64(c)
	}
	return v
}

// IsPushIndexKey tells the push index's entries in the transactions bucket
// from transaction records (whose keys never hold a 0x00).
func IsPushIndexKey(k []byte) bool { return bytes.IndexByte(k, 0) >= 0 }

// KRejectedGroup prefixes, in meta, the index group key → ID of the
// rejected log's entry for that group. It lives in meta rather than a
// bucket of its own so that the schema does not change.
var KRejectedGroup = []byte("rejgroup\x00")

// DecodeForwardTo reads meta's KForwardTo: none when empty.
func DecodeForwardTo(v []byte) ([]string, error) {
	if len(v) == 0 {
		return nil, nil
	}
	eps := strings.Split(string(v), "\n")
	for _, ep := range eps {
		if ep == "" {
			return nil, fmt.Errorf("forward-to: an empty endpoint: %w", ErrCorrupt)
		}
	}
	return eps, nil
}
