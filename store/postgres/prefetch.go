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

// prefetch is what a transaction knows of the rows its rules will read.
type prefetch struct {
	noPush, noTx, noRefund map[string]bool // keys with no such row
	openOps                []domain.OpenOp
	openOpsKnown           bool
}

// PrefetchForPushes reads ahead, for the push keys of a batch, what the
// push rules ask of them (see prefetch).
func (t *Tx) PrefetchForPushes(keys, _ []string, _ int) error {
	if t.err != nil {
		return t.err
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
