package sandbox

import (
	"encoding/binary"
	"encoding/json"
	"fmt"
	"os"
	"time"

	"github.com/shopspring/decimal"
	bolt "go.etcd.io/bbolt"

	"paydesk/api"
)

// Reservation states.
const (
	resPending  = "pending"  // 791: the customer has not finished the checkout
	resReserved = "reserved" // 190: approved; may be captured, updated, cancelled
	resDeclined = "declined" // 690: the risk check or the customer said no
	resClosed   = "closed"   // cancelled (what was not captured)
)

// Kinds of transaction records; payments use their TransactionType.
const (
	kindReserve  = api.ActionReserve
	kindCancel   = api.ActionCancelReservation
	kindUpdate   = api.ActionUpdateReservation
	kindTransfer = typeTransfer
)

// The bank transfer stand-in of the gift card remainder page.
const (
	serviceTransfer = "transfer"
	typeTransfer    = "C001"
)

// line is one article of a reservation with its ledger.
type line struct {
	Number    string
	Title     string
	Type      string
	Price     decimal.Decimal
	Vat       decimal.Decimal
	Quantity  int
	Captured  int
	Cancelled int
}

func (l line) left() int { return l.Quantity - l.Captured - l.Cancelled }

// reservation is a deferred-invoice reservation.
type reservation struct {
	Number                string
	Key                   string // the Reserve transaction
	WebsiteKey            string
	State                 string
	Created               time.Time
	Currency              string
	Invoice               string
	Lines                 []line
	Billing               api.Address
	Shipping              api.Address
	ShippingSameAsBilling bool
	PushURL               string
	ReturnURL             string
	// Return holds where the customer goes back to after the checkout.
	Return returnURLs
	Echo   echoFields
}

// total is what is reserved: every line at its full quantity.
func (r *reservation) total() decimal.Decimal {
	t := decimal.Zero
	for _, l := range r.Lines {
		t = t.Add(l.Price.Mul(decimal.NewFromInt(int64(l.Quantity))))
	}
	return t
}

// remaining is what may still be captured.
func (r *reservation) remaining() decimal.Decimal {
	t := decimal.Zero
	for _, l := range r.Lines {
		t = t.Add(l.Price.Mul(decimal.NewFromInt(int64(l.left()))))
	}
	return t
}

func (r *reservation) hasLeft() bool {
	for _, l := range r.Lines {
		if l.left() > 0 {
			return true
		}
	}
	return false
}

// txRecord is one transaction: what its response and pushes were built from.
type txRecord struct {
	Key               string
	Kind              string
	WebsiteKey        string
	Service           string
	Invoice           string
	Currency          string
	Amount            decimal.Decimal
	Status            int
	SubCode           string `json:",omitempty"`
	Created           time.Time
	PushURL           string `json:",omitempty"`
	ReservationNumber string `json:",omitempty"`
	InvoiceNumber     string `json:",omitempty"`
	PaymentKey        string `json:",omitempty"`
	Original          string `json:",omitempty"` // refunds: the payment
	Group             string `json:",omitempty"` // gift card parts: the group
	Provider          api.Provider
	Card              string          `json:",omitempty"`
	LastName          string          `json:",omitempty"`
	Email             string          `json:",omitempty"`
	Refunded          decimal.Decimal // payments: refunded so far
	Pushes            [][]byte        // every push body sent for this key, for Resend
	// Seq orders transactions made in the same second (InvoiceInfo).
	Seq uint64 `json:",omitempty"`
	// StatusAt is when Status was last set after creation (a checkout).
	StatusAt time.Time
	// BaseURL is the gateway address the request came to, for the checkout
	// link of a status lookup.
	BaseURL string `json:",omitempty"`
	// Echo holds the request's fields the gateway gives back.
	Echo echoFields
}

// card is a seeded gift card.
type card struct {
	Provider api.Provider
	Number   string
	PIN      string
	Balance  decimal.Decimal
	Currency string
	Service  string
}

func cardID(p api.Provider, number string) string { return string(p) + ":" + number }

// group is a gift card payment paid in parts.
type group struct {
	Key        string
	WebsiteKey string
	Service    string
	Currency   string
	Invoice    string
	Total      decimal.Decimal
	Paid       decimal.Decimal
	Parts      []string
	PushURL    string
	ReturnURL  string
	Created    time.Time
	Echo       echoFields
}

func (g *group) remainder() decimal.Decimal { return g.Total.Sub(g.Paid) }

// outboxEntry is a push waiting for its 200.
type outboxEntry struct {
	Seq        uint64
	TxKey      string
	URL        string `json:",omitempty"` // the request's PushURL; "" = the configured one at send time
	WebsiteKey string
	Body       []byte
	Tries      int
	NextAt     time.Time
	Dead       bool   // gave up after maxTries; waits for Resend
	LastError  string `json:",omitempty"`
	inFlight   bool
}

// Buckets of the state file.
var (
	bucketMeta   = []byte("meta")
	bucketTx     = []byte("transactions")
	bucketRes    = []byte("reservations")
	bucketCards  = []byte("cards")
	bucketGroups = []byte("groups")
	bucketOutbox = []byte("outbox")
	metaIDs      = []byte("ids")
	metaOutbox   = []byte("outboxSeq")
)

// storeOp is one pending write of the state file.
type storeOp struct {
	bucket []byte
	key    []byte
	value  any // nil deletes
}

func seqKey(seq uint64) []byte {
	var b [8]byte
	binary.BigEndian.PutUint64(b[:], seq)
	return b[:]
}

