package views

import (
	"context"
	"errors"
	"slices"
	"strings"
	"testing"
	"time"

	tea "charm.land/bubbletea/v2"

	"paydesk/store"
)

// holdingCount is a source whose count for the search word held blocks
// until its caller gives it up, and says so.
type holdingCount struct {
	slowSource
	held    string
	started chan struct{}
	ended   chan error
}

// ReservationPage leaves a search's total to the count, as the stores do.
func (h holdingCount) ReservationPage(ctx context.Context, q store.PageQuery) (store.Page, error) {
	p, err := h.slowSource.ReservationPage(ctx, q)
	if len(q.SearchWords()) > 0 {
		p.Total = -1
	}
	return p, err
}

func (h holdingCount) ReservationCount(ctx context.Context, q store.PageQuery) (int, error) {
	if slices.Equal(q.SearchWords(), []string{h.held}) {
		h.started <- struct{}{}
		<-ctx.Done()
		h.ended <- ctx.Err()
		return 0, ctx.Err()
	}
	return h.slowSource.ReservationCount(ctx, q)
}

// TestNewQuestionCancelsReads: a key typed into the filter gives up the
// reads of the question before it — a count still running is cancelled
// (on PostgreSQL the server stops the query), not left to run beside the
// new question's reads — and the list shows the new question's rows.
func TestNewQuestionCancelsReads(t *testing.T) {
	src := holdingCount{
		slowSource: slowSource{&memSource{all: summaries(genRows(3000))}},
		held:       "r", started: make(chan struct{}, 1), ended: make(chan error, 1),
	}
	s := NewReservations(NewContext(func() time.Time { return listNow }))
	s.SetSize(120, 20)
	finish(s.Update(ReservationSourceMsg{Source: src}), s)
	press(s, "/")

	// The commands run as Bubble Tea runs them, each on its own
	// goroutine; their answers are taken on this one.
	msgs := make(chan tea.Msg, 64)
	run := func(cmd tea.Cmd) {
		if cmd != nil {
			go func() { msgs <- cmd() }()
		}
	}
	take := func(m tea.Msg) {
		if b, ok := m.(tea.BatchMsg); ok {
			for _, c := range b {
				run(c)
			}
			return
		}
		run(s.Update(m))
	}

	run(s.Update(tea.KeyPressMsg{Code: 'r', Text: "r"}))
	for waiting := true; waiting; {
		select {
		case m := <-msgs:
			take(m)
		case <-src.started:
			waiting = false
		}
	}
	run(s.Update(tea.KeyPressMsg{Code: 'e', Text: "e"}))
	for {
		select {
		case m := <-msgs:
			take(m)
			continue
		case err := <-src.ended:
			if !errors.Is(err, context.Canceled) {
				t.Fatalf("the count of the question before ended with %v, want context.Canceled", err)
			}
		}
		break
	}
	// The new question's rows come (the list's reads go on meanwhile).
	for s.list.inflight || !s.list.loaded || len(s.list.rows) == 0 {
		take(<-msgs)
	}
	if s.list.query != "re" || s.list.err != nil {
		t.Fatalf("the list asks %q (error %v), want \"re\"", s.list.query, s.list.err)
	}
}

// TestWholeListCountWhileRead: while the whole list's first page is read
// again (another sort), the count line says the list's count, not
// "0 of" it.
func TestWholeListCountWhileRead(t *testing.T) {
	s := NewReservations(NewContext(func() time.Time { return listNow }))
	s.SetSize(120, 20)
	src := holdingCount{slowSource: slowSource{&memSource{all: summaries(genRows(3000))}}}
	finish(s.Update(ReservationSourceMsg{Source: src}), s)
	cmd := s.Update(tea.KeyPressMsg{Code: 's', Text: "s"}) // the read not run yet
	v := s.View()
	if !s.list.inflight || !strings.Contains(v, "… 3,000 reservations") || strings.Contains(v, "0 of 3,000") {
		t.Fatalf("while the sorted list is read (inflight %v):\n%s", s.list.inflight, v)
	}
	finish(cmd, s)
	if v := s.View(); !strings.Contains(v, "3,000 reservations") || strings.Contains(v, "…") && strings.Contains(v, "… 3,000") {
		t.Fatalf("after the read:\n%s", v)
	}
}
