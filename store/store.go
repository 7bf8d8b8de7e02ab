package store

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sync"
	"sync/atomic"
	"time"

	bolt "go.etcd.io/bbolt"
	bolterrors "go.etcd.io/bbolt/errors"

	"paydesk/internal/private"
	"paydesk/store/domain"
	"paydesk/store/postgres"
)

// Errors callers branch on.
var (
	// ErrLocked: another process holds the cache file.
	ErrLocked = errors.New("in use by another paydesk process")
	// ErrNotFound: no such reservation, transaction, push or operation.
	ErrNotFound = domain.ErrNotFound
	// ErrNewerSchema: the file was written by a newer paydesk.
	ErrNewerSchema = domain.ErrNewerSchema
	// ErrAmbiguous: a reference (an invoice) names more than one record;
	// the error lists them so the operator can name one.
	ErrAmbiguous = errors.New("name one by its reservation number")
	// ErrClosed: the DB is closed.
	ErrClosed = errors.New("cache is closed")
)

// SchemaVersion is the layout this code writes. Open migrates older files
// step by step and refuses newer ones.
const SchemaVersion = 8

// initialMmapSize is address space, not memory: mapping it up front spares
// the remaps (which stall every reader and the writer) while the file grows.
// The freelist stays synced (one page per commit): without it bbolt rebuilds
// the list by reading every page on open, 0.4 s on 100,000 reservations.
const initialMmapSize = 1 << 30

// Options configure Open.
type Options struct {
	// NoSync skips fsync: for tests only, never for a real cache.
	NoSync bool
	// Now is the clock; nil means time.Now.
	Now func() time.Time
	// MaxRejected bounds the rejected-push log; 0 means 1,000.
	MaxRejected int
	// MaxExchanges bounds the gateway log; 0 means 1,000.
	MaxExchanges int
	// NoGroupCommit gives every push a transaction and fsync of its own
	// instead of sharing them: only to measure what group commit buys.
	NoGroupCommit bool
	// LockTimeout is how long Open waits for a file another process holds;
	// 0 means one second.
	LockTimeout time.Duration
	// CheckPagesUpTo is the largest file Open checks page by page; 0 means
	// 64 MiB, negative checks none (a damaged page is then found when read).
	CheckPagesUpTo int64
	// AuditKey keys the audit log's entries (auditkey.go: derive it from the
	// merchant's secret with AuditKeyFromSecret); nil writes them unkeyed
	// and VerifyAudit cannot tell an entry added behind paydesk's back.
	AuditKey []byte
	// NoMigrate refuses a PostgreSQL database whose schema is older than
	// this paydesk instead of migrating it (a role that may not change the
	// schema; `paydesk db migrate` does it).
	NoMigrate bool

	// kvEngine opens a team's database whose conversion has not begun on
	// the kv engine (pgengine.go), which otherwise is only the source the
	// conversion reads: for the tests that build a layout-7 database the
	// way today's release leaves it, then convert it.
	kvEngine bool
	// ForwardTo are the shop endpoints every push stored is delivered to:
	// one delivery each, recorded with the push (outbox.go).
	ForwardTo []string

	// fillChunk overrides the rows per transaction of a fill at open
	// (pagefill.go), failFillAfter stops a fill after that many chunks:
	// for the tests of a fill cut short.
	fillChunk, failFillAfter int
}

// DB is an open cache. It is safe for concurrent use.
type DB struct {
	bolt *bolt.DB // the file, for its own checks; nil on PostgreSQL
	// damage is set once the file was found damaged while running: writes
	// are refused from then on (damage.go); nil on PostgreSQL.
	damage *damage
	// audit keys the audit log (Options.AuditKey); nil: unkeyed.
	audit *auditKeyring
	// repo is the engine under the contract the rules are written
	// against (repo.go); kv is the same engine as buckets, for the code
	// that works on the layout itself (migrations, list indexes, copies,
	// the push inbox).
	repo Repo
	kv   *kvRepo
	eng  Engine
	// rel is the native engine on a team's database (pgrel*.go), which
	// repo is then; eng and kv stay for the conversion of the kv tables
	// at open, the connections and the layout's checks.
	rel  *postgres.Engine
	path string
	opts Options
	now  func() time.Time

	batch *batcher

	subMu sync.Mutex
	subs  map[*subscriber]struct{}

	// shared is true on PostgreSQL: other processes write too.
	shared bool
	// shard is appended to the counters' keys in meta: "/" and this
	// process's id on a shared database, nothing on a file.
	shard []byte
	bus   *changeBus // LISTEN/NOTIFY on PostgreSQL, nil on a file
	lease *lease     // this process's liveness lock on PostgreSQL (pglease.go)
	// inbox is the push inbox on PostgreSQL (pginbox.go), nil on a file.
	inbox *inbox

	pages   pageCache // the last filter of the reservation list (page.go)
	txPages pageCache // and of the transaction list (pagetx.go)
	// listReads counts the list reads (pages, counts) running on a file;
	// the warm-up stands aside while there are any (warm.go).
	listReads atomic.Int32
}

