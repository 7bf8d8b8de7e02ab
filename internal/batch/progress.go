package batch

import (
	"fmt"
	"io"
	"sync"
	"time"

	"charm.land/bubbles/v2/progress"

	"paydesk/store"
)

// Progress shows a run to a person: on a terminal one bar that redraws in
// place with the counts and the rate (bubbles' progress bar, drawn with
// ViewAs: a batch is not a Bubble Tea program), piped one line per
// reservation as it ends.
type Progress struct {
	w        io.Writer
	terminal bool
	bar      progress.Model
	start    time.Time
	now      func() time.Time

	mu                     sync.Mutex
	last                   time.Time
	done, total            int
	settled, failed, unk   int
	refused, earlier, sent int
}

// NewProgress writes to w; terminal says whether w is a terminal (a bar)
// or not (lines).
func NewProgress(w io.Writer, terminal bool) *Progress {
	return &Progress{w: w, terminal: terminal, now: time.Now, start: time.Now(),
		bar: progress.New(progress.WithWidth(32), progress.WithoutPercentage(), progress.WithDefaultBlend())}
}

// Event takes one item's end; it is Runner.Progress.
func (p *Progress) Event(e Event) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.done, p.total = e.Done, e.Total
	switch {
	case e.Earlier:
		p.earlier++
	case e.Item.State == store.ItemSettled || e.Item.State == store.ItemSent:
		p.settled++
	case e.Item.State == store.ItemOutcomeUnknown:
		p.unk++
	case e.Item.State == store.ItemRefused:
		p.refused++
	default:
		p.failed++
	}
	if !e.Earlier {
		p.sent++
	}
	if !p.terminal {
		fmt.Fprintln(p.w, ItemLine(e.Item, e.Earlier))
		return
	}
	// Redraw at most 20 times a second, and always at the end.
	now := p.now()
	if now.Sub(p.last) < 50*time.Millisecond && e.Done < e.Total {
		return
	}
	p.last = now
	fmt.Fprint(p.w, "\r\x1b[2K"+p.line(now))
	if e.Done == e.Total {
		fmt.Fprintln(p.w)
	}
}

// Finish ends the bar's line (a run stopped before its last item).
func (p *Progress) Finish() {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.terminal && p.done < p.total {
		fmt.Fprint(p.w, "\r\x1b[2K"+p.line(p.now())+"\n")
	}
}

func (p *Progress) line(now time.Time) string {
	pct := 0.0
	if p.total > 0 {
		pct = float64(p.done) / float64(p.total)
	}
	rate := 0.0
	if el := now.Sub(p.start).Seconds(); el > 0 {
		rate = float64(p.sent) / el
	}
	s := fmt.Sprintf("%s %d/%d reservations  %.1f/s  %d settled", p.bar.ViewAs(pct), p.done, p.total, rate, p.settled)
	if p.failed > 0 {
		s += fmt.Sprintf("  %d failed", p.failed)
	}
	if p.unk > 0 {
		s += fmt.Sprintf("  %d unknown", p.unk)
	}
	if p.refused > 0 {
		s += fmt.Sprintf("  %d refused", p.refused)
	}
	if p.earlier > 0 {
		s += fmt.Sprintf("  %d done earlier", p.earlier)
	}
	return s
}
