package store

import (
	"bytes"
	"context"
	"runtime"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgtype"

	"paydesk/internal/pgtest"
	"paydesk/store/kvlayout"
)

// The batcher's bytea arrays are what PostgreSQL's binary array form says:
// pgx's own decoder reads them back element for element.
func TestAppendByteaArray(t *testing.T) {
	big := bytes.Repeat([]byte{0xff, 0, 'x'}, 40_000)
	for _, tc := range []struct {
		name  string
		elems [][]byte
	}{
		{"one", [][]byte{[]byte("k1")}},
		{"several", [][]byte{[]byte("a"), []byte("bc"), []byte("def")}},
		{"an empty element", [][]byte{[]byte("a"), {}, []byte("c")}},
		{"binary and large", [][]byte{big, {0, 1, 2, 255}}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			buf := appendByteaArray([]byte("prefix"), tc.elems)
			if !bytes.HasPrefix(buf, []byte("prefix")) {
				t.Fatal("the buffer's earlier contents were overwritten")
			}
			var got [][]byte
			if err := pgtype.NewMap().Scan(pgtype.ByteaArrayOID, pgtype.BinaryFormatCode, buf[len("prefix"):], &got); err != nil {
				t.Fatal(err)
			}
			if len(got) != len(tc.elems) {
				t.Fatalf("%d elements back, want %d", len(got), len(tc.elems))
			}
			for i := range got {
				if !bytes.Equal(got[i], tc.elems[i]) {
					t.Errorf("element %d: %d bytes back, want %d", i, len(got[i]), len(tc.elems[i]))
				}
			}
		})
	}
}

// A batch's ingest allocates about its arguments' size once more (the
// wire message, the rows' identities), where pgx's Query of the same
// statement allocated 7.8 times their size in 205 allocations for 24
// pushes (its encode buffer grew from nothing for each batch). Not
// parallel: the heap's counters are the process's.
func TestInboxIngestAllocs(t *testing.T) {
	pgtest.OwnEngine(t)
	url := pgtest.Fresh(t)
	db, err := Open(url, Options{Now: func() time.Time { return t0 }})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	const batch, rounds = 24, 40
	ps := inboxPushes(batch * (rounds + 1))
	var keys, hashes, recs [][]byte
	for _, p := range ps {
		body, _ := p.Encode()
		pp := db.preparePush(PushRecord{Body: body, Method: "POST", URL: "/push"}, p)
		stored := pp.enc.Bytes()
		if stored == nil {
			stored = kvlayout.EncodePushTail(&pp.rec)
		}
		keys, hashes, recs = append(keys, []byte(pp.rec.Key)), append(hashes, append([]byte(nil), pp.rec.Hash[:]...)), append(recs, kvlayout.EncodePushHead(&pp.rec, stored))
	}
	argBytes := 0
	for i := range batch {
		argBytes += len(keys[i]) + len(hashes[i]) + len(recs[i])
	}
	ctx := context.Background()
	run := func(n int) {
		ids, err := db.inbox.insertBatch(ctx, keys[n*batch:(n+1)*batch], hashes[n*batch:(n+1)*batch], recs[n*batch:(n+1)*batch])
		if err != nil || len(ids) != batch {
			t.Fatalf("batch %d: %d rows inserted, %v", n, len(ids), err)
		}
	}
	run(rounds) // the connection's statement, the batcher's buffer
	var ms0, ms1 runtime.MemStats
	runtime.ReadMemStats(&ms0)
	for n := range rounds {
		run(n)
	}
	runtime.ReadMemStats(&ms1)
	bytesPer, allocsPer := (ms1.TotalAlloc-ms0.TotalAlloc)/rounds, (ms1.Mallocs-ms0.Mallocs)/rounds
	t.Logf("a batch of %d pushes, %d B of arguments: %d B allocated in %d allocations", batch, argBytes, bytesPer, allocsPer)
	if bytesPer > uint64(4*argBytes) || allocsPer > 2*batch {
		t.Errorf("a batch of %d pushes (%d B of arguments) allocated %d B in %d allocations; want at most %d B in %d", batch, argBytes, bytesPer, allocsPer, 4*argBytes, 2*batch)
	}
}
