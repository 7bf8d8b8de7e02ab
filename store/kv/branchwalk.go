package kv

import (
	"cmp"
	"fmt"
	"io"
	"slices"
	"sync"
	"sync/atomic"
)

// This file checks the branch pages of a large file closed cleanly, which
// Open does not check page by page (reading 3 GB takes 16 s). bbolt trusts
// a branch's children: a child that is the branch itself or an ancestor
// sends its recursive search down until the stack limit ends the process,
// and a branch whose count runs past its page makes its cursor read
// children from the bytes that follow (zeros: page 0, a meta page read as
// a branch, then a "child" 1 MiB further on, a descent that grows until
// memory runs out). No recover catches either, so every branch is held
// against the file here, with ordinary reads, before bbolt reads a page
// of the tree.
//
// Only branches are read, never the leaves under them, which are ~99 % of
// a file: bbolt's trees are balanced (a split or a merge changes every
// path's length alike), so the leftmost descent of a bucket's tree says at
// which depth its leaves are, and the children of the branches just above
// that depth are leaves whose ids are held against the high-water mark,
// the free pages and every other page reached, without being read. The
// root bucket's leaves are read: they hold the other buckets' headers.

// maxBranchDepth bounds a tree's height: bbolt's trees are a few levels
// deep even at a million records; a longer path is damage (a descent
// through pages that point onwards).
const maxBranchDepth = 64

// branchWalk walks the branch pages of every bucket's tree.
type branchWalk struct {
	pf   *pageFile
	hwm  uint64
	seen []uint64 // a bit per page: reached, or the metas and the freelist
	free []uint64 // a bit per page: on the freelist
	findingList
	kids []uint64 // branchPage's children, reused
	// pages and bytes read, for the cost figure (docs/store.md)
	pagesRead, bytesRead int64
}