// Shared reports whether the store is a team's database that other
// processes write to as well (PostgreSQL), not a file of this process.
func (db *DB) Shared() bool { return db.shared }

// Open opens or creates the cache at path (folder 0700, file 0600). A file
// another process holds fails within LockTimeout with an error wrapping
// ErrLocked that names the file.
func Open(path string, opts Options) (*DB, error) {
	if opts.Now == nil {
		opts.Now = time.Now
	}
	if opts.MaxRejected <= 0 {
		opts.MaxRejected = 1000
	}
	if opts.MaxExchanges <= 0 {
		opts.MaxExchanges = 1000
	}
	if opts.LockTimeout <= 0 {
		opts.LockTimeout = time.Second
	}
	if IsPostgresURL(path) {
		return openShared(path, opts)
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		return nil, fmt.Errorf("cache %s: create folder: %w", path, err)
	}
	// The cache holds customers' names and addresses: like ssh with a
	// private key, refuse a file that others may read.
	if err := private.CheckPath(path); err != nil {
		return nil, fmt.Errorf("cache %w", err)
	}
	if err := checkEmpty(path); err != nil {
		return nil, err
	}
	// bbolt maps the file and trusts its meta pages: check them against
	// the file first (pagecheck.go). What another process is writing may be
	// caught mid-change: bbolt's lock decides then.
	clean, err := preflight(path)
	if err != nil && !heldByOther(path) {
		return nil, err
	}
	dmg := &damage{path: path}
	bdb, err := openBolt(path, opts, dmg)
	if err != nil {
		if errors.Is(err, bolterrors.ErrTimeout) {
			// Which flag picks another cache is the caller's to say.
			return nil, fmt.Errorf("cache %s is %w", path, ErrLocked)
		}
		if errors.Is(err, ErrDamaged) {
			return nil, err
		}
		if errors.Is(err, bolterrors.ErrInvalid) || errors.Is(err, bolterrors.ErrChecksum) || errors.Is(err, bolterrors.ErrVersionMismatch) {
			return nil, &DamagedError{Path: path, Detail: err.Error()}
		}
		return nil, fmt.Errorf("cache %s: %w", path, err)
	}
	db := &DB{bolt: bdb, eng: boltEngine{db: bdb, damage: dmg}, damage: dmg, audit: newAuditKeyring(opts.AuditKey), path: path, opts: opts, now: opts.Now, subs: map[*subscriber]struct{}{}}
	db.kv = &kvRepo{eng: db.eng, path: path}
	db.kv.lists = kvLister{db}
	db.repo = db.kv
	if err := db.checkPages(clean); err != nil {
		_ = bdb.Close()
		return nil, err
	}
	if err := db.migrate(); err != nil {
		_ = bdb.Close()
		if errors.Is(err, ErrDamaged) {
			return nil, err
		}
		return nil, fmt.Errorf("cache %s: %w", path, err)
	}
	if err := db.runFill(listFillName, listFill()); err != nil {
		_ = bdb.Close()
		return nil, fmt.Errorf("cache %s: the reservation list's indexes: %w", path, err)
	}
	if err := db.runFill(txListFillName, txListFill()); err != nil {
		_ = bdb.Close()
		return nil, fmt.Errorf("cache %s: the transaction list's indexes: %w", path, err)
	}
	if err := db.refold(); err != nil {
		_ = bdb.Close()
		return nil, fmt.Errorf("cache %s: folding the lists' search texts again: %w", path, err)
	}
	if err := db.markOpen(true); err != nil {
		_ = bdb.Close()
		return nil, fmt.Errorf("cache %s: %w", path, err)
	}
	db.batch = newBatcher(db)
	return db, nil
}

// Migrated lists the schema steps (PostgreSQL migration files) this Open
// applied: empty when the schema was current, and always on a file.
func (db *DB) Migrated() []string {
	if e, ok := db.eng.(*pgEngine); ok {
		return e.migrated
	}
	return nil
}

