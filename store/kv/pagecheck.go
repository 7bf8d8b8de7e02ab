package kv

import (
	"encoding/binary"
	"fmt"
	"hash/fnv"
	"io"
	"math/bits"
	"os"
)

// This file reads a cache file's pages with ordinary reads, never through
// bbolt's memory map, so that nothing in a damaged file can crash or stall
// paydesk. bbolt maps the file and trusts what it finds: a meta page that
// claims more pages than the file has (a file cut short) makes the first
// read past its end a SIGBUS, which no recover catches; a branch that points
// back at its parent sends bbolt's recursive cursor (and its own Tx.Check)
// down until the stack limit kills the process; a freelist whose count was
// flipped makes bbolt allocate gigabytes. So Open checks the meta pages and
// the freelist here before bbolt maps the file, and the full check
// (CheckFile, and Open after a close that was not clean) walks every page
// here first — iteratively, each page at most once, every page id held
// against the high-water mark before it is followed — and lets bbolt's own
// Tx.Check (key order, leaked pages) run only on a tree known to be sound.
//
// The layout is bbolt 1.x's (go.etcd.io/bbolt/internal/common), written in
// the machine's byte order; paydesk runs on little-endian machines.

const (
	pageHeaderSize   = 16 // id u64, flags u16, count u16, overflow u32
	pageElemSize     = 16 // branch: pos, ksize u32, pgid u64; leaf: flags, pos, ksize, vsize u32
	metaSize         = 56 // up to the checksum
	boltMagic        = 0xED0CDAED
	boltVersion      = 2
	pgidNoFreelist   = ^uint64(0)
	flagBranch       = 0x01
	flagLeaf         = 0x02
	flagMeta         = 0x04
	flagFreelist     = 0x10
	leafFlagBucket   = 0x01
	inBucketSize     = 16 // root pgid u64, sequence u64
	maxProblemsShown = 20
)

var le = binary.LittleEndian

// boltMeta is a meta page as read from the file.
type boltMeta struct {
	page     int // 0 or 1
	pageSize uint32
	root     uint64
	freelist uint64
	pgid     uint64 // the high-water mark: pages 0 … pgid-1 are in use
	txid     uint64
	err      string // why bbolt would not use it ("" when it would)
}

// readMeta decodes the meta page at off; err says why bbolt would refuse
// it (magic, version, checksum).
func readMeta(f io.ReaderAt, off int64, n int) boltMeta {
	m := boltMeta{page: n}
	var buf [pageHeaderSize + metaSize + 8]byte
	if _, err := f.ReadAt(buf[:], off); err != nil {
		m.err = "cannot be read: the file ends first"
		return m
	}
	b := buf[pageHeaderSize:]
	h := fnv.New64a()
	_, _ = h.Write(b[:metaSize])
	switch {
	case le.Uint32(b[0:]) != boltMagic:
		m.err = "not a meta page (magic)"
	case le.Uint32(b[4:]) != boltVersion:
		m.err = fmt.Sprintf("version %d, not %d", le.Uint32(b[4:]), boltVersion)
	case le.Uint64(b[metaSize:]) != h.Sum64():
		m.err = "checksum does not match"
	}
	m.pageSize = le.Uint32(b[8:])
	m.root = le.Uint64(b[16:])
	m.freelist = le.Uint64(b[32:])
	m.pgid = le.Uint64(b[40:])
	m.txid = le.Uint64(b[48:])
	return m
}

// bounds says what is wrong with a meta page bbolt would use, measured
// against the file: a page size bbolt cannot have written, a high-water
// mark past the end of the file (a file cut short), a root or freelist
// page at or past the high-water mark.
func (m boltMeta) bounds(size int64) string {
	ps := uint64(m.pageSize)
	switch {
	case ps < 512 || ps > 1<<20 || bits.OnesCount64(ps) != 1:
		return fmt.Sprintf("page size %d is not one bbolt writes", ps)
	case m.pgid < 3 || m.pgid > uint64(size)/ps:
		return fmt.Sprintf("it claims %d pages of %d bytes (%d bytes) but the file has %d bytes: the file was cut short",
			m.pgid, ps, m.pgid*ps, size)
	case m.root < 2 || m.root >= m.pgid:
		return fmt.Sprintf("its root page %d is outside pages 2–%d", m.root, m.pgid-1)
	case m.freelist != pgidNoFreelist && (m.freelist < 2 || m.freelist >= m.pgid):
		return fmt.Sprintf("its freelist page %d is outside pages 2–%d", m.freelist, m.pgid-1)
	}
	return ""
}

