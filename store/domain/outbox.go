package domain

import "time"

// DeliveryState is where a delivery stands.
type DeliveryState string

// IsOpen reports whether the worker still has to send it.
func (s DeliveryState) IsOpen() bool { return s == DeliveryPending }

// Attempt is one try to deliver a push.
type Attempt struct {
	At      time.Time     `json:"at"`
	Status  int           `json:"status,omitempty"` // HTTP status, 0 when none came
	Error   string        `json:"error,omitempty"`  // no answer: why
	Latency time.Duration `json:"latency"`
	// Excerpt is the start of the answer's body, made inert
	// (internal/textsafe) and bounded by the worker.
	Excerpt string `json:"excerpt,omitempty"`
}

// OK reports a 200, the only answer the gateway family takes as delivered.
func (a Attempt) OK() bool { return a.Error == "" && a.Status == 200 }

// Delivery is one push to one endpoint.
type Delivery struct {
	ID       uint64        `json:"id"`
	PushID   uint64        `json:"push_id"`
	Key      string        `json:"key"` // the push's transaction key: the order is kept per key
	Endpoint string        `json:"endpoint"`
	Created  time.Time     `json:"created"`
	State    DeliveryState `json:"state"`
	// NextAt is when the next attempt is due (pending only).
	NextAt      time.Time `json:"next_at,omitempty"`
	DeliveredAt time.Time `json:"delivered_at,omitempty"`
	Attempts    []Attempt `json:"attempts,omitempty"`
	// Resent counts the times an operator sent it again (a resend).
	Resent int `json:"resent,omitempty"`
	// Tries counts the attempts since it was created or last resent: the
	// step of the retry schedule it is on.
	Tries int `json:"tries,omitempty"`
}

// LastAttempt is the newest attempt, the zero Attempt when none.
func (d *Delivery) LastAttempt() Attempt {
	if len(d.Attempts) == 0 {
		return Attempt{}
	}
	return d.Attempts[len(d.Attempts)-1]
}

// OutboxTx is the contract's part for the outbox (RepoTx embeds it).
type OutboxTx interface {
	// AppendDelivery stores d as the newest delivery, assigning d.ID
	// (greater than every one before, never reused).
	AppendDelivery(d *Delivery) (uint64, error)
	// Delivery returns the delivery with that ID, nil when there is none.
	Delivery(id uint64) (*Delivery, error)
	// PutDelivery stores d under d.ID, replacing it, and keeps the open
	// deliveries (OpenDeliveries) in line with d.State.IsOpen().
	PutDelivery(d *Delivery) error
	// OpenDeliveries returns the deliveries whose state is open,
	// ascending by ID, each as its ID, endpoint, key and next attempt:
	// enough to pick the due ones without reading the others whole.
	OpenDeliveries() ([]OpenDelivery, error)
	// DeliveriesBefore returns up to limit deliveries (limit ≤ 0: all)
	// with IDs below before (0: from the newest), newest first.
	DeliveriesBefore(before uint64, limit int) ([]*Delivery, error)
	// ForwardTo returns the shop endpoints the store delivers every push
	// to, in the order set (none: nil); the push's transaction reads them
	// when it records its deliveries, so every process sharing the store
	// forwards alike.
	ForwardTo() ([]string, error)
	// SetForwardTo replaces them (nil: none).
	SetForwardTo(endpoints []string) error
}

// OpenDelivery is an open delivery as OpenDeliveries lists it.
type OpenDelivery struct {
	ID            uint64
	Endpoint, Key string
	NextAt        time.Time
}

// MaxAttemptsKept bounds the attempts a delivery keeps: the first ones
// and the newest (a resend of a long-failed delivery adds more).
const MaxAttemptsKept = 32

// DeliveryQuery selects deliveries (Deliveries, Resend). Zero fields
// select all.
type DeliveryQuery struct {
	Failed       bool      // only failed ones, or pending ones with a failed attempt
	Since, Until time.Time // Created in [Since, Until)
	Limit        int       // at most this many (Deliveries only)
}

const (
	// DeliveryPending waits for its first or next attempt.
	DeliveryPending DeliveryState = "pending"
	// DeliveryDelivered was answered 200 by the endpoint.
	DeliveryDelivered DeliveryState = "delivered"
	// DeliveryFailed ran out of attempts; only a resend tries it again.
	DeliveryFailed DeliveryState = "failed"
)

func (q DeliveryQuery) Keeps(d *Delivery) bool {
	if q.Failed && !(d.State == DeliveryFailed || (d.State == DeliveryPending && len(d.Attempts) > 0 && !d.LastAttempt().OK())) {
		return false
	}
	if !q.Since.IsZero() && d.Created.Before(q.Since) {
		return false
	}
	if !q.Until.IsZero() && !d.Created.Before(q.Until) {
		return false
	}
	return true
}