// walkBranches checks the file at path as branchWalk does and returns the
// findings (at most maxProblemsShown, then a count of the rest); the error
// is for a file it could not read at all.
func walkBranches(path string) ([]string, error) {
	f, size, err := openChecked(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	w, problems := newBranchWalk(f, size)
	if problems != nil {
		return problems, nil
	}
	w.walk()
	return w.findings(), nil
}

// newBranchWalk reads the meta pages and the freelist; a file whose meta
// pages or freelist do not hold is one finding (preflight refuses such a
// file before this runs).
func newBranchWalk(f io.ReaderAt, size int64) (*branchWalk, []string) {
	pf, err := openPages(f, size)
	if err != nil {
		return nil, []string{err.Error()}
	}
	ids, err := pf.freelist()
	if err != nil {
		return nil, []string{err.Error()}
	}
	hwm := pf.meta.pgid
	w := &branchWalk{pf: pf, hwm: hwm, seen: make([]uint64, (hwm+63)/64), free: make([]uint64, (hwm+63)/64)}
	for _, id := range ids {
		setPageBit(w.free, id)
	}
	setPageBit(w.seen, 0)
	setPageBit(w.seen, 1)
	if fl := pf.meta.freelist; fl != pgidNoFreelist {
		var hdr [pageHeaderSize]byte
		if _, err := f.ReadAt(hdr[:], int64(fl)*pf.ps); err == nil {
			for i := uint64(0); i <= uint64(le.Uint32(hdr[12:])) && fl+i < hwm; i++ {
				setPageBit(w.seen, fl+i)
			}
		}
	}
	return w, nil
}

func setPageBit(b []uint64, id uint64)      { b[id/64] |= 1 << (id % 64) }
func pageBitSet(b []uint64, id uint64) bool { return b[id/64]&(1<<(id%64)) != 0 }

// reach takes page id as reached, or says why it cannot be (from names
// what points at it): it must lie within the high-water mark (the file's
// size bounds that mark: openPages), not be free, and not have been reached
// before (two parents: a page used twice, or a loop, which the callers
// tell apart).
func (w *branchWalk) reach(id uint64, from func() string) bool {
	switch {
	case id < 2 || id >= w.hwm:
		w.problem("%s points at page %d, outside pages 2–%d", from(), id, w.hwm-1)
	case pageBitSet(w.free, id):
		w.problem("%s points at page %d, which is free", from(), id)
	case pageBitSet(w.seen, id):
		w.problem("%s points at page %d, already reached from another page (a page used twice)", from(), id)
	default:
		setPageBit(w.seen, id)
		return true
	}
	return false
}

// read reads page id whole and accounts for it.
func (w *branchWalk) read(id uint64) ([]byte, bool) {
	buf, err := w.pf.readPage(id)
	if err != nil {
		w.problem("%v", err)
		return nil, false
	}
	return buf, w.account(id, buf)
}

// account counts page id (buf, read whole) and marks its overflow pages
// reached: none may be free or reached before.
func (w *branchWalk) account(id uint64, buf []byte) bool {
	w.pagesRead++
	w.bytesRead += int64(len(buf))
	for i := uint64(1); i < uint64(len(buf))/uint64(w.pf.ps); i++ {
		if pageBitSet(w.seen, id+i) || pageBitSet(w.free, id+i) {
			w.problem("page %d: its overflow page %d is also free or in use elsewhere", id, id+i)
			return false
		}
		setPageBit(w.seen, id+i)
	}
	return true
}

// branchPage checks a page read as a branch: the type, at least one
// element, the elements and their keys within the page (overflow
// included). It returns the page's children, in w.kids: valid until the
// next call.
func (w *branchWalk) branchPage(id uint64, buf []byte) ([]uint64, bool) {
	flags, count := le.Uint16(buf[8:]), int(le.Uint16(buf[10:]))
	switch {
	case flags != flagBranch:
		w.problem("page %d has type %#x, not a branch page", id, flags)
		return nil, false
	case count == 0:
		w.problem("page %d is a branch with no elements", id)
		return nil, false
	case pageHeaderSize+count*pageElemSize > len(buf):
		w.problem("page %d claims %d elements, more than it holds", id, count)
		return nil, false
	}
	// One slice for every page's children: a slice each came to 6 MB on
	// a million reservations, memory new to the process at each open,
	// where the kernel's first touch of a page is what costs (14 µs a
	// page on the 2-core VM).
	children := slices.Grow(w.kids[:0], count)[:count]
	w.kids = children
	for i := range children {
		at := pageHeaderSize + i*pageElemSize
		e := buf[at : at+pageElemSize]
		if pos, ksize := uint64(le.Uint32(e[0:])), uint64(le.Uint32(e[4:])); uint64(at)+pos+ksize > uint64(len(buf)) {
			w.problem("page %d element %d: its key runs past the page", id, i)
			return nil, false
		}
		children[i] = le.Uint64(e[8:])
	}
	return children, true
}

func (w *branchWalk) walk() {
	if !w.reach(w.pf.meta.root, func() string { return "the meta page" }) {
		return
	}
	// The root bucket's tree is read whole, leaves too: a few pages that
	// name the buckets and where their trees start.
	var roots []bucketRoot
	stack := []uint64{w.pf.meta.root}
	for len(stack) > 0 {
		id := stack[len(stack)-1]
		stack = stack[:len(stack)-1]
		buf, ok := w.read(id)
		if !ok {
			continue
		}
		switch le.Uint16(buf[8:]) {
		case flagLeaf:
			roots = append(roots, w.bucketHeaders(id, buf)...)
			continue
		case flagBranch:
		default:
			w.problem("page %d of the root bucket has type %#x, not a branch or leaf page", id, le.Uint16(buf[8:]))
			continue
		}
		children, ok := w.branchPage(id, buf)
		if !ok {
			continue
		}
		for i, c := range children {
			// the root bucket's tree is a few pages: a loop in it is
			// met as a page reached twice
			if w.reach(c, func() string { return fmt.Sprintf("page %d element %d", id, i) }) {
				stack = append(stack, c)
			}
		}
	}
	w.trees(roots)
}

// bucketRoot is where a bucket's tree starts.
type bucketRoot struct {
	name string
	id   uint64
}

// bucketHeaders reads the bucket headers of a leaf of the root bucket: a
// bucket with its own pages is returned, an inline one (its page inside
// the value) is checked here; what is not a bucket is not bbolt's to read
// as one.
func (w *branchWalk) bucketHeaders(id uint64, buf []byte) []bucketRoot {
	count := int(le.Uint16(buf[10:]))
	if pageHeaderSize+count*pageElemSize > len(buf) {
		w.problem("page %d claims %d elements, more than it holds", id, count)
		return nil
	}
	var roots []bucketRoot
	for i := range count {
		at := pageHeaderSize + i*pageElemSize
		e := buf[at : at+pageElemSize]
		lflags, pos, ksize, vsize := le.Uint32(e[0:]), uint64(le.Uint32(e[4:])), uint64(le.Uint32(e[8:])), uint64(le.Uint32(e[12:]))
		end := uint64(at) + pos + ksize + vsize
		if end > uint64(len(buf)) {
			w.problem("page %d element %d: its key and value run past the page", id, i)
			continue
		}
		if lflags&leafFlagBucket == 0 {
			continue
		}
		name := fmt.Sprintf("bucket %q", buf[uint64(at)+pos:uint64(at)+pos+ksize])
		v := buf[uint64(at)+pos+ksize : end]
		if len(v) < inBucketSize {
			w.problem("%s: a header of %d bytes", name, len(v))
			continue
		}
		if root := le.Uint64(v); root != 0 {
			if w.reach(root, func() string { return name }) {
				roots = append(roots, bucketRoot{name, root})
			}
			continue
		}
		// An inline bucket's page is read as a leaf by bbolt's cursor
		// only when its type says exactly leaf: any other is taken for a
		// branch, with children read from the value's bytes.
		if inline := v[inBucketSize:]; len(inline) < pageHeaderSize {
			w.problem("%s: an inline bucket of %d bytes", name, len(inline))
		} else if flags, n := le.Uint16(inline[8:]), int(le.Uint16(inline[10:])); flags != flagLeaf {
			w.problem("%s: its inline page has type %#x, not a leaf", name, flags)
		} else if pageHeaderSize+n*pageElemSize > len(inline) {
			w.problem("%s: its inline page claims %d elements, more than it holds", name, n)
		}
	}
	return roots
}

// walkReaders is how many pages the walk reads at once: on a file not in
// the page cache each read waits for the disk, and reads side by side keep
// its queue full (one at a time: 0.5 s for the 2,225 branches of 200,000
// reservations).
const walkReaders = 16

// walkBatch bounds the pages held at once (1 MiB of 4 KiB pages).
const walkBatch = 256

// branchAt is a branch page to read: its bucket and its depth from the
// bucket's root.
type branchAt struct {
	bucket int
	id     uint64
	depth  int
}

// trees walks every bucket's tree from its root (each already reached):
// the depth of its leaves from its leftmost descent, then its branches a
// level at a time, all buckets together, each level's pages read side by
// side in the file's order; the leaves' ids are checked without reading
// them. Loops are told from pages used twice by the parents kept for each
// branch.
func (w *branchWalk) trees(roots []bucketRoot) {
	depths, whys := make([]int, len(roots)), make([]string, len(roots))
	w.parallel(len(roots), func(i int) { depths[i], whys[i] = w.leafDepth(roots[i]) })
	parents := map[uint64]uint64{}
	var level []branchAt
	for i, r := range roots {
		switch d := depths[i]; {
		case d > 0:
			level = append(level, branchAt{bucket: i, id: r.id})
		case d < 0:
			w.problem("%s: %s", r.name, whys[i])
		}
	}
	ps := int(w.pf.ps)
	space := make([]byte, walkBatch*ps) // the pages of a batch, without their overflow
	bufs, errs := make([][]byte, walkBatch), make([]error, walkBatch)
	for len(level) > 0 {
		slices.SortFunc(level, func(a, b branchAt) int { return cmp.Compare(a.id, b.id) })
		var next []branchAt
		for batch := range slices.Chunk(level, walkBatch) {
			prefetch(w.pf, batch)
			clear(errs)
			w.parallel(len(batch), func(i int) { bufs[i], errs[i] = w.readBranch(batch[i].id, space[i*ps:(i+1)*ps]) })
			for i, b := range batch {
				if errs[i] != nil {
					w.problem("%s: %v", roots[b.bucket].name, errs[i])
					continue
				}
				next = w.branch(roots[b.bucket], b, bufs[i], depths[b.bucket], parents, next)
			}
		}
		level = next
	}
}

// branch checks branch page b (buf, read) and returns next with its
// children that are branches appended.
func (w *branchWalk) branch(r bucketRoot, b branchAt, buf []byte, leafDepth int, parents map[uint64]uint64, next []branchAt) []branchAt {
	if !w.account(b.id, buf) {
		return next
	}
	if flags := le.Uint16(buf[8:]); flags == flagLeaf && b.depth > 0 {
		w.problem("%s: page %d is a leaf at depth %d, but the tree's leaves are at depth %d (an unbalanced tree)",
			r.name, b.id, b.depth, leafDepth)
		return next
	}
	children, ok := w.branchPage(b.id, buf)
	if !ok {
		return next
	}
	for i, c := range children {
		if !w.reachChild(r, b.id, i, c, parents) {
			continue
		}
		if b.depth+1 < leafDepth {
			parents[c] = b.id
			next = append(next, branchAt{bucket: b.bucket, id: c, depth: b.depth + 1})
		}
	}
	return next
}

// reachChild is reach for element i of branch page from in bucket r: a
// child met before is a loop when it is from itself or one of its
// ancestors (parents), else a page with two parents.
func (w *branchWalk) reachChild(r bucketRoot, from uint64, i int, c uint64, parents map[uint64]uint64) bool {
	if c >= 2 && c < w.hwm && !pageBitSet(w.free, c) && !pageBitSet(w.seen, c) {
		setPageBit(w.seen, c) // the common case, without reach's message
		return true
	}
	if c >= 2 && c < w.hwm && pageBitSet(w.seen, c) {
		for p, n := from, 0; p != 0 && n <= maxBranchDepth; p, n = parents[p], n+1 {
			if p == c {
				w.problem("%s: page %d element %d points back at page %d on its own path (a loop)", r.name, from, i, c)
				return false
			}
		}
	}
	return w.reach(c, func() string { return fmt.Sprintf("%s: page %d element %d", r.name, from, i) })
}

// readBranch reads page id, whole, into into (one page: one read call for
// a page without overflow, which branches rarely have) or, with its
// overflow, a buffer of its own; the header must name the page and its
// overflow end within the high-water mark (as readPage).
func (w *branchWalk) readBranch(id uint64, into []byte) ([]byte, error) {
	if id < 2 || id >= w.hwm {
		return nil, fmt.Errorf("page %d is outside pages 2–%d", id, w.hwm-1)
	}
	if _, err := w.pf.f.ReadAt(into, int64(id)*w.pf.ps); err != nil {
		return nil, fmt.Errorf("page %d: %w", id, err)
	}
	if got := le.Uint64(into); got != id {
		return nil, fmt.Errorf("page %d says it is page %d", id, got)
	}
	if le.Uint32(into[12:]) == 0 {
		return into, nil
	}
	return w.pf.readPage(id)
}

// parallel runs fn(0) … fn(n-1) on up to walkReaders goroutines.
func (w *branchWalk) parallel(n int, fn func(i int)) {
	var next atomic.Int64
	var wg sync.WaitGroup
	for range min(n, walkReaders) {
		wg.Go(func() {
			for i := int(next.Add(1) - 1); i < n; i = int(next.Add(1) - 1) {
				fn(i)
			}
		})
	}
	wg.Wait()
}

// leafDepth finds the depth of a bucket's leaves from its root (0: the
// root is a leaf) by the first child of each branch, reading only their
// headers, beside the other buckets' descents; -1 and why when the descent
// is deeper than maxBranchDepth or meets a page that is neither a branch
// nor a leaf. The branches of the descent are checked again, read whole,
// by the walk.
func (w *branchWalk) leafDepth(r bucketRoot) (int, string) {
	id := r.id
	for depth := 0; depth <= maxBranchDepth; depth++ {
		var hdr [pageHeaderSize + pageElemSize]byte
		if _, err := w.pf.f.ReadAt(hdr[:], int64(id)*w.pf.ps); err != nil {
			return -1, fmt.Sprintf("page %d: %v", id, err)
		}
		switch flags, count := le.Uint16(hdr[8:]), le.Uint16(hdr[10:]); {
		case flags == flagLeaf:
			return depth, ""
		case flags != flagBranch:
			return -1, fmt.Sprintf("page %d has type %#x, not a branch or leaf page", id, flags)
		case count == 0:
			return -1, fmt.Sprintf("page %d is a branch with no elements", id)
		}
		child := le.Uint64(hdr[pageHeaderSize+8:])
		if child < 2 || child >= w.hwm {
			return -1, fmt.Sprintf("page %d element 0 points at page %d, outside pages 2–%d", id, child, w.hwm-1)
		}
		id = child
	}
	return -1, fmt.Sprintf("the tree from page %d is deeper than %d levels (a loop)", r.id, maxBranchDepth)
}
