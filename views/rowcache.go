package views

import "strings"

// rowCache keeps the rows a table drew in its last frame, drawn, by their
// cells: a frame whose rows did not change (a reload whose changes fell
// off the screen, the count above the table moving on) takes them as they
// were instead of fitting and painting every cell again — the most of a
// table's cost. Only the rows of the last frame are kept, so it holds a
// screenful; a new layout (size, columns) or theme forgets them.
type rowCache struct {
	last, next map[string]string
	dark       bool
	key        strings.Builder
	// fresh counts the rows drawn afresh (the tests count them).
	fresh int
}

// begin starts a frame drawn in a theme dark or not.
func (c *rowCache) begin(dark bool) {
	if dark != c.dark {
		c.forget()
		c.dark = dark
	}
	if c.next == nil {
		c.next = map[string]string{}
	}
}

// end makes the frame's rows the ones kept.
func (c *rowCache) end() {
	c.last, c.next = c.next, c.last
	clear(c.next)
}

// forget drops the rows kept.
func (c *rowCache) forget() { clear(c.last) }

// keyOf is what a row's drawing depends on beside the layout and the
// theme: the shown cells' texts and paints, and the cursor on it. The
// string is the caller's to keep (the builder starts anew each time).
func (c *rowCache) keyOf(cells []Cell, shown []int, selected bool) string {
	k := &c.key
	k.Reset()
	if selected {
		k.WriteByte(1)
	} else {
		k.WriteByte(0)
	}
	for _, i := range shown {
		k.WriteString(cells[i].Text)
		k.WriteByte(0)
		k.WriteString(cells[i].Paint)
		k.WriteByte(0)
	}
	return k.String()
}

// get is the row drawn for key in the last frame, kept for this one.
func (c *rowCache) get(key string) (string, bool) {
	s, ok := c.last[key]
	if ok {
		c.next[key] = s
	}
	return s, ok
}

// put keeps a row drawn afresh.
func (c *rowCache) put(key, row string) {
	c.next[key] = row
	c.fresh++
}
