// Command gen fills a cache with generated reservations for the large-list
// figures (docs/large.md): a bbolt file, or a PostgreSQL database (generated
// into a temporary file first, then copied in with COPY).
//
//	go run ./store/storetest/gen -db /tmp/1m.db -n 1000000
//	go run ./store/storetest/gen -db postgres://… -n 1000000
package main

import (
	"context"
	"encoding/binary"
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"time"

	bolt "go.etcd.io/bbolt"

	"paydesk/store"
	"paydesk/store/kvlayout"
	"paydesk/store/storetest"
)

func main() {
	where := flag.String("db", "", "the cache: a file or a postgres:// URL")
	n := flag.Int("n", 1_000_000, "reservations")
	seed := flag.Int64("seed", 1, "the generator's seed")
	bulk := flag.Bool("bulk", false, "write 5,000 reservations a commit at random times of the 20 days and their captures at once (storetest.Generate), instead of as a cache grows (storetest.Grow)")
	from := flag.String("from", "", "PostgreSQL only: copy this generated file instead of generating")
	baseline := flag.String("baseline", "", "write a copy of the -db file as the paydesk before the list indexes (schema 4) reads it, to this path")
	resketch := flag.Bool("resketch", false, "drop the -db file's trigram sketches so that the next open builds them again")
	evictFile := flag.Bool("evict", false, "drop the -db file's pages from the kernel's page cache: the next open is a cold start (no root needed)")
	flag.Parse()
	if *evictFile {
		if err := evict(*where); err != nil {
			fmt.Fprintln(os.Stderr, "gen:", err)
			os.Exit(1)
		}
		return
	}
	if *resketch {
		if err := dropSketches(*where); err != nil {
			fmt.Fprintln(os.Stderr, "gen:", err)
			os.Exit(1)
		}
		return
	}
	if *baseline != "" {
		if err := stripList(*where, *baseline); err != nil {
			fmt.Fprintln(os.Stderr, "gen:", err)
			os.Exit(1)
		}
		return
	}
	if err := run(*where, *n, *seed, *from, *bulk); err != nil {
		fmt.Fprintln(os.Stderr, "gen:", err)
		os.Exit(1)
	}
}

// clock is the generated data's "now" (ages and windows are relative to it).
var clock = time.Date(2026, 11, 23, 10, 0, 0, 0, time.UTC)

func run(where string, n int, seed int64, from string, bulk bool) error {
	if where == "" {
		return fmt.Errorf("-db is required")
	}
	start := time.Now()
	if !store.IsPostgresURL(where) {
		if err := generate(where, n, seed, bulk); err != nil {
			return err
		}
		fmt.Printf("%d reservations into %s in %s\n", n, where, time.Since(start).Round(time.Millisecond))
		return nil
	}
	if from == "" {
		dir, err := os.MkdirTemp("", "paydesk-gen")
		if err != nil {
			return err
		}
		defer os.RemoveAll(dir)
		from = filepath.Join(dir, "gen.db")
		if err := generate(from, n, seed, bulk); err != nil {
			return err
		}
		fmt.Printf("%d reservations generated in %s\n", n, time.Since(start).Round(time.Millisecond))
	}
	src, err := store.Open(from, store.Options{NoSync: true})
	if err != nil {
		return err
	}
	defer src.Close()
	t := time.Now()
	if err := src.CopyBulkInto(context.Background(), where); err != nil {
		return err
	}
	fmt.Printf("copied into %s with COPY and converted to its tables in %s\n", store.RedactURL(where), time.Since(t).Round(time.Millisecond))
	return nil
}

// stripList copies a file and takes out what schema 5 added (the list's
// indexes), so that the paydesk from before them opens the same data: the
// baseline of the figures.
func stripList(from, to string) error {
	src, err := bolt.Open(from, 0o600, &bolt.Options{ReadOnly: true})
	if err != nil {
		return err
	}
	defer src.Close()
	if err := src.View(func(tx *bolt.Tx) error { return tx.CopyFile(to, 0o600) }); err != nil {
		return err
	}
	dst, err := bolt.Open(to, 0o600, nil)
	if err != nil {
		return err
	}
	defer dst.Close()
	return dst.Update(func(tx *bolt.Tx) error {
		for _, name := range []string{"sumidx.created", "sumidx.invoice", "sumidx.customer", "sumidx.amount", "sumidx.state",
			"sumidx.unknown", "sumidx.missing", "sumpos.created", "sumpos.invoice", "sumpos.customer", "sumpos.amount",
			"sumpos.state", "sumpos.unknown", "sumpos.missing", "sumrow", "sumtext", "sumgram"} {
			if tx.Bucket([]byte(name)) == nil {
				continue
			}
			if err := tx.DeleteBucket([]byte(name)); err != nil {
				return fmt.Errorf("bucket %s: %w", name, err)
			}
		}
		// That paydesk read reservation records as JSON only.
		if err := jsonReservations(tx); err != nil {
			return err
		}
		return tx.Bucket([]byte("meta")).Put([]byte("schema"), binary.BigEndian.AppendUint64(nil, 4))
	})
}

// jsonReservations rewrites the binary reservation records (layout 8) as
// the JSON that paydesk before layout 8 reads.
func jsonReservations(tx *bolt.Tx) error {
	b := tx.Bucket(kvlayout.BReservation)
	var keys [][]byte
	if err := b.ForEach(func(k, v []byte) error {
		if !kvlayout.IsJSONRecord(v) {
			keys = append(keys, append([]byte(nil), k...))
		}
		return nil
	}); err != nil {
		return err
	}
	// That paydesk read the list's rows from the summaries bucket, which a
	// file keeps none of since layout 13.
	sb, err := tx.CreateBucketIfNotExists(kvlayout.BSummary)
	if err != nil {
		return err
	}
	for _, k := range keys {
		r, err := kvlayout.DecodeReservationOf(string(k), b.Get(k))
		if err != nil {
			return fmt.Errorf("reservation %s: %w", k, err)
		}
		if err := sb.Put(k, kvlayout.EncodeSummary(r.Summary())); err != nil {
			return err
		}
		v, err := json.Marshal(r)
		if err != nil {
			return fmt.Errorf("reservation %s: %w", k, err)
		}
		if err := b.Put(k, v); err != nil {
			return err
		}
	}
	return nil
}

// dropSketches takes schema 6's sketches out of a file (schema 5 again).
func dropSketches(path string) error {
	db, err := bolt.Open(path, 0o600, nil)
	if err != nil {
		return err
	}
	defer db.Close()
	return db.Update(func(tx *bolt.Tx) error {
		if tx.Bucket([]byte("sumgram")) != nil {
			if err := tx.DeleteBucket([]byte("sumgram")); err != nil {
				return err
			}
		}
		return tx.Bucket([]byte("meta")).Put([]byte("schema"), binary.BigEndian.AppendUint64(nil, 5))
	})
}

func generate(path string, n int, seed int64, bulk bool) error {
	db, err := store.Open(path, store.Options{NoSync: true, Now: func() time.Time { return clock }})
	if err != nil {
		return err
	}
	fill := storetest.Grow
	if bulk {
		fill = storetest.Generate
	}
	if err := fill(db, n, seed); err != nil {
		_ = db.Close()
		return err
	}
	return db.Close()
}
