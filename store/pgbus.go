package store

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"sync"
	"time"

	"github.com/jackc/pgx/v5"
)

// busChannel is the NOTIFY channel paydesk processes on one database share.
const busChannel = "paydesk_changes"

// maxPayload keeps a notification under PostgreSQL's 8000-byte limit; a
// larger change is announced as an overflow (reload everything).
const maxPayload = 7000

// busMessage is a Change on the wire between processes.
type busMessage struct {
	Origin       string   `json:"o"`
	Pushes       int      `json:"p,omitempty"`
	Rejected     int      `json:"x,omitempty"`
	Receipts     int      `json:"rc,omitempty"`
	ReceiptKeys  []string `json:"rk,omitempty"`
	Reservations []string `json:"r,omitempty"`
	Transactions []string `json:"t,omitempty"`
	Ops          bool     `json:"op,omitempty"`
	Audit        bool     `json:"a,omitempty"`
	Exchanges    bool     `json:"e,omitempty"`
	Orders       bool     `json:"or,omitempty"`
	Approvals    bool     `json:"ap,omitempty"`
	Endpoints    bool     `json:"ep,omitempty"`
	Deliveries   bool     `json:"dl,omitempty"`
	Overflow     bool     `json:"of,omitempty"`
	Inbox        bool     `json:"in,omitempty"`
	// InboxRuns names the inbox rows applied (encodeRuns' form), so that
	// the other listeners ask for the outcomes of those rows only.
	InboxRuns string `json:"ir,omitempty"`
}

// changeBus tells the other processes on a database what this one
// committed, and this one what they did: NOTIFY is a hint, so a listener
// that lost its connection reconnects, LISTENs again and tells its
// subscribers to reload everything (what it missed meanwhile).
type changeBus struct {
	db     *DB
	dsn    string
	origin string
	ctx    context.Context
	stop   context.CancelFunc
	wg     sync.WaitGroup
	ready  chan struct{} // closed once the first LISTEN is in place
}

// startBus starts listening, first on the connection first (dialled by
// Open meanwhile), then on new ones whenever one is lost.
func (db *DB) startBus(dsn string, first *dialing) error {
	var id [8]byte
	if _, err := rand.Read(id[:]); err != nil {
		return err
	}
	ctx, stop := context.WithCancel(context.Background())
	b := &changeBus{db: db, dsn: dsn, origin: hex.EncodeToString(id[:]), ctx: ctx, stop: stop, ready: make(chan struct{})}
	db.bus = b
	conn, err := first.take()
	b.wg.Add(1)
	go b.listen(conn, err)
	select {
	case <-b.ready:
	case <-time.After(5 * time.Second):
		// Live updates come late; the store works without them.
	}
	return nil
}

func (b *changeBus) close() {
	b.stop()
	b.wg.Wait()
}

// payload is c's notification text, at most maxPayload bytes.
func (b *changeBus) payload(c Change) []byte {
	m := busMessage{Origin: b.origin, Pushes: c.Pushes, Rejected: c.Rejected, Receipts: c.Receipts, ReceiptKeys: c.ReceiptKeys, Reservations: c.Reservations,
		Transactions: c.Transactions, Ops: c.Ops, Audit: c.Audit, Exchanges: c.Exchanges, Orders: c.Orders, Approvals: c.Approvals, Endpoints: c.Endpoints, Deliveries: c.Deliveries, Overflow: c.Overflow, Inbox: c.inbox}
	if len(c.inboxRuns) > 0 {
		m.InboxRuns = encodeRuns(c.inboxRuns)
	}
	payload, err := json.Marshal(m)
	if err != nil || len(payload) > maxPayload {
		// A batch's keys overflow often; the rows it applied still go,
		// unless they alone are too long (the listeners then look at all
		// their awaited pushes).
		of := busMessage{Origin: b.origin, Pushes: c.Pushes, Rejected: c.Rejected, Overflow: true, Inbox: c.inbox, InboxRuns: m.InboxRuns}
		if payload, err = json.Marshal(of); err != nil || len(payload) > maxPayload {
			of.InboxRuns = ""
			payload, _ = json.Marshal(of)
		}
	}
	return payload
}

// publish sends c to the other processes (best effort: a lost NOTIFY
// costs a live update, not data).
func (b *changeBus) publish(c Change) {
	if b.db.conn == nil {
		return
	}
	payload := b.payload(c)
	ctx, cancel := context.WithTimeout(b.ctx, 2*time.Second)
	defer cancel()
	_, _ = b.db.conn.Pool().Exec(ctx, `SELECT pg_notify($1, $2)`, busChannel, string(payload))
}

// listen holds a connection of its own LISTENing (conn first, or err, as
// Open dialled it), and delivers what other processes committed to this
// process's subscribers.
func (b *changeBus) listen(conn *pgx.Conn, err error) {
	defer b.wg.Done()
	first := true
	given := true // conn, err: the first connection, dialled by Open
	for b.ctx.Err() == nil {
		if !given {
			conn, err = pgx.Connect(b.ctx, b.dsn)
		}
		given = false
		if err == nil {
			_, err = conn.Exec(b.ctx, "LISTEN "+busChannel)
		}
		if err != nil {
			if conn != nil {
				_ = conn.Close(context.Background())
			}
			select {
			case <-b.ctx.Done():
				return
			case <-time.After(time.Second):
			}
			continue
		}
		if first {
			close(b.ready)
			first = false
		} else {
			b.db.deliver(Change{Overflow: true}) // what came while the connection was down
			if b.db.inbox != nil {
				b.db.inbox.heardApplied(nil) // and pushes applied meanwhile
			}
		}
		for {
			n, err := conn.WaitForNotification(b.ctx)
			if err != nil {
				break
			}
			var m busMessage
			if json.Unmarshal([]byte(n.Payload), &m) != nil || m.Origin == b.origin {
				continue
			}
			if m.Inbox && b.db.inbox != nil {
				// Another process applied pushes, perhaps ours: those rows'
				// outcomes, or (rows not named) every awaited one's.
				runs, err := decodeRuns(m.InboxRuns)
				if err != nil {
					runs = nil
				}
				b.db.inbox.heardApplied(runs)
			}
			b.db.deliver(Change{Pushes: m.Pushes, Rejected: m.Rejected, Receipts: m.Receipts, ReceiptKeys: m.ReceiptKeys, Reservations: m.Reservations, Transactions: m.Transactions,
				Ops: m.Ops, Audit: m.Audit, Exchanges: m.Exchanges, Orders: m.Orders, Approvals: m.Approvals, Endpoints: m.Endpoints, Deliveries: m.Deliveries, Overflow: m.Overflow})
		}
		_ = conn.Close(context.Background())
	}
	if first {
		close(b.ready)
	}
}

// String names the bus for logs.
func (b *changeBus) String() string { return fmt.Sprintf("LISTEN %s (%s)", busChannel, b.origin) }
