package views

import (
	"bytes"
	"fmt"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	tea "charm.land/bubbletea/v2"

	"paydesk/internal/query"
	"paydesk/store"
	"paydesk/store/domain"
	"paydesk/store/storetest"
)

// keyOf is the key press a test names: a word for the special keys,
// else the text typed.
func keyOf(k string) tea.KeyPressMsg {
	special := map[string]rune{"enter": tea.KeyEnter, "esc": tea.KeyEscape, "backspace": tea.KeyBackspace,
		"down": tea.KeyDown, "up": tea.KeyUp, "pgdown": tea.KeyPgDown, "pgup": tea.KeyPgUp, "home": tea.KeyHome, "end": tea.KeyEnd}
	if c, ok := special[k]; ok {
		return tea.KeyPressMsg{Code: c}
	}
	if k == "space" {
		return tea.KeyPressMsg{Code: ' ', Text: " "}
	}
	return tea.KeyPressMsg{Code: []rune(k)[0], Text: k}
}

// settle runs a list's commands (its reads) and hands it their answers
// until it asks nothing more.
func settle[R any](l *pagedList[R], cmd tea.Cmd) {
	for cmd != nil {
		msg := cmd()
		if b, ok := msg.(tea.BatchMsg); ok {
			for _, c := range b {
				settle(l, c)
			}
			return
		}
		cmd, _ = l.update(msg)
	}
}

// typed is the keys of text typed into the prompt, one per character.
func typed(s string) []string {
	var out []string
	for _, r := range s {
		out = append(out, string(r))
	}
	return out
}

// listShot is what the operator sees of a list: the count, the cursor, the
// rows on screen, the filter's error.
type listShot struct {
	total, all, cursor int
	query              string
	err                string
	onScreen           []string
	selected           string
}

func shoot(l *pagedList[store.PageRow]) listShot {
	s := listShot{total: l.len(), all: l.all, cursor: l.table.Cursor(), query: l.query}
	if l.err != nil {
		s.err = l.err.Error()
	}
	for i := l.table.offset; i < min(l.table.offset+l.table.height, l.len()); i++ {
		r, ok := l.at(i)
		if !ok {
			s.onScreen = append(s.onScreen, "…")
			continue
		}
		s.onScreen = append(s.onScreen, r.Summary.Key)
	}
	if r, ok := l.selected(); ok {
		s.selected = r.Summary.Key
	}
	return s
}

// summaryRows pages summaries as rows held in memory (memRows), in the
// store's order (its position keys) and by its filter: the component's
// own source in memory, beside the store's.
func summaryRows(all []store.Summary) *memRows[store.PageRow] {
	one := func(s *store.Summary, q store.PageQuery) bool {
		return store.PageSummaries([]store.Summary{*s}, q).Total == 1
	}
	spec := &memSpec[store.PageRow]{
		key: func(r *store.PageRow) string { return r.Summary.Key },
		compare: func(a, b *store.PageRow, col int) int {
			return bytes.Compare(domain.PosKey(nil, store.SortBy(col), &a.Summary), domain.PosKey(nil, store.SortBy(col), &b.Summary))
		},
		where: func(r *store.PageRow, w *query.Query) bool { return one(&r.Summary, store.PageQuery{Where: *w}) },
		state: func(r *store.PageRow, st store.State) bool { return one(&r.Summary, store.PageQuery{State: st}) },
	}
	rows := make([]store.PageRow, len(all))
	for i, s := range all {
		rows[i] = store.PageRow{Summary: s, Pos: []byte(s.Key)} // in memory a row's position is its key
	}
	return newMemRows(spec, rows)
}

