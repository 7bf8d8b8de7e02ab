package kv

import (
	"context"
	"encoding/binary"
	"fmt"
	"runtime"
	"sync"
	"time"

	bolt "go.etcd.io/bbolt"
)

// warmChunk is how many blocks one read transaction of the warm-up walks:
// a read transaction holds bbolt's mmap lock, and a writer that must grow
// the file waits for it, so the walk takes it briefly and often.
const warmChunk = 256

// warmReaders is how many walks read a bucket at once. bbolt maps the file
// with MADV_RANDOM, so every page touched is one 4 KB read, and a list's
// blocks are spread over the file (a sketch is rewritten as its block
// fills): one walk waits for one read at a time, several keep the disk's
// queue full.
const warmReaders = 8

// WarmLists reads the lists' sketches and search-text blocks once, in the
// background after the console's first frame, so that the first filter on
// a file the kernel does not hold in its page cache (a cold start) finds
// them in memory instead of reading them page by page from the disk while
// the operator types (BenchmarkLargeTypingCold). The pages read belong to
// the kernel's cache (they show in RSS as file pages, which the kernel
// drops under pressure); nothing is allocated per block. It stops when ctx
// ends and does nothing on PostgreSQL, whose server keeps its own cache.
func (db *DB) WarmLists(ctx context.Context) error {
	if db.file == nil {
		return nil
	}
	// The sketches first: every filter asks them; then the text of the
	// blocks they point to.
	for _, name := range [][]byte{bSumGram, bTxGram, bSumText, bTxText} {
		if _, err := warmBucket(ctx, db.file.Bolt(), db.path, name, warmChunk, warmReaders, db.listsBusy, db.standAside); err != nil {
			return fmt.Errorf("warming %s: %w", name, err)
		}
	}
	return nil
}

// listReading marks a list read as running until the function it returns
// is called.
func (db *DB) listReading() func() {
	db.listReads.Add(1)
	return func() { db.listReads.Add(-1) }
}

// listsBusy reports whether list reads are running.
func (db *DB) listsBusy() bool { return db.listReads.Load() > 0 }

// standAside waits while list reads run: the operator's filter gets the
// disk to itself, and the warm-up goes on after it (a read of the filter
// waits at most for the warmReaders reads already asked of the disk).
func (db *DB) standAside(ctx context.Context) {
	for db.listsBusy() && ctx.Err() == nil {
		time.Sleep(2 * time.Millisecond)
	}
}

// warmBucket touches every page of the values of a bucket keyed by block
// number (4 bytes, big-endian), in readers walks over equal ranges of the
// numbers, and says how many values it read. While busy reports true it
// stops between values and calls wait, out of its read transaction.
func warmBucket(ctx context.Context, bdb *bolt.DB, path string, name []byte, chunk, readers int, busy func() bool, wait func(context.Context)) (int, error) {
	var last uint32
	err := FaultSafeView(bdb, path, func(tx *bolt.Tx) error {
		if b := tx.Bucket(name); b != nil {
			if k, _ := b.Cursor().Last(); len(k) == 4 {
				last = binary.BigEndian.Uint32(k)
			}
		}
		return nil
	})
	if err != nil {
		return 0, err
	}
	span := uint64(last)/uint64(readers) + 1
	var (
		wg    sync.WaitGroup
		mu    sync.Mutex
		total int
		first error
	)
	for r := range uint64(readers) {
		from, to := r*span, min((r+1)*span, uint64(last)+1)
		if from >= to {
			break
		}
		wg.Go(func() {
			n, err := warmRange(ctx, bdb, path, name, uint32(from), uint32(to), chunk, busy, wait)
			mu.Lock()
			defer mu.Unlock()
			total += n
			if first == nil {
				first = err
			}
		})
	}
	wg.Wait()
	return total, first
}

// warmRange touches every page of the values whose block numbers are in
// [from, to), chunk values per read transaction, each resuming where the
// last stopped.
func warmRange(ctx context.Context, bdb *bolt.DB, path string, name []byte, from, to uint32, chunk int, busy func() bool, wait func(context.Context)) (int, error) {
	next := binary.BigEndian.AppendUint32(nil, from)
	end := binary.BigEndian.AppendUint32(nil, to)
	read := 0
	for next != nil {
		if err := ctx.Err(); err != nil {
			return read, err
		}
		err := FaultSafeView(bdb, path, func(tx *bolt.Tx) error {
			b := tx.Bucket(name)
			if b == nil {
				next = nil
				return nil
			}
			c := b.Cursor()
			var sum byte
			k, v := c.Seek(next)
			for n := 0; ; k, v = c.Next() {
				if k == nil || string(k) >= string(end) {
					next = nil
					break
				}
				// A chunk ends at its size, or early when the operator's
				// list reads come: the wait for them is outside the read
				// transaction, which a writer growing the file would wait
				// for while the reads queued behind that writer.
				if n == chunk || n > 0 && busy() {
					next = append(next[:0], k...)
					break
				}
				// One read per page brings the page in: v[4096·i] lies in
				// the value's i-th page, and its last byte may lie in one
				// more.
				for i := 0; i < len(v); i += 4096 {
					sum += v[i]
				}
				if len(v) > 0 {
					sum += v[len(v)-1]
				}
				n++
				read++
			}
			runtime.KeepAlive(sum) // else the compiler drops the reads
			return nil
		})
		if err != nil {
			return read, err
		}
		wait(ctx)
	}
	return read, nil
}
