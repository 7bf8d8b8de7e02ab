package store

import (
	"context"
	"fmt"
	"slices"
	"time"
)

// Receipts of a push (issue 26): the gateway delivers a push again (a
// retry after a lost answer, a resend asked for in the sandbox), the store
// keeps it once (PushDuplicate) and records each repeated receipt against
// the push stored first. The first receipt is the push record itself
// (ReceivedAt, RemoteAddr, Signature), so a push received once costs
// nothing here; a repeat costs one small write. What is kept per push is
// bounded — the count, the first and last repeat and the newest
// MaxPushReceipts repeats — so a sender repeating a push for ever cannot
// grow the store.

// maxReceiptKeys bounds the keys a Change names for its receipts; past it
// the Change names none and the consoles read the whole push log again.
const maxReceiptKeys = 64

// addReceipt counts a repeated receipt of a push about key in the Change,
// naming the key while there are few.
func (c *Change) addReceipt(key string) {
	c.Receipts++
	if c.Receipts > 1 && c.ReceiptKeys == nil {
		return // past the bound already
	}
	if slices.Contains(c.ReceiptKeys, key) {
		return
	}
	if len(c.ReceiptKeys) == maxReceiptKeys {
		c.ReceiptKeys = nil
		return
	}
	c.ReceiptKeys = append(c.ReceiptKeys, key)
}

// PushReceipts is every receipt of a stored push that is known: how many
// there were, the first (the push itself) and the kept repeats.
type PushReceipts struct {
	Count int64 // receipts, the first included
	// Receipts are the first receipt and the newest repeats, oldest
	// first; Omitted repeats between them are counted only.
	Receipts []PushReceipt
	Omitted  int64
	Last     time.Time
}

// ReceiptsOf puts p's own receipt before the repeats rep (nil: none).
func ReceiptsOf(p *PushRecord, rep *PushRepeats) PushReceipts {
	first := PushReceipt{At: p.ReceivedAt, RemoteAddr: p.RemoteAddr, Signature: p.Signature}
	out := PushReceipts{Count: 1, Receipts: []PushReceipt{first}, Last: p.ReceivedAt}
	if rep == nil || rep.Count == 0 {
		return out
	}
	out.Count += rep.Count
	out.Receipts = append(out.Receipts, rep.Recent...)
	out.Omitted = rep.Count - int64(len(rep.Recent))
	out.Last = rep.Last
	return out
}

// PushReceiptsOf returns the receipts of the stored pushes ps (rejected
// entries are left out), by push ID; a push received once has Count 1.
// One read for all: a list reads its page's receipts together.
func (db *DB) PushReceiptsOf(ctx context.Context, ps []*PushRecord) (map[uint64]PushReceipts, error) {
	refs := make([]PushRef, 0, len(ps))
	for _, p := range ps {
		if p != nil && !p.Rejected && p.ID != 0 {
			refs = append(refs, RefOf(p))
		}
	}
	var reps map[uint64]*PushRepeats
	if len(refs) > 0 {
		err := db.read(ctx, func(tx RepoTx) (err error) {
			reps, err = tx.PushRepeatsOf(refs)
			return err
		})
		if err != nil {
			return nil, fmt.Errorf("load push receipts: %w", err)
		}
	}
	out := make(map[uint64]PushReceipts, len(refs))
	for _, p := range ps {
		if p != nil && !p.Rejected && p.ID != 0 {
			out[p.ID] = ReceiptsOf(p, reps[p.ID])
		}
	}
	return out, nil
}
