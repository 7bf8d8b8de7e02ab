package store

import (
	"context"
	"errors"
	"fmt"
	"net/url"
	"slices"
	"sort"
	"time"
)

// What an operator does with the outbox (the console's Deliveries view,
// its bulk menu, paydesk deliveries resend): every resend is one audit
// entry saying who asked and how many were queued again; and which shop
// endpoints are failing, for the Attention tab and the alerts.

// AuditDeliveryResend is the audit action of a resend.
const AuditDeliveryResend = "delivery-resend"

// ResendRequest says what to send again and who asks. Exactly one of ID,
// Reservations or Query selects: ID one delivery; Reservations every
// delivery of the pushes of those reservations (by key, number or invoice:
// the reservation's own pushes and those of its requests and
// transactions); otherwise every delivery Query keeps (Query.Limit is not
// used).
type ResendRequest struct {
	ID           uint64
	Reservations []string
	Query        DeliveryQuery
	// Endpoint, when set, narrows any of them to the deliveries to that
	// endpoint (the Deliveries view filtered to one).
	Endpoint string
	// Operator is who asks (the audit entry's operator); Via how
	// ("console", "cli"), in the entry's reason.
	Operator, Via string
}

// ErrNothingToResend is a resend that selected no delivery.
var ErrNothingToResend = errors.New("no delivery to resend")

// Redeliver makes the deliveries r selects pending again, due at once,
// and records who asked and how many in the audit log, in one commit. It
// returns how many; none selected is ErrNothingToResend (nothing written).
func (db *DB) Redeliver(ctx context.Context, r ResendRequest) (int, error) {
	if err := ctx.Err(); err != nil {
		return 0, fmt.Errorf("resend deliveries: %w", err)
	}
	if r.ID != 0 && (len(r.Reservations) > 0 || r.Query != (DeliveryQuery{})) {
		return 0, errors.New("resend deliveries: give one delivery ID, reservations or a query, not several")
	}
	n := 0
	err := db.update(ctx, func(tx RepoTx, c *Change) error {
		n = 0
		picked, target, err := pickResend(tx, r)
		if err != nil {
			return err
		}
		if len(picked) == 0 {
			return ErrNothingToResend
		}
		now := db.now()
		for _, d := range picked { // oldest first: the order per key
			if err := resend(tx, d, now); err != nil {
				return err
			}
		}
		n = len(picked)
		c.Deliveries = true // the worker of this process (or another's, told by the bus) looks at once
		op := r.Operator
		if op == "" {
			op = "unknown"
		}
		reason := "queued again"
		if r.Via != "" {
			reason += " from the " + r.Via
		}
		_, err = appendAudit(tx, AuditEntry{Time: now, Operator: op, Action: AuditDeliveryResend, Target: target,
			Result: wordN(n, "delivery", "deliveries"), Reason: reason}, c)
		return err
	})
	if err != nil {
		return 0, fmt.Errorf("resend deliveries: %w", err)
	}
	return n, nil
}

// pickResend finds what r selects, oldest first, and names it for the
// audit entry.
func pickResend(tx RepoTx, r ResendRequest) ([]*Delivery, string, error) {
	if r.ID != 0 {
		d, err := tx.Delivery(r.ID)
		if err != nil {
			return nil, "", err
		}
		if d == nil {
			return nil, "", fmt.Errorf("no delivery %d", r.ID)
		}
		if r.Endpoint != "" && d.Endpoint != r.Endpoint {
			return nil, "", nil
		}
		return []*Delivery{d}, fmt.Sprintf("delivery %d", r.ID), nil
	}
	all, err := tx.DeliveriesBefore(0, 0)
	if err != nil {
		return nil, "", err
	}
	slices.Reverse(all) // oldest first
	var keep func(*Delivery) bool
	var target string
	if len(r.Reservations) > 0 {
		pushIDs := map[uint64]bool{}
		for _, ref := range r.Reservations {
			res, err := findReservation(tx, ref)
			if err != nil {
				return nil, "", err
			}
			if res == nil {
				return nil, "", fmt.Errorf("reservation %q: %w", ref, ErrNotFound)
			}
			keys := append([]string{res.Key}, res.Transactions...)
			for _, rq := range res.Requests {
				keys = append(keys, rq.Key)
			}
			ps, err := pushesFor(tx, keys)
			if err != nil {
				return nil, "", err
			}
			for _, p := range ps {
				pushIDs[p.ID] = true
			}
		}
		keep = func(d *Delivery) bool { return pushIDs[d.PushID] }
		target = wordN(len(r.Reservations), "reservation", "reservations")
		if len(r.Reservations) == 1 {
			target = "reservation " + r.Reservations[0]
		}
	} else {
		q := r.Query
		q.Limit = 0
		keep = q.Keeps
		target = describeQuery(q)
	}
	if r.Endpoint != "" {
		target += " to " + r.Endpoint
	}
	var out []*Delivery
	for _, d := range all {
		if keep(d) && (r.Endpoint == "" || d.Endpoint == r.Endpoint) {
			out = append(out, d)
		}
	}
	return out, target, nil
}

