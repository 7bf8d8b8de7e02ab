package views

import (
	"fmt"
	"math/rand/v2"
	"testing"
	"time"

	"github.com/shopspring/decimal"

	"paydesk/store"
)

// The console skips the ticks before a screen's TextUntil: the text must
// not change before it. Walking from one TextUntil to the next, the frame
// an instant before each is the frame drawn at the one before it (the
// texts only ever move one way, so the ends stand for the stretch); and
// the walk moves, so nothing waits for ever.
func TestTextUntilNeverLate(t *testing.T) {
	start := time.Date(2026, 11, 23, 23, 59, 30, 0, time.UTC) // midnight in 30 s
	var sums []store.Summary
	for i, ago := range []time.Duration{0, 3 * time.Second, 59 * time.Second, 29*time.Minute + 58*time.Second, 59*time.Minute + 59*time.Second,
		47*time.Hour + 59*time.Minute + 59*time.Second, 11 * 24 * time.Hour, 14*24*time.Hour - time.Second, 365*24*time.Hour - 3*time.Second, 400 * 24 * time.Hour} {
		sums = append(sums, store.Summary{Key: fmt.Sprintf("K%02d", i), ReservationNumber: fmt.Sprint("R", i), State: store.StateReserved,
			Remaining: decimal.NewFromInt(10), Currency: "EUR", Created: start.Add(-ago)})
		sums = append(sums, store.Summary{Key: fmt.Sprintf("%sSHOP-%d", store.PlaceholderPrefix, i), Invoice: fmt.Sprintf("SHOP-%d", i),
			State: store.StateAwaitingCustomer, Amount: decimal.NewFromInt(5), Currency: "EUR", Created: start.Add(-ago)})
	}
	var requests []*store.Approval
	for i, in := range []time.Duration{4 * time.Second, 90 * time.Second, 61 * time.Minute, 49 * time.Hour, 15 * 24 * time.Hour} {
		requests = append(requests, &store.Approval{ID: uint64(i + 1), State: store.ApprovalPending, Kind: "refund", Amount: decimal.NewFromInt(150),
			Currency: "EUR", Requester: "alice", Expires: start.Add(in)})
	}
	rows := NewReservationRows(sums)
	for _, tc := range []struct {
		name string
		make func(ctx *Context) (view func() string, until func() time.Time)
	}{
		{"attention", func(ctx *Context) (func() string, func() time.Time) {
			a := NewAttention(ctx)
			a.SetSize(140, 40)
			a.Update(ReservationRowsMsg{Full: true, Rows: rows})
			a.Update(ApprovalsMsg{List: requests})
			return a.View, a.TextUntil
		}},
		{"reservations", func(ctx *Context) (func() string, func() time.Time) {
			s := NewReservations(ctx)
			s.SetSize(140, 30)
			finish(s.Update(ReservationRowsMsg{Full: true, Rows: rows}), s)
			return s.View, s.TextUntil
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			now := start
			view, until := tc.make(NewContext(func() time.Time { return now }))
			changes := 0
			for now.Before(start.Add(30 * 24 * time.Hour)) {
				frame := view()
				next := until()
				if !next.After(now) {
					t.Fatalf("at +%s TextUntil is %s, not after now", now.Sub(start), next.Sub(start))
				}
				at := now
				// An instant before: age's float arithmetic may turn a
				// text a few nanoseconds early.
				now = next.Add(-time.Microsecond)
				if now.After(at) {
					if got := view(); got != frame {
						t.Fatalf("the text changed between +%s and +%s, before TextUntil (+%s):\n%s\nwas\n%s",
							at.Sub(start), now.Sub(start), next.Sub(start), got, frame)
					}
				}
				now = next
				changes++
			}
			// Seconds while the youngest age is under a minute, then each
			// step: far fewer frames than the 2.6 million seconds walked.
			if changes > 2000 {
				t.Errorf("%d frames in 30 days", changes)
			}
		})
	}
}

// ageChanges and whenChanges (a deadline's countdown, "in 5m") are never
// later than the text's change, and at most an instant before it.
func TestAgeTextChanges(t *testing.T) {
	r := rand.New(rand.NewPCG(27, 6))
	now := time.Date(2026, 11, 23, 12, 0, 0, 0, time.UTC)
	durations := []time.Duration{0, time.Nanosecond, time.Second, time.Minute - 1, time.Minute, time.Hour, 48 * time.Hour, 14 * 24 * time.Hour,
		365 * 24 * time.Hour, 3*365*24*time.Hour + 5}
	for range 5000 {
		durations = append(durations, time.Duration(r.Int64N(int64(2*365*24*time.Hour))))
	}
	for _, d := range durations {
		// An age: t is d before now.
		past := now.Add(-d)
		if at := ageChanges(past, now); !at.After(now) || age(past, at.Add(-time.Microsecond)) != age(past, now) || age(past, at) == age(past, now) {
			t.Fatalf("ageChanges(now-%s) = now+%s: %q at now, %q just before, %q at it", d, at.Sub(now), age(past, now),
				age(past, at.Add(-time.Microsecond)), age(past, at))
		}
		if d == 0 {
			continue
		}
		// A countdown: the deadline is d after now.
		r := AttentionRow{When: now.Add(d)}
		at := whenChanges(r, now)
		if at.Before(now) {
			t.Fatalf("whenChanges(now+%s) = now-%s", d, now.Sub(at))
		}
		if !at.After(now) {
			at = now.Add(time.Nanosecond) // the text turns at once
		} else if whenText(r, now) != whenText(r, at.Add(-time.Microsecond)) {
			t.Fatalf("whenChanges(now+%s) = now+%s: %q at now, %q just before", d, at.Sub(now), whenText(r, now), whenText(r, at.Add(-time.Microsecond)))
		}
		// The last instant of the text, or the first of the next one.
		if whenText(r, at.Add(time.Microsecond)) == whenText(r, now) {
			t.Fatalf("whenChanges(now+%s) = now+%s: %q at now and after it", d, at.Sub(now), whenText(r, now))
		}
	}
}
