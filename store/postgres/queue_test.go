package postgres

import (
	"fmt"
	"slices"
	"strings"
	"testing"
)

// TestCoalesce: a run of a batch's push and transaction writes goes out as
// one statement a table, rows in order, in chunks of a power of two; any
// other write keeps its place and ends the run.
func TestCoalesce(t *testing.T) {
	push := func(k string) queuedWrite {
		return queuedWrite{what: "push " + k, sql: pgPushInsert, args: []any{k}}
	}
	tx := func(k string) queuedWrite {
		return queuedWrite{what: "transaction " + k, sql: pgTxUpsert, args: []any{k}}
	}
	other := queuedWrite{what: "counter", sql: "INSERT INTO paydesk_counters", args: []any{"c"}}
	pairs := func(from, n int) []queuedWrite {
		var q []queuedWrite
		for i := range n {
			k := fmt.Sprint(from + i)
			q = append(q, push(k), tx(k))
		}
		return q
	}
	for _, c := range []struct {
		name string
		q    []queuedWrite
		want []string // each statement: its table and rows ("pushes 1 2", "counter c")
	}{
		{"one push and its transaction stay single-row", pairs(1, 1), []string{"push 1", "transaction 1"}},
		{"three pushes: a pair joined, then one", pairs(1, 3), []string{"pushes 1 2", "push 3", "transactions 1 2", "transaction 3"}},
		{"another write ends the run", append(append(pairs(1, 2), other), pairs(3, 2)...),
			[]string{"pushes 1 2", "transactions 1 2", "counter c", "pushes 3 4", "transactions 3 4"}},
		{"the table that comes first goes first", append([]queuedWrite{tx("9")}, pairs(1, 1)...), []string{"transactions 9 1", "push 1"}},
		{"70 pushes: 64, 4, 2", pairs(1, 70), nil},
	} {
		t.Run(c.name, func(t *testing.T) {
			got := coalesce(c.q)
			var desc []string
			rows := 0
			for _, st := range got {
				keys := make([]string, len(st.args))
				for i, a := range st.args {
					keys[i] = a.(string)
				}
				table := "counter"
				switch {
				case strings.HasPrefix(st.sql, "INSERT INTO paydesk_pushes"):
					table = "push"
				case strings.HasPrefix(st.sql, "INSERT INTO paydesk_transactions"):
					table = "transaction"
				}
				if len(keys) > 1 {
					table = map[string]string{"push": "pushes", "transaction": "transactions"}[table]
				}
				if n := strings.Count(st.sql, "),("); len(keys) > 1 && n != len(keys)-1 {
					t.Errorf("%s: %d rows in the text, %d rows of arguments", st.what, n+1, len(keys))
				}
				if strings.HasPrefix(table, "transaction") && !strings.HasSuffix(st.sql, multiRows[pgTxUpsert].tail) {
					t.Errorf("%s: the upsert lost its ON CONFLICT clause", st.what)
				}
				desc = append(desc, table+" "+strings.Join(keys, " "))
				rows += len(keys)
			}
			if rows != len(c.q) {
				t.Errorf("%d rows sent, %d queued", rows, len(c.q))
			}
			if c.want == nil {
				var sizes []int
				for _, st := range got {
					sizes = append(sizes, len(st.args))
				}
				if fmt.Sprint(sizes) != "[64 4 2 64 4 2]" {
					t.Errorf("chunks %v, want [64 4 2 64 4 2]", sizes)
				}
				if !strings.HasSuffix(got[0].what, "and 61 more") {
					t.Errorf("a joined statement's name %q, want its first three rows and the count of the rest", got[0].what)
				}
				return
			}
			if strings.Join(desc, "; ") != strings.Join(c.want, "; ") {
				t.Errorf("statements\n%s\nwant\n%s", strings.Join(desc, "; "), strings.Join(c.want, "; "))
			}
		})
	}
}

// TestPushCopy: a batch's push rows go by COPY from copyMin on, in their
// order, the other writes in theirs; never when another queued write
// names the push log, whose order against the rows would change.
func TestPushCopy(t *testing.T) {
	push := func(k int) queuedWrite {
		return queuedWrite{what: fmt.Sprint("push ", k), sql: pgPushInsert, args: []any{k}}
	}
	tx := queuedWrite{what: "transaction", sql: pgTxUpsert}
	other := queuedWrite{what: "a push's mark", sql: "UPDATE paydesk_pushes SET applied = true"}
	queue := func(n int, extra ...queuedWrite) []queuedWrite {
		var q []queuedWrite
		for k := range n {
			q = append(q, push(k), tx)
		}
		return append(q, extra...)
	}
	for _, c := range []struct {
		name   string
		q      []queuedWrite
		copied int
	}{
		{"fewer than copyMin", queue(copyMin - 1), 0},
		{"copyMin", queue(copyMin), copyMin},
		{"three times copyMin", queue(3 * copyMin), 3 * copyMin},
		{"another write of the push log", queue(copyMin, other), 0},
	} {
		t.Run(c.name, func(t *testing.T) {
			rows, what, rest := pushCopy(c.q)
			if len(rows) != c.copied {
				t.Fatalf("%d rows by COPY, want %d", len(rows), c.copied)
			}
			if c.copied == 0 {
				if len(rest) != len(c.q) {
					t.Errorf("%d writes left of %d", len(rest), len(c.q))
				}
				return
			}
			for i, r := range rows {
				if r[0] != i {
					t.Fatalf("row %d is push %v: out of order", i, r[0])
				}
			}
			if len(rest) != len(c.q)-c.copied || slices.ContainsFunc(rest, func(w queuedWrite) bool { return w.sql == pgPushInsert }) {
				t.Errorf("left %d writes, want the %d others", len(rest), len(c.q)-c.copied)
			}
			if want := fmt.Sprintf("push 0, push 1, push 2 and %d more", c.copied-3); what != want {
				t.Errorf("named %q, want %q", what, want)
			}
		})
	}
}
