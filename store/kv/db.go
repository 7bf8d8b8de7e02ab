package kv

import (
	"context"
	"errors"
	"fmt"
	"sync/atomic"

	bolterrors "go.etcd.io/bbolt/errors"

	"paydesk/store/postgres"
)

// SchemaVersion is the bucket layout this code writes. Migrate brings
// older files step by step and refuses newer ones.
const SchemaVersion = 14

// Options configure the bucket engine.
type Options struct {
	File FileOptions
	// Shared: other processes write the same store (the kv PostgreSQL):
	// counters are kept per process and a transaction may run again.
	Shared bool
	// FillChunk overrides the rows per transaction of a fill at open
	// (pagefill.go), FailFillAfter stops a fill after that many chunks:
	// for the tests of a fill cut short.
	FillChunk, FailFillAfter int
	// Upgrading, when set, is told what a fill due at open does before
	// it starts (fillTitles).
	Upgrading func(what string)
}

// DB is the bucket engine open on a bbolt file or on the kv tables of a
// PostgreSQL database: the buckets, the contract over them (Repo), the
// lists' indexes with their fills, and on bbolt the file itself.
type DB struct {
	file *File // nil on PostgreSQL
	eng  Engine
	kv   *kvRepo
	path string
	opts Options

	pages   pageCache // the last filter of the reservation list (page.go)
	txPages pageCache // and of the transaction list (pagetx.go)
	// listReads counts the list reads (pages, counts) running on a file;
	// the warm-up stands aside while there are any (warm.go).
	listReads atomic.Int32
}

// OpenBolt opens the bbolt file at path (OpenFile's checks), brings its
// layout to SchemaVersion (Migrate: recover runs in the same transaction
// when the layout was changed or operations were left pending), fills
// the lists' indexes a file from before them lacks and folds the search
// texts again when the folding changed; its first write marks the file
// open (damage.go).
func OpenBolt(path string, o Options, recover func(RepoTx) error) (*DB, error) {
	f, err := OpenFile(path, o.File)
	if err != nil {
		return nil, err
	}
	db := &DB{file: f, eng: f.Engine(), path: path, opts: o}
	db.kv = &kvRepo{eng: db.eng, path: path, lists: kvLister{db}}
	if err := db.Migrate(recover); err != nil {
		_ = f.Close()
		if errors.Is(err, ErrDamaged) {
			return nil, err
		}
		return nil, fmt.Errorf("cache %s: %w", path, err)
	}
	if err := db.runFill(packedPosFillName, packedPosFill()); err != nil {
		_ = f.Close()
		return nil, fmt.Errorf("cache %s: the lists' indexes of layout 11: %w", path, err)
	}
	if err := db.runFill(listFillName, listFill()); err != nil {
		_ = f.Close()
		return nil, fmt.Errorf("cache %s: the reservation list's indexes: %w", path, err)
	}
	if err := db.runFill(txListFillName, txListFill()); err != nil {
		_ = f.Close()
		return nil, fmt.Errorf("cache %s: the transaction list's indexes: %w", path, err)
	}
	if err := db.ensurePushLog(); err != nil {
		_ = f.Close()
		return nil, fmt.Errorf("cache %s: the push log's index: %w", path, err)
	}
	if err := db.refold(); err != nil {
		_ = f.Close()
		return nil, fmt.Errorf("cache %s: folding the lists' search texts again: %w", path, err)
	}
	return db, nil
}

// OnPostgres is the bucket engine over the native engine's connections:
// what a layout-7 database still holds in paydesk_kv, read for its
// conversion, and what `paydesk db copy` writes before converting it.
func OnPostgres(rel *postgres.Engine, o Options) *DB {
	o.Shared = true
	eng := kvOn(rel)
	db := &DB{eng: eng, path: rel.URL(), opts: o}
	db.kv = &kvRepo{eng: eng, path: db.path, shared: true, lists: kvLister{db}}
	return db
}

// Repo is the engine under the domain contract.
func (db *DB) Repo() Repo { return db.kv }

// File is the bbolt file, nil on PostgreSQL.
func (db *DB) File() *File { return db.file }

// SetShard names this process's counters on a shared database (AddTally):
// "/" and the process's id.
func (db *DB) SetShard(shard []byte) { db.kv.shard = shard }

// Close marks a sound file closed cleanly, then closes the engine. A
// damaged file keeps its "open" marker, so the next open checks it whole.
func (db *DB) Close() error {
	if db.file == nil {
		return db.eng.Close()
	}
	if db.file.Damaged() == nil {
		if err := db.file.markClosed(); err != nil && !errors.Is(err, bolterrors.ErrDatabaseNotOpen) {
			_ = db.file.Close()
			return err
		}
	}
	return db.file.Close()
}

// FillListTables brings the kv PostgreSQL's list tables in line with its
// records (pagepg.go); nothing on bbolt.
func (db *DB) FillListTables(ctx context.Context) error { return db.fillListTables(ctx) }

// RefoldPG folds the kv PostgreSQL's search texts again when an older
// folding made them.
func (db *DB) RefoldPG(ctx context.Context) error { return db.refoldPG(ctx) }
