package store

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"

	"paydesk/store/kvlayout"
)

// The outcome reporter: a listener prints a line for each push it took,
// saying what applying it did (applied, refused, a duplicate of push N, its
// push number and reservation). The listener whose applier applied the
// push knows at once (resolve). Any other learns it from the database; the
// applier's change notification names the inbox rows it applied (runs of
// consecutive row numbers, a few bytes for a batch), and the reporter reads
// the outcomes of those of its awaited pushes only: every row it asks for
// is applied. It used to look, whenever any pushes were applied and at most
// ten times a second, at its lowest thousand awaited pushes until a
// thousand of them had none applied: each look sorted every awaited push
// and ended with a question answered by nothing, which took about a sixth
// of a non-applying listener's CPU under load, and the server's share.
// The outcome itself (push number, reservation) is the apply's and cannot
// ride in the notification (8000 bytes for up to 500 pushes of either
// listener), so it is read once, in one query per look.
//
// What a notification cannot tell — a push applied before its listener
// awaited it, a notification lost while the bus reconnected, one too
// large to name its rows — the look for every awaited push finds, once a
// second (reportEvery), as before.

// idRun is the inbox rows lo to hi, both included.
type idRun struct{ lo, hi uint64 }

// maxHeardRows bounds the rows one notification may name: an apply
// transaction marks at most applyBatchSize rows, so a notification naming
// more is not an applier's and is read as "look at every awaited push"
// (the reporter walks every named row).
const maxHeardRows = 2 * applyBatchSize

// maxHeardRuns bounds the runs heard and not yet looked up; past it the
// reporter looks at every awaited push instead.
const maxHeardRuns = 4096

// runsOf gathers ascending row numbers into runs of consecutive ones.
func runsOf(ids []int64) []idRun {
	var runs []idRun
	for _, id := range ids {
		u := uint64(id)
		if n := len(runs); n > 0 && runs[n-1].hi+1 == u {
			runs[n-1].hi = u
			continue
		}
		runs = append(runs, idRun{u, u})
	}
	return runs
}

// encodeRuns writes runs as "lo-hi" (or "lo" alone), comma-separated.
func encodeRuns(runs []idRun) string {
	var b []byte
	for i, r := range runs {
		if i > 0 {
			b = append(b, ',')
		}
		b = strconv.AppendUint(b, r.lo, 10)
		if r.hi != r.lo {
			b = append(b, '-')
			b = strconv.AppendUint(b, r.hi, 10)
		}
	}
	return string(b)
}

// decodeRuns reads encodeRuns' form. The text comes from a notification,
// which any session of the database may send: it is checked (ascending,
// lo ≤ hi, at most maxHeardRows rows), not trusted.
func decodeRuns(s string) ([]idRun, error) {
	if s == "" {
		return nil, errors.New("inbox runs: empty")
	}
	var runs []idRun
	var rows, prev uint64
	for i, part := range strings.Split(s, ",") {
		loS, hiS, isRange := strings.Cut(part, "-")
		lo, err := strconv.ParseUint(loS, 10, 63)
		if err != nil {
			return nil, fmt.Errorf("inbox runs: run %d: start %q: %w", i+1, loS, err)
		}
		hi := lo
		if isRange {
			if hi, err = strconv.ParseUint(hiS, 10, 63); err != nil {
				return nil, fmt.Errorf("inbox runs: run %d: end %q: %w", i+1, hiS, err)
			}
		}
		switch {
		case lo == 0:
			return nil, fmt.Errorf("inbox runs: run %d: row 0 (rows are numbered from 1)", i+1)
		case hi < lo:
			return nil, fmt.Errorf("inbox runs: run %d: ends at %d before it starts at %d", i+1, hi, lo)
		case i > 0 && lo <= prev:
			return nil, fmt.Errorf("inbox runs: run %d: starts at %d, not after the previous run's end %d", i+1, lo, prev)
		case hi-lo >= maxHeardRows || rows+(hi-lo+1) > maxHeardRows:
			return nil, fmt.Errorf("inbox runs: more than %d rows (an apply marks at most %d)", maxHeardRows, applyBatchSize)
		}
		rows += hi - lo + 1
		prev = hi
		runs = append(runs, idRun{lo, hi})
	}
	return runs, nil
}