// pageFile is an open cache file read page by page.
type pageFile struct {
	f    io.ReaderAt
	size int64
	ps   int64
	meta boltMeta // the meta page bbolt uses
}

// openPages reads the meta pages as bbolt would choose between them (the
// newer of the valid ones) and refuses a file whose meta pages do not fit
// it. Both are held against the file: a page with a valid checksum that
// claims pages the file does not have means the file lost its end, even
// when it is the older one.
func openPages(f io.ReaderAt, size int64) (*pageFile, error) {
	if size < 2*1024 {
		return nil, fmt.Errorf("the file has %d bytes, fewer than two pages", size)
	}
	m0 := readMeta(f, 0, 0)
	ps := int64(m0.pageSize)
	if m0.err != "" {
		// bbolt looks for the second meta page at each page size it may
		// have; so does this.
		for ps = 1024; ps <= 1<<20 && ps < size; ps <<= 1 {
			if m := readMeta(f, ps, 1); m.err == "" && int64(m.pageSize) == ps {
				break
			}
		}
	}
	if ps < 512 || ps > 1<<20 || bits.OnesCount64(uint64(ps)) != 1 || 2*ps > size {
		return nil, fmt.Errorf("neither meta page can be read (page 0: %s)", orOK(m0.err))
	}
	m1 := readMeta(f, ps, 1)
	var use *boltMeta
	for _, m := range []*boltMeta{&m0, &m1} {
		if m.err != "" {
			continue
		}
		if int64(m.pageSize) != ps {
			return nil, fmt.Errorf("meta page %d: page size %d, not the file's %d", m.page, m.pageSize, ps)
		}
		if why := m.bounds(size); why != "" {
			return nil, fmt.Errorf("meta page %d: %s", m.page, why)
		}
		if use == nil || m.txid > use.txid {
			use = m
		}
	}
	if use == nil {
		return nil, fmt.Errorf("neither meta page is valid (page 0: %s; page 1: %s)", m0.err, m1.err)
	}
	return &pageFile{f: f, size: size, ps: ps, meta: *use}, nil
}

func orOK(s string) string {
	if s == "" {
		return "valid"
	}
	return s
}

// readPage reads page id whole (with its overflow pages), refusing one
// whose header or extent does not fit the high-water mark.
func (p *pageFile) readPage(id uint64) ([]byte, error) {
	if id < 2 || id >= p.meta.pgid {
		return nil, fmt.Errorf("page %d is outside pages 2–%d", id, p.meta.pgid-1)
	}
	var hdr [pageHeaderSize]byte
	if _, err := p.f.ReadAt(hdr[:], int64(id)*p.ps); err != nil {
		return nil, fmt.Errorf("page %d: %w", id, err)
	}
	if got := le.Uint64(hdr[:]); got != id {
		return nil, fmt.Errorf("page %d says it is page %d", id, got)
	}
	over := uint64(le.Uint32(hdr[12:]))
	if over >= p.meta.pgid-id {
		return nil, fmt.Errorf("page %d: %d overflow pages run past the high-water mark %d", id, over, p.meta.pgid)
	}
	buf := make([]byte, (over+1)*uint64(p.ps))
	if _, err := p.f.ReadAt(buf, int64(id)*p.ps); err != nil {
		return nil, fmt.Errorf("page %d: %w", id, err)
	}
	return buf, nil
}

