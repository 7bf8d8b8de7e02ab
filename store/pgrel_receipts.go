package store

import (
	"context"
	"encoding/json"
	"fmt"
	"strconv"
	"time"

	"github.com/jackc/pgx/v5"
)

// Repeated receipts on PostgreSQL: paydesk_push_receipts (pgmigrations/
// 0016), keyed by the push's identity. The native engine writes a repeat
// the rules found (ApplyPush's duplicate path); the push inbox writes the
// repeats it refused at ingest (pginbox.go), a batch at a time, with the
// same statement.

// qAddReceipts adds repeats to identities: $1 keys, $2 hashes, $3 counts,
// $4 first and $5 last times, $6 the newest receipts of each (a jsonb
// array, oldest first), $7 how many to keep. In identity order, so that
// two writers never wait on each other in a cycle.
const qAddReceipts = `INSERT INTO paydesk_push_receipts AS r (key, hash, count, first_at, last_at, recent)
SELECT * FROM unnest($1::text[], $2::bytea[], $3::bigint[], $4::timestamptz[], $5::timestamptz[], $6::jsonb[]) ORDER BY 1, 2
ON CONFLICT (key, hash) DO UPDATE SET count = r.count + EXCLUDED.count,
	first_at = least(r.first_at, EXCLUDED.first_at), last_at = greatest(r.last_at, EXCLUDED.last_at),
	recent = (SELECT coalesce(jsonb_agg(y.e ORDER BY y.o), '[]'::jsonb) FROM (
		SELECT x.e, x.o FROM jsonb_array_elements(r.recent || EXCLUDED.recent) WITH ORDINALITY AS x(e, o)
		ORDER BY x.o DESC LIMIT $7) y)`

// receiptBatch gathers repeats by identity for qAddReceipts.
type receiptBatch struct {
	order []string
	by    map[string]*receiptRow
}

type receiptRow struct {
	key  string
	hash []byte
	rep  PushRepeats
}

func (b *receiptBatch) add(key string, hash []byte, r PushReceipt, keep int) {
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
	row.rep.add(PushReceipt{At: r.At, RemoteAddr: pgText(r.RemoteAddr), Signature: pgText(r.Signature)}, keep)
}

// args are qAddReceipts' arguments; empty when nothing was added.
func (b *receiptBatch) args(keep int) ([]any, error) {
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

func (t *pgRelTx) AddPushReceipt(ref PushRef, r PushReceipt, keep int) error {
	var b receiptBatch
	b.add(ref.Key, ref.Hash[:], r, keep)
	args, err := b.args(keep)
	if err != nil {
		return err
	}
	return t.exec(qAddReceipts, args...)
}

func (t *pgRelTx) PushRepeatsOf(refs []PushRef) (map[uint64]*PushRepeats, error) {
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
	out := map[uint64]*PushRepeats{}
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

func scanRepeats(rows pgx.Rows, ids map[string][]uint64, out map[uint64]*PushRepeats) error {
	var key string
	var hash, recent []byte
	var first, last *time.Time
	rep := &PushRepeats{}
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
	if n := len(rep.Recent); n > MaxPushReceipts {
		rep.Recent = rep.Recent[n-MaxPushReceipts:]
	}
	for _, id := range of {
		out[id] = rep
	}
	return nil
}

// dupJob is an ingested push found to repeat the inbox row id.
type dupJob struct {
	j  *ingestJob
	id uint64
}

// recordReceipts records the repeats of an ingest batch (one statement)
// and then answers them. The repeats are stored already (their first
// receipt is): a receipt that cannot be recorded is logged, and the
// gateway is still told the push is stored — asking it to send the push
// again would only be one more repeat.
func (ib *inbox) recordReceipts(ctx context.Context, dups []dupJob) {
	if len(dups) == 0 {
		return
	}
	var b receiptBatch
	for _, d := range dups {
		b.add(string(d.j.key), d.j.hash, d.j.receipt, MaxPushReceipts)
	}
	args, err := b.args(MaxPushReceipts)
	if err == nil {
		for try := 0; try < 5; try++ {
			if _, err = ib.eng.pool.Exec(ctx, qAddReceipts, args...); !retryable(err) {
				break
			}
		}
	}
	if err != nil {
		ib.log("inbox: %d repeated receipts not recorded: %v", len(dups), err)
	}
	for _, d := range dups {
		d.j.done <- ingestAnswer{id: d.id, dup: true}
	}
	if err == nil {
		c := Change{}
		for _, d := range dups {
			c.addReceipt(string(d.j.key))
		}
		ib.db.notify(c)
	}
}
