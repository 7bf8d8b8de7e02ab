package domain

import (
	"fmt"
	"testing"
)

// TestWindowAt: the one place that says which rows a cursor and a limit
// ask for, over 10 rows at positions 0..9 (the cursor's own index).
func TestWindowAt(t *testing.T) {
	pos := func(i int) []byte { return []byte{byte(i)} }
	first := func(c []byte, at bool) int {
		if at {
			return int(c[0])
		}
		return int(c[0]) + 1
	}
	for _, tc := range []struct {
		q        PageQuery
		from, to int
	}{
		{PageQuery{Limit: 3}, 0, 3},
		{PageQuery{Limit: 30}, 0, 10},
		{PageQuery{Limit: 3, After: pos(4)}, 5, 8},
		{PageQuery{Limit: 3, After: pos(8)}, 9, 10},
		{PageQuery{Limit: 3, After: pos(9)}, 10, 10},
		{PageQuery{Limit: 3, From: pos(4)}, 4, 7},
		{PageQuery{Limit: 3, Before: pos(4)}, 1, 4},
		{PageQuery{Limit: 3, Before: pos(1)}, 0, 1},
		{PageQuery{Limit: 3, Last: true}, 7, 10},
		{PageQuery{Limit: 30, Last: true}, 0, 10},
	} {
		t.Run(fmt.Sprintf("%+v", tc.q), func(t *testing.T) {
			from, to := WindowAt(10, &tc.q, first)
			if from != tc.from || to != tc.to {
				t.Errorf("WindowAt = %d..%d, want %d..%d", from, to, tc.from, tc.to)
			}
			// Window over sorted positions agrees.
			from, to = Window(10, pos, &tc.q)
			if from != tc.from || to != tc.to {
				t.Errorf("Window = %d..%d, want %d..%d", from, to, tc.from, tc.to)
			}
		})
	}
}
