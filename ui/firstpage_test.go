package ui

import (
	"context"
	"slices"
	"sync"
	"testing"
	"time"

	tea "charm.land/bubbletea/v2"

	"paydesk/internal/ops"
	"paydesk/store"
)

// readLog is a fake store that notes which reads the console asks, in
// order.
type readLog struct {
	*fakeStore
	mu    sync.Mutex
	reads []string
}

func (r *readLog) note(what string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.reads = append(r.reads, what)
}

func (r *readLog) ReservationPage(ctx context.Context, q store.PageQuery) (store.Page, error) {
	if q.State == "" && q.Filter == "" {
		r.note("the reservations list's page")
	} else {
		r.note("reservations in state " + string(q.State))
	}
	return r.fakeStore.ReservationPage(ctx, q)
}

// WarmLists makes the fake a store whose lists the console warms.
func (r *readLog) WarmLists(context.Context) error {
	r.note("warm-up")
	return nil
}

func (r *readLog) TransactionPage(ctx context.Context, q store.PageQuery) (store.TxPage, error) {
	r.note("transactions")
	return r.fakeStore.TransactionPage(ctx, q)
}

func (r *readLog) Pushes(ctx context.Context, limit int, before uint64) ([]*store.PushRecord, error) {
	r.note("pushes")
	return r.fakeStore.Pushes(ctx, limit, before)
}

func (r *readLog) Audit(ctx context.Context, limit int) ([]store.AuditEntry, error) {
	r.note("audit")
	return r.fakeStore.Audit(ctx, limit)
}

func (r *readLog) Exchanges(ctx context.Context, limit int) ([]store.Exchange, error) {
	r.note("exchanges")
	return r.fakeStore.Exchanges(ctx, limit)
}

func (r *readLog) Ops(ctx context.Context, states ...store.OpState) ([]*store.PendingOp, error) {
	r.note("ops")
	return r.fakeStore.Ops(ctx, states...)
}

// TestFirstPageReadFirst: at start the reservations list's first page is
// the first read after the counts; what the other tabs show, and the
// warm-up of the lists' search blocks, are read once that page has been
// answered and firstFrameSettle has passed (the terminal draws the frame
// meanwhile), and all of it is read.
func TestFirstPageReadFirst(t *testing.T) {
	for _, tc := range []struct {
		name  string
		fixed func(*Config)
	}{
		{"opens on the reservations", func(c *Config) { c.NoAttentionStart = true }},
		{"may open on the attention tab", func(c *Config) { c.NoAttentionStart = false }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			st := &readLog{fakeStore: fixture()}
			var beforeSettle [][]string
			cfg := Config{Store: st, Mode: ops.ModeSandbox, Now: func() time.Time { return testNow }, Location: time.UTC,
				ExportDir: t.TempDir(), FixtureDir: t.TempDir(),
				// A wait (the settle's, the warm-up's) is over at once; the
				// reads asked before the settle's wait are noted.
				Tick: func(d time.Duration, fn func(time.Time) tea.Msg) tea.Cmd {
					if d == firstFrameSettle {
						st.mu.Lock()
						beforeSettle = append(beforeSettle, slices.Clone(st.reads))
						st.mu.Unlock()
					}
					return func() tea.Msg { return fn(testNow) }
				}}
			tc.fixed(&cfg)
			a := New(cfg)
			pump(t, a, a.Init())
			st.mu.Lock()
			reads := slices.Clone(st.reads)
			st.mu.Unlock()
			if len(reads) == 0 || reads[0] != "the reservations list's page" {
				t.Fatalf("reads %q: the reservations list's page is not first", reads)
			}
			for _, want := range []string{"reservations in state reserved", "transactions", "pushes", "audit", "exchanges", "ops", "warm-up"} {
				if !slices.Contains(reads, want) {
					t.Errorf("reads %q: no %s after the first page", reads, want)
				}
			}
			if !a.tabs[TabReservations].(interface{ Answered() bool }).Answered() {
				t.Error("the reservations list has no answer")
			}
			if len(a.afterFirstPage) != 0 {
				t.Errorf("%d reads still kept back after the first page", len(a.afterFirstPage))
			}
			if len(beforeSettle) != 1 || !slices.Equal(beforeSettle[0], []string{"the reservations list's page"}) {
				t.Errorf("reads before the first frame's settle %q, want one wait after the first page alone", beforeSettle)
			}
		})
	}
}

// countsLog notes the status line's counts too.
type countsLog struct{ *readLog }

func (c countsLog) Counts(ctx context.Context) (store.Counts, error) {
	c.note("counts")
	return c.readLog.Counts(ctx)
}

// TestCountsBeforeTheFirstPage: the console's first load reads the status
// line's counts before it gives the reservations list its source, so that
// the list's first page is not read beside them (on a team's database the
// open leaves one connection in the pool, and the page waited for a new
// one).
func TestCountsBeforeTheFirstPage(t *testing.T) {
	st := countsLog{&readLog{fakeStore: fixture()}}
	cfg := Config{Store: st, Mode: ops.ModeSandbox, Now: func() time.Time { return testNow }, Location: time.UTC,
		ExportDir: t.TempDir(), FixtureDir: t.TempDir(), NoAttentionStart: true, NoFirstFrameSettle: true}
	a := New(cfg)
	msg := a.reload(store.Change{Overflow: true})()
	st.mu.Lock()
	reads := slices.Clone(st.reads)
	st.mu.Unlock()
	if !slices.Equal(reads, []string{"counts"}) {
		t.Fatalf("reads when the first load's command returned: %q; want the counts alone, read already", reads)
	}
	pump(t, a, func() tea.Msg { return msg })
	st.mu.Lock()
	reads = slices.Clone(st.reads)
	st.mu.Unlock()
	if len(reads) < 2 || reads[1] != "the reservations list's page" {
		t.Fatalf("reads %q: the list's page does not follow the counts", reads)
	}
}
