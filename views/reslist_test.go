package views

import (
	"context"
	"path/filepath"
	"strings"
	"testing"
	"time"

	tea "charm.land/bubbletea/v2"

	"paydesk/store"
	"paydesk/store/storetest"
)

// pagedTab is the reservations tab reading pages from a real store of n
// generated reservations, as the console does.
func pagedTab(t *testing.T, n int) (*Reservations, *store.DB) {
	t.Helper()
	db, err := store.Open(filepath.Join(t.TempDir(), "c.db"), store.Options{NoSync: true, Now: func() time.Time { return listNow }})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = db.Close() })
	if err := storetest.Generate(db, n, 3); err != nil {
		t.Fatal(err)
	}
	ctx := NewContext(func() time.Time { return listNow })
	s := NewReservations(ctx)
	s.SetSize(120, 20)
	finish(s.Update(ReservationSourceMsg{Source: db}), s)
	return s, db
}

// The list holds a window, not the list: paging to the end of 3,000 rows
// keeps at most windowMax of them, and every row on screen is one read.
func TestPagedListHoldsAWindow(t *testing.T) {
	s, _ := pagedTab(t, 3000)
	if !strings.Contains(s.View(), "3,000 reservations") {
		t.Fatalf("no count:\n%s", s.View())
	}
	for range 200 {
		finish(s.Update(tea.KeyPressMsg{Code: tea.KeyPgDown}), s)
		if len(s.list.rows) > windowMax {
			t.Fatalf("the window holds %d rows", len(s.list.rows))
		}
	}
	if s.list.table.Cursor() != 2999 || strings.Contains(s.View(), "…  ") {
		t.Fatalf("cursor %d after paging to the end:\n%s", s.list.table.Cursor(), s.View())
	}
	press(s, "end")
	press(s, "g") // not a key of the list: nothing happens
	finish(s.Update(tea.KeyPressMsg{Code: tea.KeyHome}), s)
	if s.list.table.Cursor() != 0 || s.list.base != 0 {
		t.Fatalf("home: cursor %d, window at %d", s.list.table.Cursor(), s.list.base)
	}
	// End jumps there in one read.
	finish(s.Update(tea.KeyPressMsg{Code: tea.KeyEnd}), s)
	if r, ok := s.list.selected(); !ok || s.list.table.Cursor() != 2999 {
		t.Fatalf("end: cursor %d on a row read: %v (%v)", s.list.table.Cursor(), ok, r)
	}
}

// Live changes: a new reservation comes in on top with the count, and a
// row on screen shows its new state.
func TestPagedListLive(t *testing.T) {
	s, db := pagedTab(t, 500)
	top, _ := s.list.selected()
	r, err := db.Reservation(t.Context(), top.Summary.Key)
	if err != nil {
		t.Fatal(err)
	}
	r.Requests = append(r.Requests, store.Request{Key: "CANCEL-1", Action: "CancelReservation",
		Status: store.Status{Code: 190, Time: listNow}})
	fresh := &store.Reservation{Key: "FRESH", Invoice: "INV-FRESH", Currency: "EUR", Created: listNow.Add(time.Hour),
		Status: store.Status{Code: 190, Time: listNow.Add(time.Hour)}}
	if err := db.PutReservations(t.Context(), []*store.Reservation{r, fresh}); err != nil {
		t.Fatal(err)
	}
	r, _ = db.Reservation(t.Context(), r.Key)
	f, _ := db.Reservation(t.Context(), "FRESH")
	finish(s.Update(ReservationRowsMsg{Rows: []*ReservationRow{NewReservationRow(r.Summary()), NewReservationRow(f.Summary())}}), s)
	view := s.View()
	if got, _ := s.list.selected(); got.Summary.Key != "FRESH" || !strings.Contains(view, "501 reservations") {
		t.Fatalf("the new row is not on top with the count:\n%s", view)
	}
	if !strings.Contains(view, stateText(r.State())) {
		t.Fatalf("the changed row does not show %s:\n%s", r.State(), view)
	}
	// The filter asks the store: one row.
	press(s, "/", "f", "r", "e", "s", "h")
	if !strings.Contains(s.View(), "1 of 501 reservations") {
		t.Fatalf("filter:\n%s", s.View())
	}
}

// countLater is a source that, like PostgreSQL, leaves a filter's count
// to ReservationCount.
type countLater struct{ slowSource }

func (c countLater) ReservationPage(ctx context.Context, q store.PageQuery) (store.Page, error) {
	p, err := c.slowSource.ReservationPage(ctx, q)
	if !q.Where.Empty() {
		p.Total = -1
	}
	return p, err
}

