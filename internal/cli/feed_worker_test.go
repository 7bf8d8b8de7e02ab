package cli

import (
	"slices"
	"testing"

	"paydesk/store"
)

type fedWorker struct{ got []string }

func (f *fedWorker) Arrived(n int) { f.got = append(f.got, "arrived") }
func (f *fedWorker) Kick()         { f.got = append(f.got, "kick") }

// TestFeedWorker: the outbox worker hears of pushes stored (counted
// towards a burst) and of a resend (a kick: due at once); other changes
// leave it be. Before, a resend made in the console waited for the
// worker's next look, up to a minute, though the console said "at once".
func TestFeedWorker(t *testing.T) {
	changes := make(chan store.Change, 8)
	for _, c := range []store.Change{
		{Pushes: 3},
		{Deliveries: true},
		{Audit: true},
		{Overflow: true},
		{Reservations: []string{"R1"}},
	} {
		changes <- c
	}
	close(changes)
	w := &fedWorker{}
	feedWorker(changes, w)
	if want := []string{"arrived", "kick", "arrived"}; !slices.Equal(w.got, want) {
		t.Fatalf("the worker heard %v, want %v", w.got, want)
	}
}
