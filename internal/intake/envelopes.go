package intake

import (
	"bufio"
	"errors"
	"fmt"
	"io"
)

// EnvelopeReader reads Reserve envelopes one at a time from a stream: one
// JSON object, a JSON array of them, concatenated objects, or one per line
// (NDJSON). It holds one envelope at a time, never the file: an envelope
// larger than MaxEnvelope is skipped to its end and refused as a record of
// its own, so a file of any size is read whole or its refusals are named.
//
// It finds where each value ends with a small scanner (strings, escapes and
// nesting) rather than a JSON decoder, so a broken or oversized envelope
// costs no more than its own bytes and the next one is still found: in an
// NDJSON file (its first envelope fits on its line) an envelope also ends
// with its line.
type EnvelopeReader struct {
	br      *bufio.Reader
	line    int // line of the next byte
	started bool
	array   bool // inside a top-level array
	ended   bool // the array's ']' was read, or the stream is done
	lines   bool // NDJSON: an envelope ends with its line
	first   bool // the first value was read
	buf     []byte
}

// NewEnvelopeReader reads envelopes from r.
func NewEnvelopeReader(r io.Reader) *EnvelopeReader {
	return &EnvelopeReader{br: bufio.NewReaderSize(r, 64<<10), line: 1}
}

// Line is the line the reader stands on (for a file-level error).
func (e *EnvelopeReader) Line() int { return e.line }

func (e *EnvelopeReader) readByte() (byte, error) {
	c, err := e.br.ReadByte()
	if err == nil && c == '\n' {
		e.line++
	}
	return c, err
}

func (e *EnvelopeReader) unread(c byte) {
	_ = e.br.UnreadByte()
	if c == '\n' {
		e.line--
	}
}

// skip passes white space (and, inside an array, the commas between
// elements) and returns the next byte.
func (e *EnvelopeReader) skip() (byte, error) {
	for {
		c, err := e.readByte()
		if err != nil {
			return 0, err
		}
		switch c {
		case ' ', '\t', '\r', '\n':
			continue
		case ',':
			if e.array {
				continue
			}
		}
		return c, nil
	}
}

// Next returns the next envelope as an Item (refused ones carry their
// error and line), io.EOF after the last, or an error that stops the file
// (a read error, data after the array's end).
func (e *EnvelopeReader) Next() (Item, error) {
	if e.ended {
		return Item{}, io.EOF
	}
	if !e.started {
		e.started = true
		if b, err := e.br.Peek(3); err == nil && string(b) == "\ufeff" {
			_, _ = e.br.Discard(3)
		}
		c, err := e.skip()
		if err != nil {
			return e.eof(err)
		}
		if c == '[' {
			e.array = true
		} else {
			e.unread(c)
		}
	}
	c, err := e.skip()
	if err != nil {
		return e.eof(err)
	}
	if e.array && c == ']' {
		e.array = false
		if c, err := e.skip(); err == nil {
			e.ended = true
			return Item{}, fmt.Errorf("line %d: %q after the end of the array: the rest of the file is not read", e.line, c)
		} else if !errors.Is(err, io.EOF) {
			return Item{}, fmt.Errorf("line %d: read: %w", e.line, err)
		}
		e.ended = true
		return Item{}, io.EOF
	}
	e.unread(c)
	start := e.line
	raw, size, err := e.value()
	it := Item{Where: "line " + itoa(start)}
	if !e.first {
		e.first = true
		e.lines = !e.array && e.line == start
	}
	switch {
	case err != nil && !errors.Is(err, errUnfinished):
		e.ended = true
		return Item{}, fmt.Errorf("line %d: read: %w", e.line, err)
	case err != nil:
		it.Err = err
	case size > MaxEnvelope:
		it.Err = fmt.Errorf("envelope of %d bytes is larger than %d bytes (the intake's limit): refused whole", size, MaxEnvelope)
	default:
		o, err := OrderFromEnvelope(raw)
		it.Order, it.Invoice, it.Err = o, o.Invoice, err
	}
	return it, nil
}

func (e *EnvelopeReader) eof(err error) (Item, error) {
	e.ended = true
	if !errors.Is(err, io.EOF) {
		return Item{}, fmt.Errorf("line %d: read: %w", e.line, err)
	}
	if e.array {
		return Item{}, fmt.Errorf("line %d: the file ends inside the array (no closing ])", e.line)
	}
	return Item{}, io.EOF
}

// errUnfinished marks an envelope the file or its line ends inside.
var errUnfinished = errors.New("the envelope is not complete")

// value reads one JSON value and returns its bytes (up to MaxEnvelope of
// them) and its size. An object or array ends where its nesting closes, a
// string at its closing quote, anything else before the next delimiter; an
// NDJSON envelope also ends with its line.
func (e *EnvelopeReader) value() ([]byte, int, error) {
	e.buf = e.buf[:0]
	size := 0
	keep := func(c byte) {
		size++
		if len(e.buf) <= MaxEnvelope {
			e.buf = append(e.buf, c)
		}
	}
	depth, inString, escaped := 0, false, false
	for {
		c, err := e.readByte()
		if errors.Is(err, io.EOF) {
			if size > 0 && depth == 0 && !inString {
				return e.buf, size, nil // a scalar at the end of the file
			}
			return nil, size, fmt.Errorf("%w: the file ends inside it", errUnfinished)
		}
		if err != nil {
			return nil, size, err
		}
		if c == '\n' && e.lines {
			if size > 0 && depth == 0 && !inString {
				return e.buf, size, nil
			}
			return nil, size, fmt.Errorf("%w: its line ends inside it", errUnfinished)
		}
		switch {
		case inString:
			keep(c)
			switch {
			case escaped:
				escaped = false
			case c == '\\':
				escaped = true
			case c == '"':
				inString = false
				if depth == 0 {
					return e.buf, size, nil
				}
			}
		case c == '"':
			keep(c)
			inString = true
		case c == '{' || c == '[':
			if depth == 0 && size > 0 { // a scalar ends where a value starts
				e.unread(c)
				return e.buf, size, nil
			}
			keep(c)
			depth++
		case c == '}' || c == ']':
			if depth == 0 {
				if size > 0 {
					e.unread(c)
					return e.buf, size, nil
				}
				keep(c) // a stray closer is a value of its own, refused
				return e.buf, size, nil
			}
			keep(c)
			depth--
			if depth == 0 {
				return e.buf, size, nil
			}
		case depth == 0 && (c == ' ' || c == '\t' || c == '\r' || c == '\n' || c == ','):
			if size == 0 { // a stray comma is a value of its own, refused
				keep(c)
				return e.buf, size, nil
			}
			e.unread(c)
			return e.buf, size, nil
		default:
			keep(c)
		}
	}
}

// ReadEnvelopes reads every envelope of r (see EnvelopeReader); err is an
// error that stopped the file.
func ReadEnvelopes(r io.Reader) ([]Item, error) {
	er := NewEnvelopeReader(r)
	var items []Item
	for {
		it, err := er.Next()
		if errors.Is(err, io.EOF) {
			return items, nil
		}
		if err != nil {
			return items, err
		}
		items = append(items, it)
	}
}
