package cli

import (
	"context"
	"errors"
	"testing"
	"time"

	"paydesk/internal/gwsync"
)

func TestParseSyncEvery(t *testing.T) {
	for _, tt := range []struct {
		in   string
		want time.Duration
		bad  bool
	}{
		{"", defaultSyncEvery, false},
		{"0", 0, false},
		{"off", 0, false},
		{"1h", time.Hour, false},
		{"90s", 90 * time.Second, false},
		{"30s", 0, true},
		{"often", 0, true},
		{"-5m", 0, true},
	} {
		got, err := parseSyncEvery(tt.in)
		if (err != nil) != tt.bad || got != tt.want {
			t.Errorf("parseSyncEvery(%q) = %v, %v; want %v (error %v)", tt.in, got, err, tt.want, tt.bad)
		}
	}
}

// autoSync runs once when the start delay ends (not before), then once per
// tick, reports every run (failures too: the next tick tries again) and
// stops with its context.
func TestAutoSyncRunsAtStartAndOnEveryTick(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	first, tick := make(chan time.Time, 1), make(chan time.Time)
	runs := make(chan struct{}, 10)
	n := 0
	run := func(context.Context) (gwsync.Result, error) {
		n++
		runs <- struct{}{}
		if n == 2 {
			return gwsync.Result{}, errors.New("gateway down")
		}
		return gwsync.Result{Invoices: n}, nil
	}
	var reported []string
	done := make(chan struct{})
	go func() {
		defer close(done)
		autoSync(ctx, first, tick, run, func(res gwsync.Result, err error) {
			if err != nil {
				reported = append(reported, "error")
				return
			}
			reported = append(reported, "ok")
		})
	}()
	select {
	case <-runs:
		t.Fatal("a run before the start delay ended")
	default:
	}
	first <- time.Time{}
	<-runs // once the start delay ends, before any tick
	tick <- time.Time{}
	<-runs
	tick <- time.Time{}
	<-runs
	tick <- time.Time{} // taken once the third run is reported: the loop waits for the next
	cancel()
	<-done
	if len(reported) < 3 || reported[0] != "ok" || reported[1] != "error" || reported[2] != "ok" {
		t.Fatalf("reported %v, want ok, error, ok", reported)
	}
}

func TestSyncLine(t *testing.T) {
	if got := syncLine(gwsync.Result{Invoices: 4}, nil); got != "" {
		t.Errorf("nothing learned: %q, want no line", got)
	}
	if got := syncLine(gwsync.Result{Learned: make([]gwsync.Learned, 2)}, nil); got != "sync: learned 2 from the gateway that no push told (see Attention)" {
		t.Errorf("learned: %q", got)
	}
	if got := syncLine(gwsync.Result{}, errors.New("lookup: \x1b[31mred")); got != "sync: lookup: ␛[31mred" {
		t.Errorf("error: %q", got)
	}
}