// A count of many rows comes in two steps: "10,000+" at once, then the
// whole count.
func TestCountInTwoSteps(t *testing.T) {
	rows := genRows(12_000)
	s := NewReservations(NewContext(func() time.Time { return listNow }))
	s.SetSize(120, 20)
	src := countLater{slowSource{&memSource{all: summaries(rows)}}}
	finish(s.Update(ReservationSourceMsg{Source: src}), s)
	press(s, "/")
	var seen []string
	var step func(cmd tea.Cmd)
	step = func(cmd tea.Cmd) {
		if cmd == nil {
			return
		}
		msg := cmd()
		if b, ok := msg.(tea.BatchMsg); ok {
			for _, c := range b {
				step(c)
			}
			return
		}
		next := s.Update(msg)
		seen = append(seen, strings.SplitN(s.View(), "\n", 2)[0])
		step(next)
	}
	step(s.Update(tea.KeyPressMsg{Code: 'r', Text: "r"}))
	all := strings.Join(seen, "\n")
	want := store.PageSummaries(summaries(rows), store.PageQuery{Filter: "r"}).Total
	if !strings.Contains(all, "10,000+ of 12,000") || !strings.Contains(seen[len(seen)-1], countText(want, 12_000, "reservations")) {
		t.Fatalf("the count's steps (want %d at the end):\n%s", want, all)
	}
}

// wholeCounts records the whole counts of a filter asked of a countLater
// source.
type wholeCounts struct {
	countLater
	asked *[]string
}

func (w wholeCounts) ReservationCount(ctx context.Context, q store.PageQuery) (int, error) {
	if q.Limit == 0 && !q.Where.Empty() { // not the list's size, asked with every page
		*w.asked = append(*w.asked, strings.Join(q.Where.Words, " "))
	}
	return w.countLater.ReservationCount(ctx, q)
}

// heldTick is a tick the test's timer holds back until the test fires it.
type heldTick struct {
	d  time.Duration
	fn func(time.Time) tea.Msg
}

// runHolding returns a runner of what a command starts, to the end, on
// s, that keeps the ticks (heldTick) in ticks for the test to fire.
func runHolding(s Screen, ticks *[]heldTick) func(tea.Cmd) {
	var run func(cmd tea.Cmd)
	run = func(cmd tea.Cmd) {
		if cmd == nil {
			return
		}
		switch msg := cmd().(type) {
		case tea.BatchMsg:
			for _, c := range msg {
				run(c)
			}
		case heldTick:
			*ticks = append(*ticks, msg)
		default:
			run(s.Update(msg))
		}
	}
	return run
}

// While the operator types, each key's rows and first count come at once,
// and the whole count of a common word is asked only once the filter has
// stayed for wholeCountPause: a key typed before then drops the whole
// count of the filter it changed.
func TestWholeCountWaitsForAPause(t *testing.T) {
	rows := genRows(12_000)
	ctx := NewContext(func() time.Time { return listNow })
	// The context's timer holds every tick back: the test fires them.
	ctx.Tick = func(d time.Duration, fn func(time.Time) tea.Msg) tea.Cmd {
		return func() tea.Msg { return heldTick{d: d, fn: fn} }
	}
	s := NewReservations(ctx)
	s.SetSize(120, 20)
	var asked []string
	src := wholeCounts{countLater{slowSource{&memSource{all: summaries(rows)}}}, &asked}
	finish(s.Update(ReservationSourceMsg{Source: src}), s)
	press(s, "/")
	// run runs what a key started, to the end, keeping the ticks.
	var ticks []heldTick
	run := runHolding(s, &ticks)
	run(s.Update(tea.KeyPressMsg{Code: 'r', Text: "r"}))
	if !strings.Contains(s.View(), "10,000+ of 12,000") || len(asked) != 0 || len(ticks) != 1 {
		t.Fatalf("after r: %d whole counts asked (%q), %d waiting; want the first count only and one waiting:\n%s", len(asked), asked, len(ticks), s.View())
	}
	run(s.Update(tea.KeyPressMsg{Code: '0', Text: "0"})) // before the pause is over
	for len(ticks) > 0 {
		tick := ticks[0]
		ticks = ticks[1:]
		if tick.d < wholeCountPause {
			t.Errorf("the whole count waits %s, want the pause of %s", tick.d, wholeCountPause)
		}
		run(func() tea.Msg { return tick.fn(listNow.Add(tick.d)) })
	}
	if len(asked) != 1 || asked[0] != "r0" {
		t.Fatalf("whole counts asked: %q, want only the one of \"r0\"", asked)
	}
	want := store.PageSummaries(summaries(rows), store.PageQuery{Filter: "r0"}).Total
	if !strings.Contains(s.View(), countText(want, 12_000, "reservations")) {
		t.Fatalf("want the whole count %d:\n%s", want, s.View())
	}
}

// A typed filter the language refuses says so as the filter's fault —
// the field and the rule — not as a cache that cannot be read.
func TestFilterErrorIsTheFilters(t *testing.T) {
	s, _ := pagedTab(t, 20)
	keys := []string{"/"}
	for _, r := range "amount:>abc" {
		keys = append(keys, string(r))
	}
	press(s, keys...)
	v := s.View()
	if !strings.Contains(v, "Filter: amount: >abc is not an amount") || strings.Contains(v, "Could not read the cache") {
		t.Fatalf("the filter's error:\n%s", v)
	}
}
