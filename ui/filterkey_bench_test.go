package ui

import (
	"path/filepath"
	"testing"
	"time"

	tea "charm.land/bubbletea/v2"

	"paydesk/store"
	"paydesk/store/storetest"
)

// BenchmarkFilterKey is the console's work for one key typed into the
// reservations list's filter on a cache of 2,000 reservations (issue 23,
// point 3): the key, every command it starts run to its end (the store's
// filtered page among them) and the frame drawn after it. One op is one
// key; the keys type "müller" and take it back again.
func BenchmarkFilterKey(b *testing.B) {
	path := filepath.Join(b.TempDir(), "keys.db")
	db, err := store.Open(path, store.Options{NoSync: true, Now: func() time.Time { return testNow }})
	if err != nil {
		b.Fatal(err)
	}
	if err := storetest.Generate(db, 2_000, 1); err != nil {
		b.Fatal(err)
	}
	defer db.Close()
	a := New(Config{Store: db, Now: func() time.Time { return testNow }, Location: time.UTC})
	a.Update(tea.WindowSizeMsg{Width: 120, Height: 36})
	drain(a, a.loadAll())
	for _, k := range []string{"1", "/"} {
		_, cmd := a.Update(keyPress(k))
		drain(a, cmd)
	}
	var keys []tea.Msg
	for _, r := range "müller" {
		keys = append(keys, keyPress(string(r)))
	}
	for range "müller" {
		keys = append(keys, keyPress("backspace"))
	}
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; b.Loop(); i++ {
		_, cmd := a.Update(keys[i%len(keys)])
		drain(a, cmd)
		if frame := a.render(); len(frame) == 0 {
			b.Fatal("empty frame")
		}
	}
}