// One list component over every source: the store (read in commands),
// the store's reference in memory, and rows held in memory (memRows, as
// the push log's) answer the same keys with the same count, the same
// cursor and the same rows on screen, step by step.
func TestListSameOnEverySource(t *testing.T) {
	now := time.Date(2026, 11, 23, 10, 0, 0, 0, time.UTC)
	db, err := store.Open(filepath.Join(t.TempDir(), "list.db"), store.Options{NoSync: true, Now: func() time.Time { return now }})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = db.Close() })
	if err := storetest.Generate(db, 1100, 7); err != nil {
		t.Fatal(err)
	}
	all, err := db.LoadReservationSummaries(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	word := strings.ToLower(strings.Fields(all[0].Customer)[0])

	type source struct {
		name string
		src  Source[store.PageRow]
		sync bool
	}
	sources := []source{
		{"store", resPages{db}, false},
		{"summaries in memory", resPages{&memSource{all: all}}, true},
		{"rows in memory", summaryRows(all), true},
		{"rows in memory, read in commands", summaryRows(all), false},
	}
	cases := []struct {
		name string
		keys []string
	}{
		{"cursor and paging", []string{"down", "down", "pgdown", "pgdown", "up", "end", "pgup", "home"}},
		{"a word", append(append([]string{"/"}, typed(word)...), "enter", "down", "end", "home")},
		{"the filter language", append(append([]string{"/"}, typed("state:reserved amount:>50")...), "enter", "pgdown", "down", "end")},
		{"a filter that does not parse", append(append([]string{"/"}, typed("amount:>")...), "x", "enter")},
		{"nothing matches", append([]string{"/"}, typed("zzzz-no-such-row")...)},
		{"sort and reverse keep the cursor row", []string{"down", "down", "down", "s", "s", "S", "pgdown", "s"}},
		{"narrow, widen, clear", append(append([]string{"/"}, typed("a")...), "backspace", "x", "esc", "down", "/", "b", "enter", "esc")},
		{"down past the window", slices.Repeat([]string{"pgdown"}, 30)},
		{"down past the window, filtered", append(append([]string{"/"}, typed("state:reserved")...), append([]string{"enter"}, slices.Repeat([]string{"pgdown"}, 25)...)...)},
		{"far down and back", []string{"end", "up", "up", "pgup", "pgup", "pgup", "pgup", "pgup", "home", "down"}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			lists := make([]*pagedList[store.PageRow], len(sources))
			for i, s := range sources {
				ctx := NewContext(func() time.Time { return now })
				ctx.Location = time.UTC
				ctx.Tick = func(d time.Duration, fn func(time.Time) tea.Msg) tea.Cmd {
					return func() tea.Msg { return fn(now.Add(d)) }
				}
				l := newResList(ctx)
				l.table.SetSize(120, 12)
				settle(l, l.setSource(s.src, s.sync))
				lists[i] = l
			}
			check := func(step string) {
				t.Helper()
				want := shoot(lists[0])
				if want.total == 0 && step == "start" {
					t.Fatal("the store source shows no rows")
				}
				for i, l := range lists[1:] {
					if got := shoot(l); !shotEqual(got, want) {
						t.Fatalf("after %s, %s shows\n%+v\nthe store shows\n%+v", step, sources[i+1].name, got, want)
					}
				}
			}
			check("start")
			defer func() {
				t.Logf("%d rows, cursor %d, %d read from %d", lists[0].len(), lists[0].table.Cursor(), len(lists[0].rows), lists[0].base)
			}()
			for i, k := range tc.keys {
				for _, l := range lists {
					cmd, _ := l.update(keyOf(k))
					settle(l, cmd)
				}
				check(fmt.Sprintf("key %d (%q)", i, k))
			}
		})
	}
}

func shotEqual(a, b listShot) bool {
	return a.total == b.total && a.all == b.all && a.cursor == b.cursor && a.query == b.query && a.err == b.err &&
		a.selected == b.selected && slices.Equal(a.onScreen, b.onScreen)
}

// The push log is the same list as the other tabs: "/" takes the filter
// language, t and v narrow it in its source, s sorts, the cursor pages
// through a log longer than a window, and a push that arrives while the
// cursor is on the top row comes in above it.
func TestPushLogIsThePagedList(t *testing.T) {
	// 1,200 pushes are read in Update; 6,000 (past asyncRows) in commands.
	for _, n := range []int{1200, 6000} {
		t.Run(fmt.Sprint(n), func(t *testing.T) { pushLogPaged(t, n) })
	}
}