// openState opens (or creates) the state file.
func openState(path string) (*bolt.DB, error) {
	db, err := bolt.Open(path, 0o600, &bolt.Options{Timeout: 2 * time.Second})
	if err != nil {
		return nil, fmt.Errorf("open sandbox state %s: %w", path, err)
	}
	// bbolt keeps the mode of an existing file; the state holds customer
	// data, so it is for the owner only.
	_ = os.Chmod(path, 0o600)
	err = db.Update(func(tx *bolt.Tx) error {
		for _, b := range [][]byte{bucketMeta, bucketTx, bucketRes, bucketCards, bucketGroups, bucketOutbox} {
			if _, err := tx.CreateBucketIfNotExists(b); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		db.Close()
		return nil, fmt.Errorf("prepare sandbox state %s: %w", path, err)
	}
	return db, nil
}

// load reads the whole state file into memory.
func (s *Sandbox) load() error {
	return s.db.View(func(tx *bolt.Tx) error {
		if v := tx.Bucket(bucketMeta).Get(metaIDs); v != nil {
			var ids idSource
			if err := json.Unmarshal(v, &ids); err != nil {
				return fmt.Errorf("read ids: %w", err)
			}
			s.ids.N, s.ids.Invoice = ids.N, ids.Invoice
			if s.cfg.Seed == 0 {
				s.ids.Seed = ids.Seed
			}
		}
		if v := tx.Bucket(bucketMeta).Get(metaOutbox); len(v) == 8 {
			s.outboxSeq = binary.BigEndian.Uint64(v)
		}
		err := tx.Bucket(bucketTx).ForEach(func(k, v []byte) error {
			var t txRecord
			if err := json.Unmarshal(v, &t); err != nil {
				return fmt.Errorf("read transaction %s: %w", k, err)
			}
			s.txs[t.Key] = &t
			s.byInvoice[t.Invoice] = append(s.byInvoice[t.Invoice], &t)
			return nil
		})
		if err != nil {
			return err
		}
		err = tx.Bucket(bucketRes).ForEach(func(k, v []byte) error {
			var r reservation
			if err := json.Unmarshal(v, &r); err != nil {
				return fmt.Errorf("read reservation %s: %w", k, err)
			}
			s.resByNumber[r.Number] = &r
			s.resByKey[r.Key] = &r
			return nil
		})
		if err != nil {
			return err
		}
		err = tx.Bucket(bucketCards).ForEach(func(k, v []byte) error {
			var c card
			if err := json.Unmarshal(v, &c); err != nil {
				return fmt.Errorf("read card %s: %w", k, err)
			}
			s.cards[cardID(c.Provider, c.Number)] = &c
			return nil
		})
		if err != nil {
			return err
		}
		err = tx.Bucket(bucketGroups).ForEach(func(k, v []byte) error {
			var g group
			if err := json.Unmarshal(v, &g); err != nil {
				return fmt.Errorf("read gift card group %s: %w", k, err)
			}
			s.groups[g.Key] = &g
			return nil
		})
		if err != nil {
			return err
		}
		// ForEach walks the outbox in key order, which is the order the
		// pushes were made in.
		return tx.Bucket(bucketOutbox).ForEach(func(k, v []byte) error {
			var e outboxEntry
			if err := json.Unmarshal(v, &e); err != nil {
				return fmt.Errorf("read outbox entry %x: %w", k, err)
			}
			e.NextAt = time.Time{} // after a restart, try at once
			s.outboxAdd(&e)
			return nil
		})
	})
}

// The save* helpers record writes; flushLocked makes them durable in one
// transaction. All run with s.mu held.

func (s *Sandbox) saveTx(t *txRecord) { s.queueWrite(bucketTx, []byte(t.Key), t) }
func (s *Sandbox) saveRes(r *reservation) {
	s.queueWrite(bucketRes, []byte(r.Number), r)
}
func (s *Sandbox) saveCard(c *card) {
	s.queueWrite(bucketCards, []byte(cardID(c.Provider, c.Number)), c)
}
func (s *Sandbox) saveGroup(g *group) { s.queueWrite(bucketGroups, []byte(g.Key), g) }
func (s *Sandbox) saveOutbox(e *outboxEntry) {
	s.queueWrite(bucketOutbox, seqKey(e.Seq), e)
}
func (s *Sandbox) deleteOutbox(seq uint64) { s.queueWrite(bucketOutbox, seqKey(seq), nil) }

func (s *Sandbox) queueWrite(bucket, key []byte, v any) {
	if s.db == nil {
		return
	}
	s.writes = append(s.writes, storeOp{bucket: bucket, key: key, value: v})
}

// flushLocked writes the recorded changes, with the id counters, in one
// bbolt transaction. Memory stays the truth while running; a failed write
// is logged and reported.
func (s *Sandbox) flushLocked() error {
	if s.db == nil || len(s.writes) == 0 {
		s.writes = s.writes[:0]
		return nil
	}
	ops := s.writes
	s.writes = nil
	err := s.db.Update(func(tx *bolt.Tx) error {
		for _, op := range ops {
			b := tx.Bucket(op.bucket)
			if op.value == nil {
				if err := b.Delete(op.key); err != nil {
					return err
				}
				continue
			}
			v, err := json.Marshal(op.value)
			if err != nil {
				return fmt.Errorf("encode %s %s: %w", op.bucket, op.key, err)
			}
			if err := b.Put(op.key, v); err != nil {
				return err
			}
		}
		ids, err := json.Marshal(s.ids)
		if err != nil {
			return err
		}
		if err := tx.Bucket(bucketMeta).Put(metaIDs, ids); err != nil {
			return err
		}
		return tx.Bucket(bucketMeta).Put(metaOutbox, seqKey(s.outboxSeq))
	})
	if err != nil {
		err = fmt.Errorf("save sandbox state: %w", err)
		s.logf("%s", err)
	}
	return err
}
