package kv

import (
	"errors"
	"fmt"
)

// PageMap is where a bbolt file image's pages are, as its newest meta
// page sees them: for the tests that damage a chosen kind of page, and
// for a look at a file by hand.
type PageMap struct {
	// Kinds lists the pages of each type: "meta", "freelist", "branch",
	// "leaf", and the branch and leaf pages of each bucket
	// ("branch/pushes").
	Kinds map[string][]int
	// End is the file's high water mark, in pages.
	End int
}

// MapPages walks the tree of the file image b from its root: the pages in
// use, not stale free ones.
func MapPages(b []byte) (PageMap, error) {
	pf, err := openPages(bytesReader(b), int64(len(b)))
	if err != nil {
		return PageMap{}, err
	}
	out := map[string][]int{"meta": {0, 1}}
	if pf.meta.freelist != pgidNoFreelist {
		out["freelist"] = []int{int(pf.meta.freelist)}
	}
	type at struct {
		id     uint64
		bucket string
	}
	stack := []at{{pf.meta.root, ""}}
	for len(stack) > 0 {
		p := stack[len(stack)-1]
		stack = stack[:len(stack)-1]
		buf, err := pf.readPage(p.id)
		if err != nil {
			return PageMap{}, err
		}
		flags, count := le.Uint16(buf[8:]), int(le.Uint16(buf[10:]))
		for i := range count {
			e := buf[pageHeaderSize+i*pageElemSize:]
			if len(e) < pageElemSize {
				return PageMap{}, fmt.Errorf("page %d: element %d past the page", p.id, i)
			}
			if flags&flagBranch != 0 {
				stack = append(stack, at{le.Uint64(e[8:]), p.bucket})
				continue
			}
			if le.Uint32(e[0:])&leafFlagBucket != 0 {
				k := pageHeaderSize + i*pageElemSize + int(le.Uint32(e[4:]))
				name := string(buf[k : k+int(le.Uint32(e[8:]))])
				if root := le.Uint64(buf[k+len(name):]); root != 0 {
					stack = append(stack, at{root, name})
				}
			}
		}
		typ := "leaf"
		if flags&flagBranch != 0 {
			typ = "branch"
		}
		out[typ] = append(out[typ], int(p.id))
		out[typ+"/"+p.bucket] = append(out[typ+"/"+p.bucket], int(p.id))
	}
	return PageMap{Kinds: out, End: int(pf.meta.pgid)}, nil
}

// CleanClosed reads the clean-close marker of the file at path without
// opening it: true when the last paydesk that had it closed it cleanly.
func CleanClosed(path string) (bool, error) { return preflight(path) }

type bytesReader []byte

func (b bytesReader) ReadAt(p []byte, off int64) (int, error) {
	if off < 0 || off >= int64(len(b)) {
		return 0, errors.New("EOF")
	}
	n := copy(p, b[off:])
	if n < len(p) {
		return n, errors.New("EOF")
	}
	return n, nil
}
