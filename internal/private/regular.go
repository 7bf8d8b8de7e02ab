package private

import (
	"bufio"
	"bytes"
	"encoding/csv"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"unicode/utf8"
)

// NotRegularError is a path that names something other than a regular
// file: a named pipe, a device, a directory, a socket. Reading one as a
// config or a key could block forever (a FIFO no one writes) or never end
// (/dev/zero).
type NotRegularError struct{ Kind string }

func (e *NotRegularError) Error() string {
	return "is " + e.Kind + ", not a regular file"
}

// TooLargeError is a file over the size its reader allows.
type TooLargeError struct{ Size, Max int64 }

func (e *TooLargeError) Error() string {
	return fmt.Sprintf("is larger than %d KiB (%d bytes)", e.Max>>10, e.Size)
}

// kind names what a mode that is not a regular file is.
func kind(m fs.FileMode) string {
	switch {
	case m.IsDir():
		return "a directory"
	case m&fs.ModeNamedPipe != 0:
		return "a named pipe (FIFO)"
	case m&fs.ModeSocket != 0:
		return "a socket"
	case m&fs.ModeCharDevice != 0:
		return "a character device"
	case m&fs.ModeDevice != 0:
		return "a block device"
	case m&fs.ModeSymlink != 0:
		return "a symbolic link"
	}
	return "not a regular file (" + m.Type().String() + ")"
}

// OpenRegular opens path for reading and refuses at once anything but a
// regular file. The open does not block: a FIFO opened for reading waits
// for a writer, and would hang the command (deaf to SIGTERM) before any
// check could run; O_NONBLOCK makes that open return, and the check on the
// opened file (not the name, which could be swapped in between) refuses it.
// The *fs.PathError of a failed open carries path; the other errors do not.
func OpenRegular(path string) (*os.File, fs.FileInfo, error) {
	f, err := os.OpenFile(path, os.O_RDONLY|openNoBlock, 0)
	if err != nil {
		return nil, nil, err
	}
	fi, err := f.Stat()
	if err != nil {
		_ = f.Close()
		return nil, nil, bare(err)
	}
	if !fi.Mode().IsRegular() {
		_ = f.Close()
		return nil, nil, &NotRegularError{Kind: kind(fi.Mode())}
	}
	return f, fi, nil
}

// ReadRegular reads a regular file of at most max bytes whole (a config,
// a saved push): anything else is refused before a byte is read, and a
// file that grows past max while read is refused too.
func ReadRegular(path string, max int64) ([]byte, error) {
	f, fi, err := OpenRegular(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	if fi.Size() > max {
		return nil, &TooLargeError{Size: fi.Size(), Max: max}
	}
	b, err := io.ReadAll(io.LimitReader(f, max+1))
	if err != nil {
		return nil, bare(err)
	}
	if int64(len(b)) > max {
		return nil, &TooLargeError{Size: int64(len(b)), Max: max}
	}
	return b, nil
}

// MaxSecret bounds a secret key: the gateway's keys are tens of characters.
const MaxSecret = 1024

// ErrBadSecret is wrapped by CheckSecret's errors.
var ErrBadSecret = errors.New("not a secret key")

// CheckSecret refuses what cannot be a secret key: empty, longer than
// MaxSecret, not UTF-8, or holding a control character (a file of NUL
// bytes, a key pasted with a terminal escape). The error says what is
// wrong and where, never the secret or any part of it.
func CheckSecret(s string) error {
	switch {
	case s == "":
		return fmt.Errorf("%w: empty", ErrBadSecret)
	case len(s) > MaxSecret:
		return fmt.Errorf("%w: %d bytes, more than %d", ErrBadSecret, len(s), MaxSecret)
	case !utf8.ValidString(s):
		return fmt.Errorf("%w: not valid UTF-8", ErrBadSecret)
	}
	for i, r := range s {
		if r < 0x20 || r == 0x7f || r >= 0x80 && r <= 0x9f {
			return fmt.Errorf("%w: a control character (U+%04X) at byte %d", ErrBadSecret, r, i+1)
		}
	}
	return nil
}

// OpenStream opens a file to read as a stream (an import, a manifest):
// a regular file, or a pipe or terminal (/dev/stdin, <(export)). The open
// does not block: a named pipe no one writes to reads as empty rather than
// hanging the command. A directory, a socket or a block device is refused.
// The *fs.PathError of a failed open carries path; the other errors do not.
func OpenStream(path string) (*os.File, error) {
	f, err := os.OpenFile(path, os.O_RDONLY|openNoBlock, 0)
	if err != nil {
		return nil, err
	}
	fi, err := f.Stat()
	if err != nil {
		_ = f.Close()
		return nil, bare(err)
	}
	if m := fi.Mode(); !m.IsRegular() && m&(fs.ModeNamedPipe|fs.ModeCharDevice) == 0 {
		_ = f.Close()
		return nil, &NotRegularError{Kind: kind(m)}
	}
	return f, nil
}

// ErrRowTooLong is a RowGuard's error: the current row has taken more than
// its limit.
var ErrRowTooLong = errors.New("row too long")

// RowGuard bounds the bytes one row of a file may take: encoding/csv reads a
// whole record (all of a quoted cell) into memory before it returns, so the
// bound is on what it is given. Mark sets the offset where the current row
// starts; a reader's read-ahead is the slack.
type RowGuard struct {
	R     io.Reader
	Limit int64
	read  int64
	start int64
}

// Mark notes that the current row starts at off.
func (g *RowGuard) Mark(off int64) { g.start = off }

func (g *RowGuard) Read(p []byte) (int, error) {
	if g.read-g.start > g.Limit+128<<10 {
		return 0, ErrRowTooLong
	}
	n, err := g.R.Read(p)
	g.read += int64(n)
	return n, err
}

// NewCSVReader reads a CSV file of untrusted rows: each row bounded to
// rowLimit bytes (a longer one is ErrRowTooLong, never read into memory
// whole), records reused, any number of fields a row. Spreadsheets in the
// shops' countries (NL, DE, AT) save with ';' where the decimal separator
// is a comma: the header row (the first line) tells which. The guard is
// for Mark, after each record read.
func NewCSVReader(r io.Reader, rowLimit int64) (*csv.Reader, *RowGuard) {
	g := &RowGuard{R: r, Limit: rowLimit}
	br := bufio.NewReaderSize(g, 64<<10)
	cr := csv.NewReader(br)
	if head, _ := br.Peek(4096); sniffSemicolon(head) {
		cr.Comma = ';'
	}
	cr.FieldsPerRecord = -1
	cr.ReuseRecord = true
	return cr, g
}

// sniffSemicolon reports whether the header row (the first line) separates
// its columns with ';' rather than ','.
func sniffSemicolon(head []byte) bool {
	head, _, _ = bytes.Cut(head, []byte("\n"))
	return bytes.Count(head, []byte{';'}) > bytes.Count(head, []byte{','})
}
