package store

import (
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"paydesk/internal/pgtest"
)

func TestInboxRuns(t *testing.T) {
	for _, tc := range []struct {
		ids  []int64
		want string
	}{
		{nil, ""},
		{[]int64{7}, "7"},
		{[]int64{1, 2, 3}, "1-3"},
		{[]int64{1, 2, 3, 5, 8, 9}, "1-3,5,8-9"},
		{[]int64{100, 102, 104}, "100,102,104"},
	} {
		runs := runsOf(tc.ids)
		got := encodeRuns(runs)
		if got != tc.want {
			t.Errorf("runs of %v: %q, want %q", tc.ids, got, tc.want)
			continue
		}
		if got == "" {
			continue
		}
		back, err := decodeRuns(got)
		if err != nil {
			t.Errorf("decode %q: %v", got, err)
			continue
		}
		var ids []int64
		for _, r := range back {
			for id := r.lo; id <= r.hi; id++ {
				ids = append(ids, int64(id))
			}
		}
		if fmt.Sprint(ids) != fmt.Sprint(tc.ids) {
			t.Errorf("%q decodes to rows %v, want %v", got, ids, tc.ids)
		}
	}
}

// A notification is text any session of the database may send: what
// does not name an applier's rows is refused, with the rule it broke.
func TestDecodeInboxRunsRefuses(t *testing.T) {
	for _, tc := range []struct{ in, want string }{
		{"", "empty"},
		{"x", "start"},
		{"1-", "end"},
		{"-5", "start"},
		{"0", "row 0"},
		{"5-3", "ends at 3 before it starts at 5"},
		{"5,5", "not after the previous run's end"},
		{"10-20,15", "not after the previous run's end"},
		{"1-1001", "more than 1000 rows"},
		{"1-600,700-1200", "more than 1000 rows"},
		{"1-9223372036854775807", "more than 1000 rows"},
		{"99999999999999999999", "start"},
		{"1,,2", "start"},
	} {
		_, err := decodeRuns(tc.in)
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("decodeRuns(%q): %v, want an error saying %q", tc.in, err, tc.want)
		}
	}
}

func FuzzDecodeInboxRuns(f *testing.F) {
	for _, s := range []string{"1-3,5,8-9", "7", "0", "5-3", "1-1000"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		runs, err := decodeRuns(s)
		if err != nil {
			return
		}
		rows := uint64(0)
		for i, r := range runs {
			if r.lo == 0 || r.hi < r.lo || (i > 0 && r.lo <= runs[i-1].hi) {
				t.Fatalf("%q: run %d is %d-%d after %v", s, i, r.lo, r.hi, runs[:i])
			}
			rows += r.hi - r.lo + 1
		}
		if rows > maxHeardRows {
			t.Fatalf("%q: %d rows", s, rows)
		}
		back, err := decodeRuns(encodeRuns(runs))
		if err != nil || fmt.Sprint(back) != fmt.Sprint(runs) {
			t.Fatalf("%q: again %v, %v; want %v", s, back, err, runs)
		}
	})
}

// The notification of an apply names its rows even when the batch's keys
// make it overflow; a list of rows too long for a notification is left
// out, and the listeners then look at every push they await.
func TestBusPayloadNamesAppliedRows(t *testing.T) {
	b := &changeBus{origin: "o"}
	manyKeys := make([]string, 1000)
	for i := range manyKeys {
		manyKeys[i] = fmt.Sprintf("reservation-key-%04d", i)
	}
	var scattered []int64
	for id := int64(1e12); id < 1e12+2*applyBatchSize; id += 2 { // 500 rows of 13 digits
		scattered = append(scattered, id)
	}
	for _, tc := range []struct {
		name     string
		c        Change
		runs     string
		overflow bool
	}{
		{"a batch", Change{Pushes: 3, inbox: true, inboxRuns: runsOf([]int64{4, 5, 6})}, "4-6", false},
		{"a batch whose keys overflow", Change{Pushes: 500, Reservations: manyKeys, inbox: true, inboxRuns: runsOf([]int64{1, 2, 3, 9})}, "1-3,9", true},
		{"rows too many to name", Change{Pushes: 500, inbox: true, inboxRuns: runsOf(scattered)}, "", true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p := b.payload(tc.c)
			if len(p) > maxPayload {
				t.Fatalf("payload of %d bytes, at most %d", len(p), maxPayload)
			}
			var m busMessage
			if err := json.Unmarshal(p, &m); err != nil {
				t.Fatal(err)
			}
			if m.InboxRuns != tc.runs || m.Overflow != tc.overflow || !m.Inbox || m.Pushes != tc.c.Pushes {
				t.Errorf("runs %q, overflow %v, inbox %v, pushes %d; want %q, %v, true, %d", m.InboxRuns, m.Overflow, m.Inbox, m.Pushes, tc.runs, tc.overflow, tc.c.Pushes)
			}
		})
	}
}

