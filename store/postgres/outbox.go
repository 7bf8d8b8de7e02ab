package postgres

import (
	"cmp"
	"encoding/json"
	"fmt"
	"slices"
	"time"

	"github.com/jackc/pgx/v5"

	"paydesk/store/domain"
)

// The outbox on the native engine: paydesk_deliveries (migrations/0011).

const pgDeliveryCols = `id, push_id, key, endpoint, created, state, next_at, delivered_at, resent, tries, attempts`

func (t *Tx) AppendDelivery(d *domain.Delivery) (uint64, error) {
	var id int64
	if _, err := t.scanRow(`SELECT nextval('paydesk_seq_deliveries')`, nil, &id); err != nil {
		return 0, err
	}
	d.ID = uint64(id)
	att, err := json.Marshal(attemptsOrEmpty(d.Attempts))
	if err != nil {
		return 0, fmt.Errorf("delivery %d: attempts: %w", d.ID, err)
	}
	return d.ID, t.exec(`INSERT INTO paydesk_deliveries (`+pgDeliveryCols+`) VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11)`,
		int64(d.ID), int64(d.PushID), d.Key, d.Endpoint, pgTime(d.Created), string(d.State), pgTime(d.NextAt),
		pgTime(d.DeliveredAt), d.Resent, d.Tries, att)
}

func attemptsOrEmpty(as []domain.Attempt) []domain.Attempt {
	if as == nil {
		return []domain.Attempt{}
	}
	return as
}

func (t *Tx) PutDelivery(d *domain.Delivery) error {
	att, err := json.Marshal(attemptsOrEmpty(d.Attempts))
	if err != nil {
		return fmt.Errorf("delivery %d: attempts: %w", d.ID, err)
	}
	return t.exec(`INSERT INTO paydesk_deliveries (`+pgDeliveryCols+`) VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11)
		ON CONFLICT (id) DO UPDATE SET push_id = EXCLUDED.push_id, key = EXCLUDED.key, endpoint = EXCLUDED.endpoint,
		created = EXCLUDED.created, state = EXCLUDED.state, next_at = EXCLUDED.next_at,
		delivered_at = EXCLUDED.delivered_at, resent = EXCLUDED.resent, tries = EXCLUDED.tries, attempts = EXCLUDED.attempts`,
		int64(d.ID), int64(d.PushID), d.Key, d.Endpoint, pgTime(d.Created), string(d.State), pgTime(d.NextAt),
		pgTime(d.DeliveredAt), d.Resent, d.Tries, att)
}

func (t *Tx) deliveries(sql string, args ...any) ([]*domain.Delivery, error) {
	rows, err := t.query(sql, args...)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var out []*domain.Delivery
	for rows.Next() {
		var d domain.Delivery
		var id, push int64
		var created, next, delivered *time.Time
		var state string
		var att []byte
		if err := rows.Scan(&id, &push, &d.Key, &d.Endpoint, &created, &state, &next, &delivered, &d.Resent, &d.Tries, &att); err != nil {
			return nil, t.fail(err)
		}
		d.ID, d.PushID, d.State = uint64(id), uint64(push), domain.DeliveryState(state)
		d.Created, d.NextAt, d.DeliveredAt = timeOf(created), timeOf(next), timeOf(delivered)
		if err := json.Unmarshal(att, &d.Attempts); err != nil {
			return nil, t.fail(fmt.Errorf("delivery %d: attempts: %w", id, err))
		}
		if len(d.Attempts) == 0 {
			d.Attempts = nil
		}
		out = append(out, &d)
	}
	if err := rows.Err(); err != nil {
		return nil, t.fail(err)
	}
	return out, nil
}

func (t *Tx) Delivery(id uint64) (*domain.Delivery, error) {
	ds, err := t.deliveries(`SELECT `+pgDeliveryCols+` FROM paydesk_deliveries WHERE id = $1`, int64(id))
	if err != nil || len(ds) == 0 {
		return nil, err
	}
	return ds[0], nil
}

func (t *Tx) OpenDeliveries() ([]domain.OpenDelivery, error) {
	rows, err := t.query(`SELECT id, endpoint, key, next_at FROM paydesk_deliveries WHERE state = 'pending' ORDER BY id`)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var out []domain.OpenDelivery
	for rows.Next() {
		var o domain.OpenDelivery
		var id int64
		var next *time.Time
		if err := rows.Scan(&id, &o.Endpoint, &o.Key, &next); err != nil {
			return nil, t.fail(err)
		}
		o.ID, o.NextAt = uint64(id), timeOf(next)
		out = append(out, o)
	}
	if err := rows.Err(); err != nil {
		return nil, t.fail(err)
	}
	return out, nil
}

