package lineout

import (
	"fmt"
	"io"
	"sync"
	"time"
)

// Options configure a Writer; zero fields take the defaults.
type Options struct {
	// MaxBytes bounds the lines held while the output is slow (1 MiB).
	MaxBytes int
	// Notice, if set, is told when lines start being dropped (one line per
	// stall). Give it a Writer of its own so that it cannot block either.
	Notice *Writer
	// NoticeText is that line for n lines dropped so far (default:
	// "output is not being read: lines dropped (n so far)").
	NoticeText func(n uint64) string
	// DroppedLine is the line written before the next line that gets
	// through, for the n lines dropped since (default: "… n lines
	// dropped: output too slow").
	DroppedLine func(n uint64) string
}

// Writer writes lines in order from a goroutine of its own. Line never
// blocks: when MaxBytes are waiting, the line is dropped and counted.
type Writer struct {
	w    io.Writer
	opts Options

	mu       sync.Mutex
	queue    [][]byte
	queued   int // bytes in queue
	dropped  uint64
	total    uint64 // dropped, ever
	noticed  bool   // the notice for the current stall went out
	closed   bool
	wake     chan struct{}
	finished chan struct{}
}

// New starts a Writer on w.
func New(w io.Writer, opts Options) *Writer {
	if opts.MaxBytes <= 0 {
		opts.MaxBytes = 1 << 20
	}
	if opts.NoticeText == nil {
		opts.NoticeText = func(n uint64) string {
			return fmt.Sprintf("output is not being read: lines dropped (%d so far)", n)
		}
	}
	if opts.DroppedLine == nil {
		opts.DroppedLine = func(n uint64) string { return fmt.Sprintf("… %d lines dropped: output too slow", n) }
	}
	l := &Writer{w: w, opts: opts, wake: make(chan struct{}, 1), finished: make(chan struct{})}
	go l.run()
	return l
}

// Line queues line (a newline is added if it lacks one). It returns false
// when the line was dropped.
func (l *Writer) Line(line string) bool {
	if line == "" || line[len(line)-1] != '\n' {
		line += "\n"
	}
	l.mu.Lock()
	if l.closed {
		l.mu.Unlock()
		return false
	}
	if l.queued+len(line) > l.opts.MaxBytes {
		l.dropped++
		l.total++
		notice := !l.noticed
		l.noticed = true
		total := l.total
		l.mu.Unlock()
		if notice && l.opts.Notice != nil {
			l.opts.Notice.Line(l.opts.NoticeText(total))
		}
		return false
	}
	l.queue = append(l.queue, []byte(line))
	l.queued += len(line)
	l.mu.Unlock()
	select {
	case l.wake <- struct{}{}:
	default:
	}
	return true
}

// Printf queues a formatted line.
func (l *Writer) Printf(format string, args ...any) bool { return l.Line(fmt.Sprintf(format, args...)) }

// Dropped is the number of lines dropped so far.
func (l *Writer) Dropped() uint64 {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.total
}

func (l *Writer) run() {
	defer close(l.finished)
	var buf []byte
	for {
		l.mu.Lock()
		if len(l.queue) == 0 && l.dropped == 0 {
			closed := l.closed
			l.mu.Unlock()
			if closed {
				return
			}
			<-l.wake
			continue
		}
		buf = buf[:0]
		if l.dropped > 0 && len(l.queue) > 0 {
			buf = append(buf, l.opts.DroppedLine(l.dropped)...)
			buf = append(buf, '\n')
			l.dropped = 0
		}
		for _, q := range l.queue {
			buf = append(buf, q...)
		}
		clear(l.queue)
		l.queue, l.queued = l.queue[:0], 0
		if len(buf) == 0 {
			// Dropped lines and nothing after them: wait for a line
			// (or Close) to carry the count.
			closed := l.closed
			l.mu.Unlock()
			if closed {
				return
			}
			<-l.wake
			continue
		}
		l.mu.Unlock()
		// The queue is free again while this write waits for the reader.
		_, _ = l.w.Write(buf)
		// The reader took it: a later stall is a new one, with a notice.
		l.mu.Lock()
		l.noticed = false
		l.mu.Unlock()
	}
}

// Close writes what is queued (and the count of lines dropped since the
// last line) and returns once it is written, or after timeout with an
// error when the output does not take it: a stalled reader never holds the
// program up for longer.
func (l *Writer) Close(timeout time.Duration) error {
	l.mu.Lock()
	if !l.closed {
		l.closed = true
		if l.dropped > 0 {
			l.queue = append(l.queue, []byte(l.opts.DroppedLine(l.dropped)+"\n"))
			l.dropped = 0
		}
	}
	l.mu.Unlock()
	select {
	case l.wake <- struct{}{}:
	default:
	}
	select {
	case <-l.finished:
		return nil
	case <-time.After(timeout):
		l.mu.Lock()
		n := len(l.queue)
		l.mu.Unlock()
		return fmt.Errorf("output stalled: %d lines not written", n)
	}
}