// A listener whose pushes another process applies asks the database only
// for rows that were applied: the apply's notification names them. (It
// used to ask for its lowest thousand awaited pushes at each look, until a
// thousand of them had none applied.) The look at every awaited push is
// kept off here (reportEvery), so every outcome comes from a notification.
func TestInboxReporterAsksForAppliedRowsOnly(t *testing.T) {
	pgtest.OwnEngine(t)
	t.Parallel()
	applier, taker := openShared2(t)
	taker.inbox.reportEvery = time.Hour
	var mu sync.Mutex
	asked, answered, looks := 0, 0, 0
	read := taker.inbox.readApplied
	taker.inbox.readApplied = func(ids []int64) ([]appliedRow, error) {
		done, err := read(ids)
		mu.Lock()
		asked, answered, looks = asked+len(ids), answered+len(done), looks+1
		mu.Unlock()
		return done, err
	}
	const batches = 3
	ps := inboxPushes(batches * applyBatchSize)
	outcomes := map[string]ApplyResult{}
	heard := func() int {
		mu.Lock()
		defer mu.Unlock()
		return len(outcomes)
	}
	for _, p := range ps {
		ingest(t, taker, p, func(r ApplyResult) {
			mu.Lock()
			outcomes[p.Key()] = r
			mu.Unlock()
		})
	}
	for i := 1; i <= batches; i++ {
		n, _, err := applier.inbox.applyBatch(applyBatchSize, 0)
		if err != nil || n != applyBatchSize {
			t.Fatalf("batch %d: %d applied, %v", i, n, err)
		}
		waitLease(t, fmt.Sprintf("the outcomes of batch %d", i), func() bool { return heard() == i*applyBatchSize })
	}
	mu.Lock()
	defer mu.Unlock()
	if asked != answered || answered != len(ps) {
		t.Errorf("the reporter asked for %d rows in %d looks, %d of them applied; want %d, each applied", asked, looks, answered, len(ps))
	}
	for _, p := range ps {
		if r := outcomes[p.Key()]; !r.Applied || r.ID == 0 {
			t.Errorf("push %s: outcome %+v, want applied with its push number", p.Key(), r)
		}
	}
}

// What one look of the reporter asks the database: the awaited rows among
// those a notification named; every awaited row when a notification did
// not name them (a binary before this one, the bus reconnected) or at the
// look every reportEvery.
func TestInboxReportAsks(t *testing.T) {
	for _, tc := range []struct {
		name    string
		heard   [][]idRun // notifications since the last look; nil: rows not named
		all     bool      // the look every reportEvery
		failing bool      // the database does not answer
		asked   string    // the rows asked, query by query
		left    string    // the awaited rows after the look
	}{
		{"named rows", [][]idRun{{{3, 5}}}, false, false, "[[3 4 5]]", "[1 2 6 7 8 9 10 12]"},
		{"two notifications, one look", [][]idRun{{{3, 3}}, {{4, 4}, {12, 20}}}, false, false, "[[3 4 12]]", "[1 2 5 6 7 8 9 10 12]"},
		{"rows another listener took", [][]idRun{{{11, 11}, {13, 40}}}, false, false, "[]", "[1 2 3 4 5 6 7 8 9 10 12]"},
		{"rows not named", [][]idRun{nil}, false, false, "[[1 2 3 4 5 6 7 8 9 10 12]]", "[6 7 8 9 10 12]"},
		{"named, then not named", [][]idRun{{{3, 3}}, nil}, false, false, "[[1 2 3 4 5 6 7 8 9 10 12]]", "[6 7 8 9 10 12]"},
		{"the look at every row", nil, true, false, "[[1 2 3 4 5 6 7 8 9 10 12]]", "[6 7 8 9 10 12]"},
		{"no notification", nil, false, false, "[]", "[1 2 3 4 5 6 7 8 9 10 12]"},
		{"the database fails", [][]idRun{{{3, 5}}}, false, true, "[[3 4 5]]", "[1 2 3 4 5 6 7 8 9 10 12]"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ib := &inbox{ctx: t.Context(), waiters: map[uint64][]func(ApplyResult){}}
			for _, id := range []uint64{1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 12} {
				ib.waiters[id] = []func(ApplyResult){func(ApplyResult) {}}
			}
			var asked [][]int64
			ib.readApplied = func(ids []int64) ([]appliedRow, error) {
				asked = append(asked, slices.Clone(ids))
				if tc.failing {
					return nil, errors.New("connection refused")
				}
				var done []appliedRow
				for _, id := range ids {
					if id <= 5 { // the rows applied so far
						done = append(done, appliedRow{id: uint64(id), res: ApplyResult{ID: uint64(id), Applied: true}})
					}
				}
				return done, nil
			}
			for _, runs := range tc.heard {
				ib.heardApplied(runs)
			}
			ib.report(tc.all)
			left := slices.Sorted(maps.Keys(ib.waiters))
			if fmt.Sprint(asked) != tc.asked || fmt.Sprint(left) != tc.left {
				t.Errorf("asked %v, left %v; want %s, %s", asked, left, tc.asked, tc.left)
			}
			if tc.failing && !ib.lookAll {
				t.Error("after a failed look the next one does not look at every awaited row")
			}
		})
	}
}