func pushLogPaged(t *testing.T, n int) {
	t0 := time.Date(2026, 11, 1, 9, 0, 0, 0, time.UTC)
	ps := make([]*store.PushRecord, n)
	for i := range ps {
		ps[i] = &store.PushRecord{ID: uint64(i + 1), ReceivedAt: t0.Add(time.Duration(i) * time.Minute),
			Envelope: []string{"Transaction", "DataRequest"}[i%2], Kind: "C700", Key: fmt.Sprintf("%032X", i+1),
			Invoice: fmt.Sprintf("INV-%05d", i), Service: []string{"klarnakp", "paypal"}[i%3%2],
			Status: store.Status{Code: []int{190, 490, 791}[i%3]}, Signature: store.SignatureValid, Applied: true}
	}
	ctx := NewContext(func() time.Time { return t0.Add(30 * 24 * time.Hour) })
	s := NewPushes(ctx, "")
	s.SetSize(140, 20)
	finish(s.Update(PushRowsMsg{Full: true, Rows: NewPushRows(ps)}), s)
	if s.list.sync != (n < asyncRows) {
		t.Fatalf("%d pushes read in Update: %v", n, s.list.sync)
	}
	sel := func() uint64 {
		r, ok := s.list.selected()
		if !ok {
			t.Fatal("no row under the cursor")
		}
		return (*r).Push.ID
	}
	if s.list.len() != n || len(s.list.rows) >= n || sel() != uint64(n) {
		t.Fatalf("start: %d rows, %d read, first %d; want %d rows paged, newest first", s.list.len(), len(s.list.rows), sel(), n)
	}
	press(s, "end")
	if sel() != 1 {
		t.Fatalf("end: push %d, want the oldest", sel())
	}
	press(s, "g")
	steps := []struct {
		keys  []string
		count int
		first int
	}{
		{[]string{"t"}, n / 2, n},                                 // type DataRequest: the odd indexes
		{[]string{"v"}, n / 6, n - 2},                             // and success (190): index 3 mod 6
		{append([]string{"/"}, typed("service:paypal")...), 0, 0}, // paypal is index 1 mod 3: never 190
		{[]string{"esc"}, n / 6, n - 2},                           // clears the text and closes the prompt
		{[]string{"esc"}, n / 6, n - 2},                           // leaves t and v as they are
	}
	for i, st := range steps {
		press(s, st.keys...)
		if s.list.len() != st.count {
			t.Fatalf("step %d %v: %d rows, want %d", i, st.keys, s.list.len(), st.count)
		}
		if st.count > 0 && sel() != uint64(st.first) {
			t.Fatalf("step %d %v: push %d first, want %d", i, st.keys, sel(), st.first)
		}
		if s.list.all != n {
			t.Fatalf("step %d: of %d pushes, want %d", i, s.list.all, n)
		}
	}
	if s.Capturing() {
		t.Fatal("the prompt is still open")
	}
	// A live push of the kept type and status comes in at the top.
	finish(s.Update(PushRowsMsg{Rows: NewPushRows([]*store.PushRecord{{ID: 99999, ReceivedAt: t0.Add(time.Duration(2*n) * time.Minute),
		Envelope: "DataRequest", Kind: "C700", Key: "NEW", Status: store.Status{Code: 190}, Signature: store.SignatureValid, Applied: true}})}), s)
	if s.list.len() != n/6+1 || sel() != 99999 || s.list.all != n+1 {
		t.Fatalf("live push: %d rows of %d, first %d; want %d of %d, the new one first", s.list.len(), s.list.all, sel(), n/6+1, n+1)
	}
	// Marks are the reservations': space on the push log marks nothing.
	press(s, " ")
	if s.list.marks.count() != 0 {
		t.Fatalf("space marked %d pushes on a list without marks", s.list.marks.count())
	}
}

// A filter the language refuses shows no rows, so it marks and exports
// none: its query would otherwise ask for every row ("*" then a bulk
// cancel would have taken the whole list).
func TestRefusedFilterMarksAndExportsNothing(t *testing.T) {
	refuse := append(append([]string{"/"}, typed("amount:>x")...), "enter")
	msgOf := func(cmd tea.Cmd) tea.Msg {
		if cmd == nil {
			return nil
		}
		return cmd()
	}
	t.Run("reservations", func(t *testing.T) {
		s := newTab(genRows(50))
		press(s, refuse...)
		msg := msgOf(s.Update(keyOf("*")))
		if st, ok := msg.(StatusMsg); !ok || !strings.Contains(st.Text, "nothing marked: Filter: amount:") || s.list.marks.count() != 0 {
			t.Fatalf("* under a refused filter: %#v, %d marked", msg, s.list.marks.count())
		}
		if st, ok := msgOf(s.Update(keyOf("e"))).(StatusMsg); !ok || !strings.Contains(st.Text, "nothing exported: Filter: amount:") {
			t.Fatalf("e under a refused filter: %#v", st)
		}
	})
	t.Run("transactions", func(t *testing.T) {
		s := NewTransactions(NewContext(func() time.Time { return listNow }))
		s.SetSize(120, 20)
		finish(s.Update(TransactionRowsMsg{Full: true, Rows: NewTransactionRows([]*store.Transaction{{Key: "K1", Kind: store.KindCapture, Invoice: "I-1", Created: listNow}})}), s)
		press(s, refuse...)
		if st, ok := msgOf(s.Update(keyOf("e"))).(StatusMsg); !ok || !strings.Contains(st.Text, "nothing exported: Filter: amount:") {
			t.Fatalf("e under a refused filter: %#v", st)
		}
	})
	t.Run("pushes", func(t *testing.T) {
		s := NewPushes(NewContext(func() time.Time { return listNow }), "")
		s.SetSize(120, 20)
		finish(s.Update(PushRowsMsg{Full: true, Rows: NewPushRows([]*store.PushRecord{{ID: 1, Key: "K1", ReceivedAt: listNow}})}), s)
		press(s, refuse...)
		if st, ok := msgOf(s.Update(keyOf("e"))).(StatusMsg); !ok || !strings.Contains(st.Text, "nothing exported: Filter: amount:") {
			t.Fatalf("e under a refused filter: %#v", st)
		}
	})
}
