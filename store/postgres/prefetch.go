package postgres

import (
	"strings"

	"github.com/jackc/pgx/v5"

	"paydesk/store/domain"
)

// Prefetching for the push inbox's applier. The push rules read the store
// row by row — is the push a duplicate, the transaction it is about, the
// refunds against it, the open operations — and each read is a round
// trip: seven statements a push, whose cost on the applier's side was
// mostly the round trips' system calls and wake-ups. Before the rules run
// over a batch of inbox rows, PrefetchForPushes reads in one round trip
// (a pgx.Batch) which of the batch's keys have a push, a transaction or
// refunds at all, and the open operations. The rules' reads of a key
// known to have none, and of the open operations, are then answered
// without a statement; a key that has rows is read as before. The
// transaction's own writes keep what it knows true (AppendPush,
// PutTransaction, LinkRefund, an operation's upsert), and any other
// statement that writes one of those tables drops it all.
//
// The writes of a push — its row in the push log, and the transaction it
// creates — then need no answer from the server either: the read-ahead
// also takes a push number for each push of the batch from the sequence,
// and a transaction under a key known to have none is created. So
// AppendPush and PutTransaction of a new key queue their statements
// (Tx.queue), and the queue goes to the server in one round trip before
// the transaction's next statement or its commit, in the order written: a
// gift card push costs no round trip of its own, where it cost two, each
// a wake-up of the applier and of its server process. A queued statement
// that fails fails the transaction as it would have (the first error,
// naming the push or the transaction); a number not used (a duplicate in
// the batch, a transaction run again) is skipped, as a rolled-back
// nextval is.

// prefetch is what a transaction knows of the rows its rules will read.
type prefetch struct {
	noPush, noTx, noRefund map[string]bool // keys with no such row
	openOps                []domain.OpenOp
	openOpsKnown           bool
	// pushIDs are push numbers taken from the sequence for the batch, in
	// order: AppendPush uses them and queues its row (Tx.queue).
	pushIDs []int64
}

// PrefetchForPushes reads ahead, for the push keys of a batch, what the
// push rules ask of them (see prefetch), and in a write transaction takes
// a push number for each of the batch's pushes.
func (t *Tx) PrefetchForPushes(keys, _ []string, pushes int) error {
	if err := t.flush(); err != nil {
		return err
	}
	args := make([]string, 0, len(keys))
	for _, k := range keys {
		if pgTextErr("push", "key", k) == nil {
			args = append(args, k)
		}
	}
	b := &pgx.Batch{}
	b.Queue(`SELECT DISTINCT key FROM paydesk_pushes WHERE key = ANY($1)`, args)
	b.Queue(`SELECT key FROM paydesk_transactions WHERE key = ANY($1)`, args)
	b.Queue(`SELECT DISTINCT original FROM paydesk_refunds WHERE original = ANY($1)`, args)
	b.Queue(pgOpenOpsSQL)
	if t.write {
		b.Queue(`SELECT nextval('paydesk_seq_pushes') FROM generate_series(1, $1)`, pushes)
	}
	br := t.tx.SendBatch(t.ctx, b)
	defer br.Close()
	p := &prefetch{}
	for _, set := range []*map[string]bool{&p.noPush, &p.noTx, &p.noRefund} {
		rows, err := br.Query()
		if err != nil {
			return t.fail(err)
		}
		have, err := pgx.CollectRows(rows, pgx.RowTo[string])
		if err != nil {
			return t.fail(err)
		}
		*set = make(map[string]bool, len(args))
		for _, k := range args {
			(*set)[k] = true
		}
		for _, k := range have {
			delete(*set, k)
		}
	}
	rows, err := br.Query()
	if err != nil {
		return t.fail(err)
	}
	if p.openOps, err = scanOpenOps(rows); err != nil {
		return t.fail(err)
	}
	p.openOpsKnown = true
	if t.write {
		if rows, err = br.Query(); err != nil {
			return t.fail(err)
		}
		if p.pushIDs, err = pgx.CollectRows(rows, pgx.RowTo[int64]); err != nil {
			return t.fail(err)
		}
	}
	if err := br.Close(); err != nil {
		return t.fail(err)
	}
	t.pre = p
	return nil
}

// wrote keeps the prefetch true after a statement the transaction ran:
// an operation's upsert makes the open operations unknown; any other write
// to the tables the prefetch read (one its own methods do not account
// for) forgets it all.
func (t *Tx) wrote(sql string) {
	switch p := t.pre; {
	case p == nil:
	case sql == pgOpUpsert:
		p.openOps, p.openOpsKnown = nil, false
	case strings.Contains(sql, "paydesk_pushes") && sql != pgPushAppend,
		strings.Contains(sql, "paydesk_transactions") && sql != pgTxUpsertNew,
		strings.Contains(sql, "paydesk_refunds") && sql != pgRefundInsert,
		strings.Contains(sql, "paydesk_operations"):
		if !strings.HasPrefix(strings.TrimSpace(sql), "SELECT") {
			t.pre = nil
		}
	}
}
