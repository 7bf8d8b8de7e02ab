package store

import (
	"bytes"
	"crypto/sha256"
	"path/filepath"
	"testing"
	"time"

	"paydesk/internal/pgtest"
)

// TestRejectedFloodKeepsEvidence: a flood of rejected requests from one
// source updates one entry and cannot push an earlier forgery out of the
// log (F2: 1,000 tiny unsigned requests once erased it in 0.6 s); what is
// kept of a 1 MiB body is an excerpt, its size and hash.
func TestRejectedFloodKeepsEvidence(t *testing.T) {
	pgtest.OwnEngine(t)
	now := time.Date(2026, 3, 2, 10, 0, 0, 0, time.UTC)
	clock := func() time.Time { return now }
	db, err := Open(filepath.Join(t.TempDir(), "r.db"), Options{NoSync: true, MaxRejected: 50, Now: clock})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	forged := PushRecord{RemoteAddr: "198.51.100.7:5555", Signature: SignatureMismatch, Reason: "signature: does not match",
		Body: []byte(`{"Transaction":{"Key":"FORGED"}}`)}
	if _, err := db.RecordRejectedPush(t.Context(), forged); err != nil {
		t.Fatal(err)
	}
	big := bytes.Repeat([]byte("A"), 1<<20)
	for i := range 2000 {
		now = now.Add(time.Millisecond)
		rec := PushRecord{RemoteAddr: "203.0.113.9:" + itoa(1000+i%5000), Signature: SignatureMissing, Reason: "signature: no Authorization header"}
		if i%10 == 0 {
			rec.Body = big
		}
		if _, err := db.RecordRejectedPush(t.Context(), rec); err != nil {
			t.Fatal(err)
		}
	}
	// IPv6 sources are grouped by /64.
	for i := range 300 {
		rec := PushRecord{RemoteAddr: "[2001:db8::" + itoa(i+1) + "]:443", Signature: SignatureMissing, Reason: "signature: none"}
		if _, err := db.RecordRejectedPush(t.Context(), rec); err != nil {
			t.Fatal(err)
		}
	}
	rej, err := db.RejectedPushes(t.Context(), 0)
	if err != nil {
		t.Fatal(err)
	}
	if len(rej) != 3 {
		t.Fatalf("rejected log has %d entries, want 3 (one per source)", len(rej))
	}
	flood, first := rej[1], rej[2]
	if first.RemoteAddr != forged.RemoteAddr || string(first.Body) != string(forged.Body) || first.Count != 1 {
		t.Errorf("the forgery's entry: %+v", first)
	}
	if flood.Count != 2000 || !flood.LastSeen.Equal(now) || flood.BodySize != 1<<20 || len(flood.Body) != MaxRejectedExcerpt ||
		flood.Hash != sha256.Sum256(big) {
		t.Errorf("the flood's entry: count %d, last %v, size %d, excerpt %d", flood.Count, flood.LastSeen, flood.BodySize, len(flood.Body))
	}
	if rej[0].Count != 300 {
		t.Errorf("IPv6 /64 entry count %d", rej[0].Count)
	}
	if n, _ := db.Counts(t.Context()); n.Rejected != 2301 {
		t.Errorf("rejected counter %d, want 2301", n.Rejected)
	}
}

// TestRejectedLogFullRetention: a full log gives the place of an entry
// quiet for more than a week to a new source, and otherwise counts the new
// source under "other sources".
func TestRejectedLogFullRetention(t *testing.T) {
	pgtest.OwnEngine(t)
	now := time.Date(2026, 3, 2, 10, 0, 0, 0, time.UTC)
	db, err := Open(filepath.Join(t.TempDir(), "r.db"), Options{NoSync: true, MaxRejected: 3, Now: func() time.Time { return now }})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	rec := func(host string) {
		t.Helper()
		if _, err := db.RecordRejectedPush(t.Context(), PushRecord{RemoteAddr: host + ":1", Signature: SignatureMissing, Reason: "signature: none"}); err != nil {
			t.Fatal(err)
		}
	}
	rec("192.0.2.1")
	now = now.Add(8 * 24 * time.Hour)
	rec("192.0.2.2")
	rec("192.0.2.3")
	rec("192.0.2.4") // takes the place of .1, quiet for 8 days
	rec("192.0.2.5") // the others are recent: other sources
	rej, _ := db.RejectedPushes(t.Context(), 0)
	var got []string
	for _, r := range rej {
		got = append(got, r.RemoteAddr)
	}
	want := []string{OtherSources, "192.0.2.4:1", "192.0.2.3:1", "192.0.2.2:1"}
	if len(got) != len(want) {
		t.Fatalf("entries %v, want %v", got, want)
	}
	for i := range want {
		if got[i] != want[i] {
			t.Fatalf("entries %v, want %v", got, want)
		}
	}
}
