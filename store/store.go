package store

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sync"
	"time"

	"paydesk/internal/private"
	"paydesk/store/domain"
	"paydesk/store/kv"
	"paydesk/store/postgres"
)

// Errors callers branch on.
var (
	// ErrLocked: another process holds the cache file.
	ErrLocked = kv.ErrLocked
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

// SchemaVersion is the layout this code writes (the bucket engine's, which
// Open migrates step by step and which refuses newer ones).
const SchemaVersion = kv.SchemaVersion

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
	// PushInbox, on a cache file, makes IngestPush append pushes to the
	// file's push inbox and answer once that is durable; the rules apply
	// them afterwards (fileinbox.go). For a process that runs a listener.
	// Whoever opens the file applies what an inbox left behind.
	PushInbox bool
	// Logf receives what Open and the push inbox have to report that is
	// not an error of the call (an inbox's torn tail, a push the rules
	// refused); nil discards it.
	Logf func(format string, args ...any)
	// LockTimeout is how long Open waits for a file another process holds;
	// 0 means one second.
	LockTimeout time.Duration
	// CheckPagesUpTo is the largest file Open checks page by page; 0 means
	// 64 MiB, negative checks none (a larger file closed cleanly has its
	// branch pages checked; a damaged leaf is found when read).
	CheckPagesUpTo int64
	// AuditKey keys the audit log's entries (auditkey.go: derive it from the
	// merchant's secret with AuditKeyFromSecret); nil writes them unkeyed
	// and VerifyAudit cannot tell an entry added behind paydesk's back.
	AuditKey []byte
	// NoMigrate refuses a PostgreSQL database whose schema is older than
	// this paydesk instead of migrating it (a role that may not change the
	// schema; `paydesk db migrate` does it).
	NoMigrate bool
	// Upgrading, when set, is told what Open is about to do once to a
	// cache file of an older paydesk before it opens (build or convert
	// the lists' indexes, fold the search texts again): on a million
	// reservations that takes seconds to a minute, and a console that
	// shows nothing meanwhile looks hung.
	Upgrading func(what string)

	// kvEngine opens a team's database whose conversion has not begun on
	// the kv engine (pgengine.go), which otherwise is only the source the
	// conversion reads: for the tests that build a layout-7 database the
	// way today's release leaves it, then convert it.
	kvEngine bool
	// ForwardTo are the shop endpoints this process was given: a store
	// that keeps none takes them at open, one that keeps others refuses
	// with a *ForwardToMismatch (outbox_endpoints.go). Every push stored
	// is delivered to the store's endpoints, one delivery each, recorded
	// with the push (outbox.go), whatever this process was given.
	ForwardTo []string
	// ForwardToReadOnly is a process whose config says read-only: its
	// ForwardTo is checked against the store's, never written into a
	// store that keeps none.
	ForwardToReadOnly bool

	// fillChunk overrides the rows per transaction of a fill at open
	// (pagefill.go), failFillAfter stops a fill after that many chunks:
	// for the tests of a fill cut short.
	fillChunk, failFillAfter int
	// openFile opens a cache file for bbolt (kv.FileOptions.OpenFile).
	openFile func(name string, flag int, perm os.FileMode) (*os.File, error)
}

// DB is an open cache. It is safe for concurrent use.
type DB struct {
	// audit keys the audit log (Options.AuditKey); nil: unkeyed.
	audit *auditKeyring
	// repo is the engine under the contract the rules are written
	// against (repo.go).
	repo Repo
	// bk is the bucket engine (store/kv): the store on a file; on a team's
	// database the kv tables, read for their conversion at open and by
	// the push inbox of a database not converted yet.
	bk *kv.DB
	// rel is the native engine on a team's database (pgrel*.go), which
	// repo is then.
	rel *postgres.Engine
	// conn is the team's database's connections (its pool, its URL, the
	// migrations this open applied); nil on a file.
	conn *postgres.Engine
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
	// finbox is the push inbox on a file (fileinbox.go) when
	// Options.PushInbox is set; nil otherwise.
	finbox *fileInbox
}

// Shared reports whether the store is a team's database that other
// processes write to as well (PostgreSQL), not a file of this process.
func (db *DB) Shared() bool { return db.shared }