// describeQuery words a query for the audit log.
func describeQuery(q DeliveryQuery) string {
	s := "deliveries"
	if q.Failed {
		s = "failed deliveries"
	}
	if !q.Since.IsZero() {
		s += " from " + q.Since.UTC().Format(time.RFC3339)
	}
	if !q.Until.IsZero() {
		s += " before " + q.Until.UTC().Format(time.RFC3339)
	}
	return s
}

func wordN(n int, one, many string) string {
	if n == 1 {
		return "1 " + one
	}
	return fmt.Sprintf("%d %s", n, many)
}

// FailingAfter is how many attempts in a row to one endpoint, all failed,
// make it a failing endpoint even while its deliveries still have
// retries left.
const FailingAfter = 3

// EndpointTrouble is a shop endpoint that fails: a delivery to it was
// given up, or its newest FailingAfter attempts (over all its deliveries)
// all failed.
type EndpointTrouble struct {
	Endpoint string
	// Since is when its failing began: the first failed attempt after the
	// last one it answered 200.
	Since time.Time
	// GivenUp counts its deliveries given up; Failing its pending
	// deliveries whose last attempt failed.
	GivenUp, Failing int
	// Last is its newest attempt (a failed one).
	Last Attempt
}

// FailingEndpoints finds the failing endpoints among ds (any order),
// ordered by endpoint. An endpoint whose newest attempt succeeded is not
// failing even with deliveries given up before it: they wait for a
// resend, the endpoint itself works (the Deliveries view lists them).
func FailingEndpoints(ds []*Delivery) []EndpointTrouble {
	type at struct {
		a  Attempt
		id uint64
	}
	byEP := map[string][]at{}
	given := map[string]int{}
	failing := map[string]int{}
	for _, d := range ds {
		for _, a := range d.Attempts {
			byEP[d.Endpoint] = append(byEP[d.Endpoint], at{a, d.ID})
		}
		switch {
		case d.State == DeliveryFailed:
			given[d.Endpoint]++
		case d.State == DeliveryPending && len(d.Attempts) > 0 && !d.LastAttempt().OK():
			failing[d.Endpoint]++
		}
	}
	var out []EndpointTrouble
	for ep, as := range byEP {
		sort.SliceStable(as, func(i, j int) bool {
			if !as[i].a.At.Equal(as[j].a.At) {
				return as[i].a.At.Before(as[j].a.At)
			}
			return as[i].id < as[j].id
		})
		last := as[len(as)-1].a
		if last.OK() {
			continue
		}
		run := 0 // failed attempts in a row, newest back
		for i := len(as) - 1; i >= 0 && !as[i].a.OK(); i-- {
			run++
		}
		if given[ep] == 0 && run < FailingAfter {
			continue
		}
		out = append(out, EndpointTrouble{Endpoint: ep, Since: as[len(as)-run].a.At, GivenUp: given[ep], Failing: failing[ep], Last: last})
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Endpoint < out[j].Endpoint })
	return out
}

// CountResend is how many deliveries Redeliver would send again for r,
// without changing anything (the console confirms the count first).
func (db *DB) CountResend(ctx context.Context, r ResendRequest) (int, error) {
	n := 0
	err := db.repo.View(ctx, func(tx RepoTx) error {
		picked, _, err := pickResend(tx, r)
		n = len(picked)
		return err
	})
	if err != nil {
		return 0, fmt.Errorf("count deliveries to resend: %w", err)
	}
	return n, nil
}

// RecentDeliveries returns the newest limit deliveries (limit ≤ 0: all),
// newest first, reading no older ones.
func (db *DB) RecentDeliveries(ctx context.Context, limit int) ([]*Delivery, error) {
	var out []*Delivery
	err := db.repo.View(ctx, func(tx RepoTx) (err error) {
		out, err = tx.DeliveriesBefore(0, limit)
		return err
	})
	if err != nil {
		return nil, fmt.Errorf("deliveries: %w", err)
	}
	return out, nil
}

// EndpointShown is an endpoint as the console, the alerts and the
// commands show it: a password in the URL (https://user:pass@shop/…) is
// masked, as net/url's Redacted does.
func EndpointShown(ep string) string {
	u, err := url.Parse(ep)
	if err != nil {
		return ep
	}
	return u.Redacted()
}