// heardApplied is told by the change bus that another process applied
// inbox rows: runs, or, when the notification did not name them (nil),
// some rows.
func (ib *inbox) heardApplied(runs []idRun) {
	ib.wmu.Lock()
	if len(ib.waiters) == 0 { // a push awaited later is found by the look at every one
		ib.wmu.Unlock()
		return
	}
	if runs == nil || len(ib.heard)+len(runs) > maxHeardRuns {
		ib.lookAll, ib.heard = true, nil
	} else if !ib.lookAll {
		ib.heard = append(ib.heard, runs...)
	}
	ib.wmu.Unlock()
	poke(ib.reportWake)
}

// reporter reads the outcomes of the pushes this process took that
// another process applied: those heard of when a notification comes, and
// every awaited one every reportEvery. It looks at most ten times a
// second: the rows of the notifications that came meanwhile are read in
// one query.
func (ib *inbox) reporter() {
	defer ib.wg.Done()
	tick := time.NewTicker(ib.reportEvery)
	defer tick.Stop()
	for {
		all := false
		select {
		case <-ib.ctx.Done():
			return
		case <-ib.reportWake:
		case <-tick.C:
			all = true
		}
		ib.report(all)
		select {
		case <-ib.ctx.Done():
			return
		case <-time.After(100 * time.Millisecond):
		}
	}
}

// reportChunk is how many awaited pushes one query asks about.
const reportChunk = 1024

// report reads outcomes: of the awaited pushes among the rows heard of
// (each of them applied), or, with all (or when a notification did not
// name its rows), of every awaited push, lowest inbox numbers first,
// reportChunk at a time, up to the first chunk of which none was applied
// (the applier goes through the inbox in number order, so what lies
// beyond is not applied either).
func (ib *inbox) report(all bool) {
	ib.wmu.Lock()
	runs := ib.heard
	ib.heard = nil
	all = all || ib.lookAll
	ib.lookAll = false
	var ids []int64
	if all {
		ids = make([]int64, 0, len(ib.waiters))
		for id := range ib.waiters {
			ids = append(ids, int64(id))
		}
	} else {
		for _, r := range runs {
			for id := r.lo; id <= r.hi; id++ {
				if _, ok := ib.waiters[id]; ok {
					ids = append(ids, int64(id))
				}
			}
		}
	}
	ib.wmu.Unlock()
	slices.Sort(ids)
	ids = slices.Compact(ids)
	for len(ids) > 0 && ib.ctx.Err() == nil {
		chunk := ids[:min(len(ids), reportChunk)]
		ids = ids[len(chunk):]
		done, err := ib.readApplied(chunk)
		if err != nil {
			ib.wmu.Lock()
			ib.lookAll = true // the next look asks again
			ib.wmu.Unlock()
			return
		}
		if all && len(done) == 0 {
			return
		}
		ib.resolve(done)
	}
}

// applied reads the outcomes of those of ids that were applied.
func (ib *inbox) applied(ids []int64) ([]appliedRow, error) {
	ctx, cancel := context.WithTimeout(ib.ctx, 10*time.Second)
	defer cancel()
	rows, err := ib.db.conn.Pool().Query(ctx, `SELECT id, push_id, result FROM paydesk_push_inbox WHERE id = ANY($1) AND push_id IS NOT NULL`, ids)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var done []appliedRow
	for rows.Next() {
		var id, pushID int64
		var result []byte
		if err := rows.Scan(&id, &pushID, &result); err != nil {
			return nil, err
		}
		res, err := kvlayout.DecodeApplyResult(uint64(pushID), result)
		if err != nil {
			res = ApplyResult{ID: uint64(pushID)}
		}
		done = append(done, appliedRow{id: uint64(id), res: res})
	}
	return done, rows.Err()
}
