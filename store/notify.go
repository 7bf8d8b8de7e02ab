package store

import "sync"

// subscriberBuffer is how many notifications a slow subscriber may lag
// behind before they are coalesced into one Overflow change.
const subscriberBuffer = 64

type subscriber struct {
	ch       chan Change
	mu       sync.Mutex
	overflow bool
}

// Subscribe returns a channel that receives a Change after each commit, and
// a function that ends the subscription. The writer never waits for a
// subscriber: when the channel is full, notifications are dropped and the
// next one delivered carries Overflow (reload everything).
func (db *DB) Subscribe() (<-chan Change, func()) {
	s := &subscriber{ch: make(chan Change, subscriberBuffer)}
	db.subMu.Lock()
	db.subs[s] = struct{}{}
	db.subMu.Unlock()
	var once sync.Once
	return s.ch, func() {
		once.Do(func() {
			db.subMu.Lock()
			if _, ok := db.subs[s]; ok {
				delete(db.subs, s)
				close(s.ch)
			}
			db.subMu.Unlock()
		})
	}
}

func (db *DB) notify(c Change) {
	if c.isEmpty() {
		return
	}
	c.seenReservations, c.seenTransactions = nil, nil
	if db.bus != nil {
		db.bus.publish(c) // other processes on the same database hear it too
	}
	db.deliver(c)
}

// deliver hands c to this process's subscribers.
func (db *DB) deliver(c Change) {
	db.subMu.Lock()
	defer db.subMu.Unlock()
	for s := range db.subs {
		s.send(c)
	}
}

func (s *subscriber) send(c Change) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.overflow {
		c.Overflow = true
	}
	select {
	case s.ch <- c:
		s.overflow = false
	default:
		s.overflow = true
	}
}

func (db *DB) closeSubscribers() {
	db.subMu.Lock()
	defer db.subMu.Unlock()
	for s := range db.subs {
		close(s.ch)
		delete(db.subs, s)
	}
}

func (c Change) isEmpty() bool {
	return c.Pushes == 0 && c.Rejected == 0 && c.Receipts == 0 && len(c.Reservations) == 0 && len(c.Transactions) == 0 &&
		!c.Ops && !c.Audit && !c.Exchanges && !c.Orders && !c.Approvals && !c.Endpoints && !c.Deliveries && !c.inbox
}
