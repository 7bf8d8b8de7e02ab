package store

import (
	"context"

	"paydesk/store/postgres"
)

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
	var b postgres.ReceiptBatch
	for _, d := range dups {
		b.Add(string(d.j.key), d.j.hash, d.j.receipt, MaxPushReceipts)
	}
	args, err := b.Args(MaxPushReceipts)
	if err == nil {
		for try := 0; try < 5; try++ {
			if _, err = ib.db.conn.Pool().Exec(ctx, postgres.QAddReceipts, args...); !postgres.Retryable(err) {
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