// freelist reads the ids of the free pages, each checked against the
// high-water mark.
func (p *pageFile) freelist() ([]uint64, error) {
	if p.meta.freelist == pgidNoFreelist {
		return nil, nil
	}
	buf, err := p.readPage(p.meta.freelist)
	if err != nil {
		return nil, fmt.Errorf("freelist: %w", err)
	}
	if flags := le.Uint16(buf[8:]); flags != flagFreelist {
		return nil, fmt.Errorf("freelist page %d has type %#x, not a freelist", p.meta.freelist, flags)
	}
	start, count := uint64(pageHeaderSize), uint64(le.Uint16(buf[10:]))
	if count == 0xFFFF {
		count, start = le.Uint64(buf[pageHeaderSize:]), pageHeaderSize+8
	}
	if count > (uint64(len(buf))-start)/8 {
		return nil, fmt.Errorf("freelist page %d claims %d free pages, more than it holds", p.meta.freelist, count)
	}
	ids := make([]uint64, count)
	// A bit a page (the high-water mark is bounded by the file's size,
	// openPages), not a map: on the file of a million reservations the
	// freelist lists 43,000 pages, and a map of them took 5–10 ms of
	// every open, twice (preflight, the branch walk).
	seen := make([]uint64, (p.meta.pgid+63)/64)
	for i := range ids {
		ids[i] = le.Uint64(buf[start+uint64(i)*8:])
		if ids[i] < 2 || ids[i] >= p.meta.pgid {
			return nil, fmt.Errorf("freelist page %d lists page %d, outside pages 2–%d", p.meta.freelist, ids[i], p.meta.pgid-1)
		}
		if pageBitSet(seen, ids[i]) {
			return nil, fmt.Errorf("freelist page %d lists page %d twice", p.meta.freelist, ids[i])
		}
		setPageBit(seen, ids[i])
	}
	return ids, nil
}

