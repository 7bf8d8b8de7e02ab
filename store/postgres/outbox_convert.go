package postgres

import (
	"encoding/json"
	"fmt"

	"paydesk/store/domain"
	"paydesk/store/kvlayout"
)

// The outbox a bucket store keeps (its deliveries, pending and done) is
// converted with the logs, after the pushes the deliveries name: a cache
// copied into a team's database (paydesk db copy) keeps the deliveries
// still owed to the shop — the database's worker sends them — and the
// attempts of the ones sent. The store's endpoints are carried with the
// numbers (convertNumbers).

// convertDelivery makes a deliveries bucket record a row of
// paydesk_deliveries under its ID. A row already there (a conversion cut
// short and run again) stays as it is.
func convertDelivery(k, v []byte) (pgStmt, bool, error) {
	if len(k) != 8 {
		return pgStmt{}, false, fmt.Errorf("delivery %q: the key is no delivery ID", k)
	}
	id := kvlayout.Be64(k)
	d, err := kvlayout.DecodeDelivery(id, v)
	if err != nil {
		return pgStmt{}, false, err
	}
	d.ID = id
	att, err := attemptsJSON(d.ID, d.Attempts)
	if err != nil {
		return pgStmt{}, false, err
	}
	return pgStmt{`INSERT INTO paydesk_deliveries (` + pgDeliveryCols + `) VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11)
		ON CONFLICT (id) DO NOTHING`,
		[]any{int64(d.ID), int64(d.PushID), d.Key, d.Endpoint, pgTime(d.Created), string(d.State), pgTime(d.NextAt),
			pgTime(d.DeliveredAt), d.Resent, d.Tries, att}}, true, nil
}

// convertOutboxNumbers carries the deliveries' numbering and the store's
// endpoints (meta's forward-to, when the database has none of its own),
// in the conversion's last transaction.
func (t *Tx) convertOutboxNumbers() error {
	if err := t.exec(`SELECT setval('paydesk_seq_deliveries', m) FROM (SELECT max(id) AS m FROM paydesk_deliveries) d WHERE m IS NOT NULL`); err != nil {
		return err
	}
	var v []byte
	ok, err := t.scanRow(`SELECT v FROM paydesk_kv WHERE bucket = $1 AND k = $2`, []any{kvlayout.BMeta, kvlayout.KForwardTo}, &v)
	if err != nil || !ok || len(v) == 0 {
		return err
	}
	have, err := t.ForwardTo()
	if err != nil || len(have) > 0 {
		return err
	}
	eps, err := kvlayout.DecodeForwardTo(v)
	if err != nil {
		return err
	}
	return t.SetForwardTo(eps)
}

func attemptsJSON(id uint64, as []domain.Attempt) ([]byte, error) {
	att, err := json.Marshal(attemptsOrEmpty(as))
	if err != nil {
		return nil, fmt.Errorf("delivery %d: attempts: %w", id, err)
	}
	return att, nil
}

// convertReceipts makes the pushes' repeated receipts rows of
// paydesk_push_receipts, keyed by the push's identity (its key and hash,
// read from paydesk_pushes, converted before): a head (the push's ID) makes
// the row with the count and the first and last times, each slot after
// it (the ID and a slot byte) adds its receipt to the row's newest ones,
// kept in time order. A chunk commits with the conversion's progress, so
// no slot is added twice.
func convertReceipts(k, v []byte) (pgStmt, bool, error) {
	switch len(k) {
	case 8:
		id := kvlayout.Be64(k)
		rep, err := kvlayout.DecodeReceiptHead(id, v)
		if err != nil {
			return pgStmt{}, false, err
		}
		return pgStmt{`INSERT INTO paydesk_push_receipts (key, hash, count, first_at, last_at, recent)
			SELECT p.key, p.hash, $2, $3, $4, '[]' FROM paydesk_pushes p WHERE p.id = $1
			ON CONFLICT (key, hash) DO NOTHING`, []any{int64(id), rep.Count, pgTime(rep.First), pgTime(rep.Last)}}, true, nil
	case 9:
		id := kvlayout.Be64(k[:8])
		r, err := kvlayout.DecodeReceipt(id, v)
		if err != nil {
			return pgStmt{}, false, err
		}
		r.RemoteAddr, r.Signature = pgText(r.RemoteAddr), pgText(r.Signature)
		j, err := json.Marshal([]domain.PushReceipt{r})
		if err != nil {
			return pgStmt{}, false, fmt.Errorf("push %d: receipt: %w", id, err)
		}
		return pgStmt{`UPDATE paydesk_push_receipts r SET recent = (
				SELECT jsonb_agg(e ORDER BY (e->>'at')::timestamptz) FROM jsonb_array_elements(r.recent || $2::jsonb) AS x(e))
			FROM paydesk_pushes p WHERE p.id = $1 AND r.key = p.key AND r.hash = p.hash`, []any{int64(id), string(j)}}, true, nil
	}
	return pgStmt{}, false, fmt.Errorf("push receipts %q: the key is no push ID (and slot)", k)
}
