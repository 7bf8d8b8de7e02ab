package postgres

import (
	"encoding/json"
	"fmt"
	"strconv"
	"time"

	"github.com/jackc/pgx/v5"

	"paydesk/store/domain"
)

// Repeated receipts on PostgreSQL: paydesk_push_receipts (migrations/
// 0016), keyed by the push's identity. The native engine writes a repeat
// the rules found (ApplyPush's duplicate path); the push inbox (store/pginbox.go) writes
// the repeats it refused at ingest, a batch at a time, with the
// same statement.

// QAddReceipts adds repeats to identities: $1 keys, $2 hashes, $3 counts,
// $4 first and $5 last times, $6 the newest receipts of each (a jsonb
// array, oldest first), $7 how many to keep. In identity order, so that
// two writers never wait on each other in a cycle.
const QAddReceipts = `INSERT INTO paydesk_push_receipts AS r (key, hash, count, first_at, last_at, recent)
SELECT * FROM unnest($1::text[], $2::bytea[], $3::bigint[], $4::timestamptz[], $5::timestamptz[], $6::jsonb[]) ORDER BY 1, 2
ON CONFLICT (key, hash) DO UPDATE SET count = r.count + EXCLUDED.count,
	first_at = least(r.first_at, EXCLUDED.first_at), last_at = greatest(r.last_at, EXCLUDED.last_at),
	recent = (SELECT coalesce(jsonb_agg(y.e ORDER BY y.o), '[]'::jsonb) FROM (
		SELECT x.e, x.o FROM jsonb_array_elements(r.recent || EXCLUDED.recent) WITH ORDINALITY AS x(e, o)
		ORDER BY x.o DESC LIMIT $7) y)`

// ReceiptBatch gathers repeats by identity for QAddReceipts.
type ReceiptBatch struct {
	order []string
	by    map[string]*receiptRow
}

type receiptRow struct {
	key  string
	hash []byte
	rep  domain.PushRepeats
}

func (b *ReceiptBatch) Add(key string, hash []byte, r domain.PushReceipt, keep int) {
	if b.by == nil {
		b.by = map[string]*receiptRow{}
	}
	id := key + "\x00" + string(hash)
	row := b.by[id]
	if row == nil {
		row = &receiptRow{key: pgText(key), hash: hash}
		b.by[id] = row
		b.order = append(b.order, id)
	}
	row.rep.Add(domain.PushReceipt{At: r.At, RemoteAddr: pgText(r.RemoteAddr), Signature: pgText(r.Signature)}, keep)
}

// Args are QAddReceipts' arguments; empty when nothing was added.
func (b *ReceiptBatch) Args(keep int) ([]any, error) {
	if len(b.order) == 0 {
		return nil, nil
	}
	n := len(b.order)
	keys, hashes, counts := make([]string, n), make([][]byte, n), make([]int64, n)
	firsts, lasts, recents := make([]any, n), make([]any, n), make([]string, n)
	for i, id := range b.order {
		row := b.by[id]
		j, err := json.Marshal(row.rep.Recent)
		if err != nil {
			return nil, fmt.Errorf("push %s: receipts: %w", row.key, err)
		}
		keys[i], hashes[i], counts[i] = row.key, row.hash, row.rep.Count
		firsts[i], lasts[i], recents[i] = pgTime(row.rep.First), pgTime(row.rep.Last), string(j)
	}
	return []any{keys, hashes, counts, firsts, lasts, recents, keep}, nil
}

func (t *Tx) AddPushReceipt(ref domain.PushRef, r domain.PushReceipt, keep int) error {
	var b ReceiptBatch
	b.Add(ref.Key, ref.Hash[:], r, keep)
	args, err := b.Args(keep)
	if err != nil {
		return err
	}
	return t.exec(QAddReceipts, args...)
}

func (t *Tx) PushRepeatsOf(refs []domain.PushRef) (map[uint64]*domain.PushRepeats, error) {
	if len(refs) == 0 {
		return nil, nil
	}
	keys, hashes := make([]string, len(refs)), make([][]byte, len(refs))
	ids := make(map[string][]uint64, len(refs))
	for i, ref := range refs {
		keys[i], hashes[i] = pgText(ref.Key), ref.Hash[:]
		id := keys[i] + "\x00" + string(hashes[i])
		ids[id] = append(ids[id], ref.ID)
	}
	rows, err := t.query(`SELECT r.key, r.hash, r.count, r.first_at, r.last_at, r.recent FROM paydesk_push_receipts r
		JOIN unnest($1::text[], $2::bytea[]) AS u(key, hash) ON r.key = u.key AND r.hash = u.hash`, keys, hashes)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	out := map[uint64]*domain.PushRepeats{}
	for rows.Next() {
		if err := scanRepeats(rows, ids, out); err != nil {
			return nil, t.fail(err)
		}
	}
	if err := rows.Err(); err != nil {
		return nil, t.fail(err)
	}
	return out, nil
}

func scanRepeats(rows pgx.Rows, ids map[string][]uint64, out map[uint64]*domain.PushRepeats) error {
	var key string
	var hash, recent []byte
	var first, last *time.Time
	rep := &domain.PushRepeats{}
	if err := rows.Scan(&key, &hash, &rep.Count, &first, &last, &recent); err != nil {
		return err
	}
	rep.First, rep.Last = timeOf(first), timeOf(last)
	of := ids[key+"\x00"+string(hash)]
	what := "push " + key
	if len(of) > 0 {
		what = "push " + strconv.FormatUint(of[0], 10)
	}
	if err := json.Unmarshal(recent, &rep.Recent); err != nil {
		return fmt.Errorf("%s: receipts: %w", what, err)
	}
	if n := len(rep.Recent); n > domain.MaxPushReceipts {
		rep.Recent = rep.Recent[n-domain.MaxPushReceipts:]
	}
	for _, id := range of {
		out[id] = rep
	}
	return nil
}