func (t *Tx) DeliveriesBefore(before uint64, limit int) ([]*domain.Delivery, error) {
	if before == 0 {
		return t.deliveries(`SELECT `+pgDeliveryCols+` FROM paydesk_deliveries ORDER BY id DESC LIMIT $1`, pgLimit(limit))
	}
	return t.deliveries(`SELECT `+pgDeliveryCols+` FROM paydesk_deliveries WHERE id < $1 ORDER BY id DESC LIMIT $2`,
		int64(before), pgLimit(limit))
}

// pgDeliveryHeads is the oldest pending delivery of each endpoint and
// key: the only one of them that may go.
const pgDeliveryHeads = `WITH heads AS (SELECT DISTINCT ON (endpoint, key) id, endpoint, key, next_at FROM paydesk_deliveries
	WHERE state = 'pending' ORDER BY endpoint, key, id) `

// pgDueHeads are the heads due at $1, at most $2; pgNextHead the
// earliest next attempt of the others. Both read the heads in the order
// of paydesk_deliveries_pending_chain (migrations/0017), sorting nothing
// but the due ones (TestDueHeadsReadTheChainIndex).
const (
	pgDueHeads = pgDeliveryHeads + `SELECT id, endpoint, key, next_at FROM heads WHERE next_at IS NULL OR next_at <= $1
		ORDER BY next_at NULLS FIRST, id LIMIT $2`
	pgNextHead = pgDeliveryHeads + `SELECT min(next_at) FROM heads WHERE next_at > $1`
)

// DueDeliveries picks the due heads in the database: the worker is sent
// those, not every pending delivery (a shop down for a day left them by
// the hundred thousand, read after every push).
func (t *Tx) DueDeliveries(now time.Time, limit int) ([]domain.OpenDelivery, time.Time, bool, error) {
	rows, err := t.query(pgDueHeads, now, pgLimit(limit))
	if err != nil {
		return nil, time.Time{}, true, err
	}
	defer rows.Close()
	var due []domain.OpenDelivery
	for rows.Next() {
		var o domain.OpenDelivery
		var id int64
		var next *time.Time
		if err := rows.Scan(&id, &o.Endpoint, &o.Key, &next); err != nil {
			return nil, time.Time{}, true, t.fail(err)
		}
		o.ID, o.NextAt = uint64(id), timeOf(next)
		due = append(due, o)
	}
	if err := rows.Err(); err != nil {
		return nil, time.Time{}, true, t.fail(err)
	}
	rows.Close()
	slices.SortFunc(due, func(a, b domain.OpenDelivery) int { return cmp.Compare(a.ID, b.ID) })
	if limit > 0 && len(due) >= limit {
		return due, time.Time{}, true, nil // enough for one round; next only matters once none is due
	}
	var next *time.Time
	if _, err := t.scanRow(pgNextHead, []any{now}, &next); err != nil {
		return nil, time.Time{}, true, err
	}
	return due, timeOf(next), true, nil
}

// ForwardTo reads paydesk_forward_to (migrations/0020) once a transaction.
func (t *Tx) ForwardTo() ([]string, error) {
	if t.forwardToRead {
		return t.forwardTo, nil
	}
	rows, err := t.query(`SELECT endpoint FROM paydesk_forward_to ORDER BY position`)
	if err != nil {
		return nil, err
	}
	eps, err := pgx.CollectRows(rows, pgx.RowTo[string])
	if err != nil {
		return nil, t.fail(err)
	}
	t.forwardTo, t.forwardToRead = eps, true
	return eps, nil
}

func (t *Tx) SetForwardTo(endpoints []string) error {
	if err := t.exec(`DELETE FROM paydesk_forward_to`); err != nil {
		return err
	}
	for i, ep := range endpoints {
		if err := t.exec(`INSERT INTO paydesk_forward_to (position, endpoint) VALUES ($1, $2)`, i+1, ep); err != nil {
			return err
		}
	}
	t.forwardTo, t.forwardToRead = slices.Clone(endpoints), true
	return nil
}