// openShared opens a team's store on PostgreSQL: the schema migrated (or
// refused, see Options.NoMigrate), the records of a database written
// before the typed relations converted into them (openRelational), the
// native engine under the rules, and changes from other processes heard
// through LISTEN/NOTIFY.
func openShared(dsn string, opts Options) (*DB, error) {
	ctx := context.Background()
	rel, err := postgres.Open(ctx, dsn, !opts.NoMigrate)
	if err != nil {
		return nil, err
	}
	// The kv engine shares the native engine's pool: it reads what a
	// layout-7 database still holds for the conversion, and the push inbox,
	// the lease and the change bus use the same connections.
	eng := kvOn(rel)
	db := &DB{eng: eng, audit: newAuditKeyring(opts.AuditKey), path: rel.URL(), opts: opts, now: opts.Now, subs: map[*subscriber]struct{}{}, shared: true}
	db.kv = &kvRepo{eng: eng, path: db.path, shared: true}
	db.kv.lists = kvLister{db}
	db.repo = db.kv
	// The native engine is the store: a new database is created
	// relational, a layout-7 one converted at this open. Only a test
	// building a layout-7 database (kvEngine) stays on the kv tables, and
	// only as long as no conversion began.
	native := !opts.kvEngine
	if !native {
		if native, err = rel.RelationalBegun(ctx); err != nil {
			_ = eng.Close()
			return nil, err
		}
	}
	if native {
		err = db.openRelational(ctx, rel)
	} else {
		err = db.migrate()
	}
	if err != nil {
		_ = eng.Close()
		return nil, fmt.Errorf("database %s: %w", db.path, err)
	}
	if db.lease, err = openLease(ctx, dsn, db.path); err != nil {
		_ = eng.Close()
		return nil, err
	}
	if err := db.recoverAbandoned(ctx); err != nil {
		db.lease.close()
		_ = eng.Close()
		return nil, fmt.Errorf("database %s: %w", db.path, err)
	}
	if db.rel == nil {
		if err := db.fillListTables(ctx); err != nil && !postgres.IsReadOnlyRole(err) {
			db.lease.close()
			_ = eng.Close()
			return nil, fmt.Errorf("database %s: the list tables: %w", db.path, err)
		}
	}
	if err := db.refoldPG(ctx); err != nil && !postgres.IsReadOnlyRole(err) {
		db.lease.close()
		_ = eng.Close()
		return nil, fmt.Errorf("database %s: folding the lists' search texts again: %w", db.path, err)
	}
	db.inbox = newInbox(db, eng, dsn) // before the bus, whose listener looks at it
	if err := db.startBus(dsn); err != nil {
		db.inbox.close()
		db.lease.close()
		_ = eng.Close()
		return nil, err
	}
	db.shard = []byte("/" + db.bus.origin)
	db.kv.shard = db.shard
	db.batch = newBatcher(db)
	return db, nil
}

func openBolt(path string, opts Options, d *damage) (bdb *bolt.DB, err error) {
	err = d.guard(func() (err error) {
		bdb, err = bolt.Open(path, 0o600, &bolt.Options{Timeout: opts.LockTimeout, NoSync: opts.NoSync,
			FreelistType: bolt.FreelistMapType, InitialMmapSize: initialMmapSize})
		return err
	})
	return bdb, err
}

// Now is the cache's clock (Options.Now).
func (db *DB) Now() time.Time { return db.now() }

// Path is the file the cache lives in.
func (db *DB) Path() string { return db.path }

// Close waits for pending group commits, then closes the file.
func (db *DB) Close() error {
	if db.inbox != nil {
		db.inbox.close() // the pushes queued are committed (and answered) first
	}
	db.batch.close()
	if db.bus != nil {
		db.bus.close()
	}
	db.closeSubscribers()
	if db.lease != nil {
		db.lease.close()
	}
	if db.bolt != nil && db.damage.get() != nil {
		// A damaged cache keeps its "open" marker, so the next open checks
		// it whole. bbolt may never release its writer lock after a panic
		// in a transaction's rollback (which rereads the freelist page), so
		// its Close could wait forever: the file is let go without waiting
		// (the process's end releases it for sure).
		go func() { _ = db.eng.Close() }()
		return nil
	}
	if db.bolt != nil {
		// The clean close.
		if err := db.markOpen(false); err != nil && !errors.Is(err, bolterrors.ErrDatabaseNotOpen) {
			_ = db.eng.Close()
			return fmt.Errorf("close cache %s: %w", db.path, err)
		}
	}
	if err := db.eng.Close(); err != nil {
		return fmt.Errorf("close cache %s: %w", db.path, err)
	}
	return nil
}
