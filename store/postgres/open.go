package postgres

import (
	"context"
	"embed"
	"errors"
	"fmt"
	"io/fs"
	"net/url"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgconn/ctxwatch"
	"github.com/jackc/pgx/v5/pgxpool"

	"paydesk/store/domain"
)

// RedactURL hides the password of a database URL for messages and logs.
func RedactURL(s string) string {
	u, err := url.Parse(s)
	if err != nil {
		return "postgres://…"
	}
	if _, ok := u.User.Password(); ok {
		u.User = url.UserPassword(u.User.Username(), "xxxxx")
	}
	return u.String()
}

//go:embed migrations/*.sql
var migrationFiles embed.FS

// pgMigration is one embedded schema step, applied in order on open.
type pgMigration struct {
	version int
	name    string
	sql     string
}

func pgMigrations() ([]pgMigration, error) {
	entries, err := fs.ReadDir(migrationFiles, "migrations")
	if err != nil {
		return nil, err
	}
	var out []pgMigration
	for _, e := range entries {
		n, _, ok := strings.Cut(e.Name(), "_")
		v, err := strconv.Atoi(n)
		if !ok || err != nil {
			return nil, fmt.Errorf("migration %s: the name must start with its version", e.Name())
		}
		b, err := fs.ReadFile(migrationFiles, "migrations/"+e.Name())
		if err != nil {
			return nil, err
		}
		out = append(out, pgMigration{version: v, name: e.Name(), sql: string(b)})
	}
	sort.Slice(out, func(i, j int) bool { return out[i].version < out[j].version })
	return out, nil
}

// cancelGrace is how long a cancelled query's connection waits for the
// server to stop the query before it is dropped.
const cancelGrace = time.Second

// MaxTries bounds the re-runs of a transaction that lost a race.
const MaxTries = 50

// Open opens the database and brings its schema up to date (migrate), or
// refuses a schema older than this paydesk with domain.ErrNeedsMigration (the
// role may not change it) and a newer one with domain.ErrNewerSchema.
func Open(ctx context.Context, dsn string, migrate bool) (*Engine, error) {
	cfg, err := pgxpool.ParseConfig(dsn)
	if err != nil {
		return nil, fmt.Errorf("database %s: %w", RedactURL(dsn), err)
	}
	// A context given up (a console's read for a filter typed over, a
	// command interrupted) asks the server to stop the query; pgx's
	// default only drops the connection, and the server went on with the
	// query to its end — a count of a common word ran 0.3–1 s on a
	// million reservations, several at once while a filter was typed.
	// The connection's deadline follows cancelGrace later, should the
	// server not answer the cancel.
	cfg.ConnConfig.BuildContextWatcherHandler = func(c *pgconn.PgConn) ctxwatch.Handler {
		return &pgconn.CancelRequestContextWatcherHandler{Conn: c, DeadlineDelay: cancelGrace}
	}
	pool, err := pgxpool.NewWithConfig(ctx, cfg)
	if err != nil {
		return nil, fmt.Errorf("database %s: %w", RedactURL(dsn), err)
	}
	e := &Engine{pool: pool, url: RedactURL(dsn)}
	if err := e.migrateSchema(ctx, migrate); err != nil {
		pool.Close()
		return nil, err
	}
	return e, nil
}

// migrateSchema applies the embedded migrations not yet recorded, in one
// transaction under an advisory lock (two processes starting at once do it
// once). A database newer than this paydesk is refused.
func (e *Engine) migrateSchema(ctx context.Context, apply bool) error {
	ms, err := pgMigrations()
	if err != nil {
		return err
	}
	latest := ms[len(ms)-1].version
	tx, err := e.pool.Begin(ctx)
	if err != nil {
		return fmt.Errorf("database %s: %w", e.url, err)
	}
	defer func() { _ = tx.Rollback(ctx) }()
	if _, err := tx.Exec(ctx, `SELECT pg_advisory_xact_lock(7305482190)`); err != nil {
		return fmt.Errorf("database %s: %w", e.url, err)
	}
	var have int
	var exists bool
	if err := tx.QueryRow(ctx, `SELECT to_regclass('paydesk_migrations') IS NOT NULL`).Scan(&exists); err != nil {
		return fmt.Errorf("database %s: %w", e.url, err)
	}
	if exists {
		if err := tx.QueryRow(ctx, `SELECT coalesce(max(version), 0) FROM paydesk_migrations`).Scan(&have); err != nil {
			return fmt.Errorf("database %s: %w", e.url, err)
		}
	}
	switch {
	case have > latest:
		return fmt.Errorf("database %s: schema version %d is %w (this one knows up to %d)", e.url, have, domain.ErrNewerSchema, latest)
	case have == latest:
		return nil
	case !apply:
		return fmt.Errorf("database %s: schema version %d, this paydesk needs %d: %w", e.url, have, latest, domain.ErrNeedsMigration)
	}
	var applied []string
	for _, m := range ms {
		if m.version <= have {
			continue
		}
		if _, err := tx.Exec(ctx, m.sql); err != nil {
			return fmt.Errorf("database %s: migration %s: %w", e.url, m.name, err)
		}
		if _, err := tx.Exec(ctx, `INSERT INTO paydesk_migrations (version, name) VALUES ($1, $2)`, m.version, m.name); err != nil {
			return fmt.Errorf("database %s: migration %s: %w", e.url, m.name, err)
		}
		applied = append(applied, m.name)
	}
	if err := tx.Commit(ctx); err != nil {
		return fmt.Errorf("database %s: migrate: %w", e.url, err)
	}
	e.migrated = applied
	return nil
}

// readOnlyError says a write was refused for the role, in words, keeping
// PostgreSQL's error for errors.As.
type readOnlyError struct {
	url string
	err error
}

func (e *readOnlyError) Error() string {
	return "database " + e.url + ": " + domain.ErrReadOnlyRole.Error() + ": nothing was written (a role with the operators' grants may write)"
}

func (e *readOnlyError) Unwrap() []error { return []error{domain.ErrReadOnlyRole, e.err} }

// DeniedWrite: PostgreSQL refused a write for the role's privileges (42501
// "permission denied", 25006 a read-only transaction) — not the audit log's
// insert-only trigger, which raises 42501 with its own message.
func DeniedWrite(err error) bool {
	var pe *pgconn.PgError
	if !errors.As(err, &pe) {
		return false
	}
	return pe.Code == "25006" || (pe.Code == "42501" && strings.HasPrefix(pe.Message, "permission denied"))
}

// Retryable: the transaction lost a race with another one and can run
// again (serialization failure, deadlock).
func Retryable(err error) bool {
	var pe *pgconn.PgError
	return errors.As(err, &pe) && (pe.Code == "40001" || pe.Code == "40P01")
}

// ReadOnly is the error of a write the database refused for the role
// (DeniedWrite), naming the database by url.
func ReadOnly(url string, err error) error { return &readOnlyError{url: url, err: err} }

// Pool is the engine's connection pool, which the push inbox, the lease
// and the change bus (package store) share.
func (e *Engine) Pool() *pgxpool.Pool { return e.pool }

// URL is the database's URL without its password, for messages.
func (e *Engine) URL() string { return e.url }

// Migrated are the schema steps the open applied (none when the schema was
// current).
func (e *Engine) Migrated() []string { return e.migrated }
