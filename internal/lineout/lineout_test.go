package lineout

import (
	"bufio"
	"fmt"
	"io"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// syncBuffer is a strings.Builder safe for the writer goroutine.
type syncBuffer struct {
	mu sync.Mutex
	b  strings.Builder
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

func TestLinesInOrder(t *testing.T) {
	var out syncBuffer
	w := New(&out, Options{})
	for i := range 1000 {
		if !w.Printf("line %d", i) {
			t.Fatalf("line %d dropped with a reader that keeps up", i)
		}
	}
	if err := w.Close(time.Second); err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSuffix(out.String(), "\n"), "\n")
	if len(lines) != 1000 || lines[0] != "line 0" || lines[999] != "line 999" {
		t.Fatalf("%d lines, first %q last %q", len(lines), lines[0], lines[len(lines)-1])
	}
}

// TestStalledReader (F3): with nobody reading, Line returns at once and
// counts what it drops; the notice says so once per stall; when the reader
// comes back the next line carries the count; Close gives up after its
// timeout.
func TestStalledReader(t *testing.T) {
	pr, pw := io.Pipe()
	var notices syncBuffer
	notice := New(&notices, Options{})
	w := New(pw, Options{MaxBytes: 4 << 10, Notice: notice})
	// A writer that waited for its reader would never finish: this reader
	// reads nothing. The deadline only ends a stuck test.
	dropped := 0
	done := make(chan struct{})
	go func() {
		defer close(done)
		for i := range 20000 {
			if !w.Printf("push %d %s", i, strings.Repeat("x", 60)) {
				dropped++
			}
		}
	}()
	select {
	case <-done:
	case <-time.After(time.Minute):
		t.Fatal("20,000 lines to a stalled reader: the writer waits for the reader")
	}
	if dropped < 19000 || w.Dropped() != uint64(dropped) {
		t.Fatalf("dropped %d, Dropped() = %d", dropped, w.Dropped())
	}
	// Every notice was queued by the Printf that dropped a line; closing
	// the notice's writer writes them all out.
	if err := notice.Close(time.Minute); err != nil {
		t.Fatal(err)
	}
	if got := notices.String(); strings.Count(got, "\n") != 1 || !strings.Contains(got, "lines dropped") {
		t.Fatalf("notices %q, want one", got)
	}

	// The reader comes back.
	lines := make(chan string, 100000)
	go func() {
		sc := bufio.NewScanner(pr)
		for sc.Scan() {
			lines <- sc.Text()
		}
		close(lines)
	}()
	deadline := time.After(time.Minute) // only a stuck test
	// The backlog drains first: until it does, a new line may be dropped too.
	var extra atomic.Int64
	go func() {
		for !w.Line("after the stall") {
			extra.Add(1)
			time.Sleep(time.Millisecond)
		}
	}()
	got, counted := 0, 0
	for done := false; !done; {
		select {
		case l := <-lines:
			var n int
			switch {
			case l == "after the stall":
				done = true
			case strings.HasPrefix(l, "… "):
				if _, err := fmt.Sscanf(l, "… %d lines dropped", &n); err != nil {
					t.Fatalf("line %q: %v", l, err)
				}
				counted += n
			default:
				got++
			}
		case <-deadline:
			t.Fatalf("only %d lines arrived", got)
		}
	}
	if got != 20000-dropped || counted != dropped+int(extra.Load()) {
		t.Fatalf("%d lines arrived and %d were said dropped; want %d and %d", got, counted, 20000-dropped, dropped+int(extra.Load()))
	}

	// Stalled again, Close gives up in time.
	pr.Close()
	pr2, pw2 := io.Pipe()
	defer pr2.Close()
	w2 := New(pw2, Options{})
	w2.Line("never read")
	closed := make(chan error, 1)
	go func() { closed <- w2.Close(200 * time.Millisecond) }()
	select {
	case err := <-closed:
		if err == nil {
			t.Fatal("Close on a stalled reader: no error")
		}
	case <-time.After(time.Minute):
		t.Fatal("Close on a stalled reader waits for the reader")
	}
	_ = w.Close(time.Second)
	_ = notice.Close(time.Second)
}