// preflight checks what bbolt reads when it opens a file — the meta pages
// and the freelist — against the file's size, before bbolt maps it, and
// reads the clean-close marker (damage.go) the same way: clean is false
// when the last close was not clean, the marker is missing (a file from
// before it) or cannot be read.
func preflight(path string) (clean bool, err error) {
	f, err := os.Open(path)
	if err != nil {
		return true, nil // missing: created by bbolt; else bbolt's open reports it
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil || !fi.Mode().IsRegular() {
		return true, nil
	}
	pf, err := openPages(f, fi.Size())
	if err == nil {
		_, err = pf.freelist()
	}
	if err != nil {
		return false, &DamagedError{Path: path, Detail: err.Error()}
	}
	v, hasMeta, err := pf.marker()
	return err == nil && (!hasMeta || string(v) == string(closedValue)), nil
}

// walkPages checks every page reachable from the root bucket and the
// freelist: ids within the high-water mark, the page types, elements
// within their pages, each page referenced once, the free pages not in
// use, every page in use or free. It reads each page at most once and
// keeps its own stack, so a cycle or a page id pointing anywhere ends in a
// finding, not a hang. It returns the findings (at most
// maxProblemsShown, then a count of the rest).
func walkPages(path string) ([]string, error) {
	f, size, err := openChecked(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	pf, err := openPages(f, size)
	if err != nil {
		return []string{err.Error()}, nil
	}
	var w walker
	w.init(pf)
	w.walk()
	return w.findings(), nil
}

type walker struct {
	pf    *pageFile
	state []byte // per page: 0 unseen, 1 in use, 2 free
	stack []uint64
	findingList
}

func (w *walker) init(pf *pageFile) {
	w.pf = pf
	w.state = make([]byte, pf.meta.pgid)
	w.state[0], w.state[1] = 1, 1
}

// openChecked opens the file a check reads, with its size.
func openChecked(path string) (*os.File, int64, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, 0, fmt.Errorf("check %s: %w", path, err)
	}
	fi, err := f.Stat()
	if err != nil {
		_ = f.Close()
		return nil, 0, fmt.Errorf("check %s: %w", path, err)
	}
	return f, fi.Size(), nil
}

// findingList keeps what a check of a file found: the first
// maxProblemsShown in words, then a count of the rest.
type findingList struct {
	problems []string
	more     int
}

func (l *findingList) problem(format string, args ...any) {
	if len(l.problems) < maxProblemsShown {
		l.problems = append(l.problems, fmt.Sprintf(format, args...))
	} else {
		l.more++
	}
}

func (l *findingList) findings() []string {
	if l.more > 0 {
		return append(l.problems, fmt.Sprintf("… and %d more", l.more))
	}
	return l.problems
}

func (w *walker) walk() {
	hwm := w.pf.meta.pgid
	if ids, err := w.pf.freelist(); err != nil {
		w.problem("%v", err)
	} else {
		for _, id := range ids {
			if w.state[id] == 2 {
				w.problem("page %d is freed twice", id)
			}
			w.state[id] = 2
		}
		if fl := w.pf.meta.freelist; fl != pgidNoFreelist {
			if buf, err := w.pf.readPage(fl); err == nil {
				w.use(fl, uint64(len(buf))/uint64(w.pf.ps), "the freelist")
			}
		}
	}
	w.follow(w.pf.meta.root, "the root bucket")
	for len(w.stack) > 0 {
		id := w.stack[len(w.stack)-1]
		w.stack = w.stack[:len(w.stack)-1]
		buf, err := w.pf.readPage(id)
		if err != nil {
			w.problem("%v", err)
			continue
		}
		w.page(id, buf)
	}
	if len(w.problems) > 0 {
		return // pages behind a broken one are unreachable: not news
	}
	for id := uint64(2); id < hwm; id++ {
		if w.state[id] == 0 {
			w.problem("page %d is neither in use nor free", id)
		}
	}
}

// follow queues page id, named by what points at it, unless it is out of
// range or already reached.
func (w *walker) follow(id uint64, from string) {
	if id < 2 || id >= w.pf.meta.pgid {
		w.problem("%s points at page %d, outside pages 2–%d", from, id, w.pf.meta.pgid-1)
		return
	}
	switch w.state[id] {
	case 1:
		w.problem("%s points at page %d, already reached (a loop, or a page used twice)", from, id)
		return
	case 2:
		w.problem("%s points at page %d, which is free", from, id)
		return
	}
	w.state[id] = 1 // its overflow pages are marked when it is read
	w.stack = append(w.stack, id)
}

// use marks n pages from id in use.
func (w *walker) use(id, n uint64, what string) {
	for i := range n {
		if s := w.state[id+i]; s != 0 && i > 0 {
			w.problem("%s: page %d is also %s", what, id+i, map[byte]string{1: "in use elsewhere", 2: "free"}[s])
		}
		w.state[id+i] = 1
	}
}

// page checks one branch or leaf page (buf is the page and its overflow)
// and queues the pages it points at.
func (w *walker) page(id uint64, buf []byte) {
	w.use(id, uint64(len(buf))/uint64(w.pf.ps), fmt.Sprintf("page %d", id))
	w.elements(fmt.Sprintf("page %d", id), buf, true)
}

// elements checks the elements of a branch or leaf page held in buf (a
// page of the file, or an inline bucket's page inside a value).
func (w *walker) elements(name string, buf []byte, canBranch bool) {
	flags, count := le.Uint16(buf[8:]), int(le.Uint16(buf[10:]))
	isBranch, isLeaf := flags == flagBranch, flags == flagLeaf // bbolt's test: exactly
	if isBranch == isLeaf || (isBranch && !canBranch) {
		w.problem("%s has type %#x, not a branch or leaf page", name, flags)
		return
	}
	if pageHeaderSize+count*pageElemSize > len(buf) {
		w.problem("%s claims %d elements, more than it holds", name, count)
		return
	}
	if isBranch && count == 0 {
		w.problem("%s is a branch with no elements", name)
		return
	}
	for i := range count {
		at := pageHeaderSize + i*pageElemSize
		e := buf[at : at+pageElemSize]
		if isBranch {
			pos, ksize := uint64(le.Uint32(e[0:])), uint64(le.Uint32(e[4:]))
			if uint64(at)+pos+ksize > uint64(len(buf)) {
				w.problem("%s element %d: its key runs past the page", name, i)
				continue
			}
			w.follow(le.Uint64(e[8:]), fmt.Sprintf("%s element %d", name, i))
			continue
		}
		lflags, pos, ksize, vsize := le.Uint32(e[0:]), uint64(le.Uint32(e[4:])), uint64(le.Uint32(e[8:])), uint64(le.Uint32(e[12:]))
		end := uint64(at) + pos + ksize + vsize
		if end > uint64(len(buf)) {
			w.problem("%s element %d: its key and value run past the page", name, i)
			continue
		}
		if lflags&leafFlagBucket == 0 {
			continue
		}
		v := buf[uint64(at)+pos+ksize : end]
		if len(v) < inBucketSize {
			w.problem("%s element %d: a bucket of %d bytes", name, i, len(v))
			continue
		}
		if root := le.Uint64(v); root != 0 {
			w.follow(root, fmt.Sprintf("%s element %d (a bucket)", name, i))
			continue
		}
		inline := v[inBucketSize:]
		if len(inline) < pageHeaderSize {
			w.problem("%s element %d: an inline bucket of %d bytes", name, i, len(inline))
			continue
		}
		// An inline bucket's page lives in the value: leaf only, and its
		// own buckets (none, by bbolt's rule for inlining) would be
		// followed like any other.
		w.elements(fmt.Sprintf("%s element %d (an inline bucket)", name, i), inline, false)
	}
}

// maxTreeDepth bounds a lookup's descent: bbolt's trees are a few levels
// deep; a damaged branch pointing back up would otherwise loop.
const maxTreeDepth = 32

// lookup finds key in the bucket whose tree starts at page root (or, for
// an inline bucket, in inline), reading pages with ordinary reads and each
// id checked: a damaged tree is an error, never a fault or a loop.
func (p *pageFile) lookup(root uint64, inline []byte, key []byte) (val []byte, bucket bool, err error) {
	buf := inline
	for depth := 0; ; depth++ {
		if buf == nil {
			if depth > maxTreeDepth {
				return nil, false, fmt.Errorf("the tree from page %d is deeper than %d levels", root, maxTreeDepth)
			}
			if buf, err = p.readPage(root); err != nil {
				return nil, false, err
			}
		}
		flags, count := le.Uint16(buf[8:]), int(le.Uint16(buf[10:]))
		if pageHeaderSize+count*pageElemSize > len(buf) {
			return nil, false, fmt.Errorf("page %d claims %d elements, more than it holds", root, count)
		}
		elem := func(i int) (k, v []byte, lflags uint32, ok bool) {
			at := pageHeaderSize + i*pageElemSize
			e := buf[at:]
			if flags == flagBranch {
				pos, ks := uint64(le.Uint32(e[0:])), uint64(le.Uint32(e[4:]))
				if uint64(at)+pos+ks > uint64(len(buf)) {
					return nil, nil, 0, false
				}
				return buf[uint64(at)+pos : uint64(at)+pos+ks], e[8:16], 0, true
			}
			lf, pos, ks, vs := le.Uint32(e[0:]), uint64(le.Uint32(e[4:])), uint64(le.Uint32(e[8:])), uint64(le.Uint32(e[12:]))
			if uint64(at)+pos+ks+vs > uint64(len(buf)) {
				return nil, nil, 0, false
			}
			s := uint64(at) + pos
			return buf[s : s+ks], buf[s+ks : s+ks+vs], lf, true
		}
		switch {
		case flags == flagBranch && inline == nil:
			child := uint64(0)
			for i := range count {
				k, v, _, ok := elem(i)
				if !ok {
					return nil, false, fmt.Errorf("page %d element %d runs past the page", root, i)
				}
				if i > 0 && string(k) > string(key) {
					break
				}
				child = le.Uint64(v)
			}
			if count == 0 {
				return nil, false, fmt.Errorf("page %d is a branch with no elements", root)
			}
			root, buf = child, nil
		case flags == flagLeaf:
			for i := range count {
				k, v, lf, ok := elem(i)
				if !ok {
					return nil, false, fmt.Errorf("page %d element %d runs past the page", root, i)
				}
				if string(k) == string(key) {
					return v, lf&leafFlagBucket != 0, nil
				}
			}
			return nil, false, nil
		default:
			return nil, false, fmt.Errorf("page %d has type %#x, not a branch or leaf page", root, flags)
		}
	}
}

// marker reads the clean-close marker (meta bucket, key "open") from the
// file; ok is false when the file has no meta bucket yet (a new cache).
func (p *pageFile) marker() (v []byte, ok bool, err error) {
	b, isBucket, err := p.lookup(p.meta.root, nil, bMeta)
	if err != nil || b == nil || !isBucket {
		return nil, false, err
	}
	if len(b) < inBucketSize {
		return nil, false, fmt.Errorf("the meta bucket's header has %d bytes", len(b))
	}
	var inline []byte
	root := le.Uint64(b)
	if root == 0 {
		if inline = b[inBucketSize:]; len(inline) < pageHeaderSize {
			return nil, false, fmt.Errorf("the meta bucket's inline page has %d bytes", len(inline))
		}
	}
	v, _, err = p.lookup(root, inline, kOpenMarker)
	return v, true, err
}
