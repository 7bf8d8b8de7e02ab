package ui

import (
	"context"
	"fmt"
	"testing"
	"time"

	"paydesk/store"
)

// summaryStore is the fake store with these reservation summaries as its
// list.
type summaryStore struct {
	*fakeStore
	all []store.Summary
}

func (s summaryStore) ReservationPage(_ context.Context, q store.PageQuery) (store.Page, error) {
	return store.PageSummaries(s.all, q), nil
}

// TestAttentionSummariesCap: the attention tab's read stops at
// attentionCap reservations near their window's end of each state, oldest
// first, and says when it left one out (the oldest not read): the tab then
// shows its count as a floor. Rows not yet near their window's end are
// neither read nor left out.
func TestAttentionSummariesCap(t *testing.T) {
	day := 24 * time.Hour
	mk := func(n int, st store.State, age time.Duration) []store.Summary {
		var out []store.Summary
		for i := range n {
			out = append(out, store.Summary{Key: fmt.Sprintf("%s%05d", st, i), State: st,
				Created: testNow.Add(-age).Add(time.Duration(i) * time.Second)})
		}
		return out
	}
	res, partly := store.StateReserved, store.StatePartlyCaptured
	for _, tc := range []struct {
		name        string
		all         []store.Summary
		wantRows    int
		wantCreated time.Time // of the oldest left out; zero for none
	}{
		{"up to the cap", mk(attentionCap, res, 20*day), attentionCap, time.Time{}},
		{"past the cap", mk(attentionCap+3, res, 20*day), attentionCap, testNow.Add(-20 * day).Add(attentionCap * time.Second)},
		{"past the cap, the rest far from their window's end", append(mk(attentionCap, res, 20*day), mk(3, res, day)...), attentionCap, time.Time{}},
		{"each state up to its cap", append(mk(attentionCap, res, 20*day), mk(attentionCap, partly, 12*day)...), 2 * attentionCap, time.Time{}},
		{"past the cap in both states", append(mk(attentionCap+1, res, 12*day), mk(attentionCap+1, partly, 20*day)...), 2 * attentionCap,
			testNow.Add(-20 * day).Add(attentionCap * time.Second)},
		{"a few", mk(10, res, 20*day), 10, time.Time{}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			st := summaryStore{fakeStore: &fakeStore{}, all: tc.all}
			sums, beyond, err := attentionSummaries(context.Background(), st, testNow)
			if err != nil {
				t.Fatal(err)
			}
			if len(sums) != tc.wantRows {
				t.Errorf("%d rows, want %d", len(sums), tc.wantRows)
			}
			if !beyond.Created.Equal(tc.wantCreated) || beyond.Orders {
				t.Errorf("left out %+v, want the reservation created %s and no orders", beyond, tc.wantCreated)
			}
		})
	}
}