// IngestsPushes reports whether IngestPush takes pushes: on a team's
// database, and on a file opened with Options.PushInbox.
func (db *DB) IngestsPushes() bool { return db.inbox != nil || db.finbox != nil }

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
	db := &DB{audit: newAuditKeyring(opts.AuditKey), path: path, opts: opts, now: opts.Now, subs: map[*subscriber]struct{}{}}
	bk, err := kv.OpenBolt(path, db.kvOptions(), db.recoverInFlight)
	if err != nil {
		return nil, err
	}
	db.bk, db.repo = bk, bk.Repo()
	db.batch = newBatcher(db)
	logf := opts.Logf
	if logf == nil {
		logf = func(string, ...any) {}
	}
	last, err := replayFileInbox(db, logf)
	if err == nil && opts.PushInbox {
		db.finbox, err = openFileInbox(db, last, opts.NoSync, logf)
	}
	if err != nil {
		_ = db.Close()
		return nil, err
	}
	if err := db.adoptForwardTo(context.Background()); err != nil {
		_ = db.Close()
		return nil, err
	}
	return db, nil
}

// Migrated lists the schema steps (PostgreSQL migration files) this Open
// applied: empty when the schema was current, and always on a file.
func (db *DB) Migrated() []string {
	if db.conn != nil {
		return db.conn.Migrated()
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
	// The lease's and the change bus's connections are dialled meanwhile;
	// whichever is not taken on the way out is closed.
	leaseConn, busConn := dial(ctx, dsn), dial(ctx, dsn)
	defer leaseConn.discard()
	defer busConn.discard()
	rel, err := postgres.Open(ctx, dsn, !opts.NoMigrate)
	if err != nil {
		return nil, err
	}
	// The kv engine shares the native engine's pool: it reads what a
	// layout-7 database still holds for the conversion, and the push inbox,
	// the lease and the change bus use the same connections.
	db := &DB{conn: rel, audit: newAuditKeyring(opts.AuditKey), path: rel.URL(), opts: opts, now: opts.Now, subs: map[*subscriber]struct{}{}, shared: true}
	db.bk = kv.OnPostgres(rel, db.kvOptions())
	db.repo = db.bk.Repo()
	eng := db.bk
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
		err = db.bk.Migrate(nil)
	}
	if err != nil {
		_ = eng.Close()
		return nil, fmt.Errorf("database %s: %w", db.path, err)
	}
	if db.lease, err = openLease(ctx, leaseConn, db.path); err != nil {
		_ = eng.Close()
		return nil, err
	}
	if err := db.recoverAbandoned(ctx); err != nil {
		db.lease.close()
		_ = eng.Close()
		return nil, fmt.Errorf("database %s: %w", db.path, err)
	}
	if db.rel == nil {
		if err := db.bk.FillListTables(ctx); err != nil && !postgres.IsReadOnlyRole(err) {
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
	db.inbox = newInbox(db, dsn) // before the bus, whose listener looks at it
	if err := db.startBus(dsn, busConn); err != nil {
		db.inbox.close()
		db.lease.close()
		_ = eng.Close()
		return nil, err
	}
	db.shard = []byte("/" + db.bus.origin)
	db.bk.SetShard(db.shard)
	db.batch = newBatcher(db)
	if err := db.adoptForwardTo(ctx); err != nil {
		_ = db.Close()
		return nil, err
	}
	return db, nil
}

// kvOptions are the bucket engine's options (store/kv) of opts.
func (db *DB) kvOptions() kv.Options {
	return kv.Options{File: kv.FileOptions{NoSync: db.opts.NoSync, LockTimeout: db.opts.LockTimeout, CheckPagesUpTo: db.opts.CheckPagesUpTo,
		OpenFile: db.opts.openFile},
		FillChunk: db.opts.fillChunk, FailFillAfter: db.opts.failFillAfter, Upgrading: db.opts.Upgrading}
}

// refoldPG folds the team's database's search texts again when an older
// folding made them: the native engine's tables, or the kv tables of a
// database not converted yet.
func (db *DB) refoldPG(ctx context.Context) error {
	if db.rel != nil {
		return db.rel.Refold(ctx, db.opts.fillChunk)
	}
	return db.bk.RefoldPG(ctx)
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
	// The inbox's files failing to close loses nothing (what they hold
	// was fdatasync'd before it was answered); the rest still closes.
	var inboxErr error
	if db.finbox != nil {
		if err := db.finbox.close(); err != nil {
			inboxErr = fmt.Errorf("close cache %s: push inbox: %w", db.path, err)
		}
	}
	db.batch.close()
	if db.bus != nil {
		db.bus.close()
	}
	db.closeSubscribers()
	if db.lease != nil {
		db.lease.close()
	}
	if err := db.bk.Close(); err != nil {
		return errors.Join(inboxErr, fmt.Errorf("close cache %s: %w", db.path, err))
	}
	return inboxErr
}
