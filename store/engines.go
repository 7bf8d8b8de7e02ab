package store

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"paydesk/store/domain"
	"paydesk/store/kv"
	"paydesk/store/postgres"
)

// What the rules need of the bucket engine (store/kv) beyond the contract:
// opening it, recovering the operations a process left in flight, copying
// a cache into a team's database and warming a file's lists.

// RedactURL hides the password of a database URL for messages and logs.
func RedactURL(s string) string { return postgres.RedactURL(s) }

// IsPostgresURL reports whether a --db value names a PostgreSQL database
// rather than a bbolt file.
func IsPostgresURL(s string) bool {
	return strings.HasPrefix(s, "postgres://") || strings.HasPrefix(s, "postgresql://")
}

// The database's errors callers branch on (domain/errors.go).
var (
	ErrNeedsMigration = domain.ErrNeedsMigration
	ErrReadOnlyRole   = domain.ErrReadOnlyRole
)

// ErrDamaged: the cache file is damaged (bbolt found a page it cannot read)
// or is not a cache at all (an empty file).
var ErrDamaged = kv.ErrDamaged

// DamagedError says which cache is damaged, how, and what to do, in one
// line.
type DamagedError = kv.DamagedError

// CheckFile checks a cache file page by page without opening it for
// writing (kv.CheckFile): what it found, nothing for a sound file.
func CheckFile(path string, lockTimeout time.Duration) ([]string, error) {
	return kv.CheckFile(path, lockTimeout)
}

// ErrInUse: the database has records of its own under the numbers the
// copy would write (kv.ErrInUse).
var ErrInUse = kv.ErrInUse

// recoverInFlight turns operations left "pending" by a process that ended
// (the file lock says no one else has it open) into "outcome unknown": their
// request may or may not have reached the gateway.
func (db *DB) recoverInFlight(tx RepoTx) error {
	open, err := tx.OpenOps()
	if err != nil {
		return err
	}
	for _, o := range open {
		op, err := getOp(tx, o.ID)
		if err != nil {
			return err
		}
		if op.State != OpPending {
			continue
		}
		op.State = OpOutcomeUnknown
		op.Error = "paydesk ended while the request was on its way"
		op.Updated = db.now()
		if err := db.putOp(tx, op, nil); err != nil {
			return err
		}
	}
	return nil
}

// CopyTo copies every record of db into dst, bucket by bucket, key by key
// (kv.DB.CopyTo): moving a one-person cache (a file) into a team's
// database. Copying again finishes a copy cut short.
func (db *DB) CopyTo(ctx context.Context, dst *DB, progress func(bucket string, keys int)) error {
	if db.rel != nil || dst.rel != nil || db.bk == nil || dst.bk == nil {
		// The copy moves buckets: on the native engine they are not the
		// store, and what it wrote there would never be read.
		return errors.New("copy: key by key between kv stores only; the database is on the native engine (its typed tables)")
	}
	return db.bk.CopyTo(ctx, dst.bk, progress)
}

// CopyBulkTo fills dst, a PostgreSQL database on the kv engine holding no
// reservations yet, from the file db in bulk (kv.DB.CopyBulkTo).
func (db *DB) CopyBulkTo(ctx context.Context, dst *DB) error {
	if dst.rel != nil || db.bk == nil || dst.bk == nil {
		return errors.New("bulk copy: from a file into a PostgreSQL database on the kv engine only")
	}
	return db.bk.CopyBulkTo(ctx, dst.bk)
}

// CopyBulkInto fills the team's database at dsn, a new one, from the file
// db in bulk (CopyBulkTo, into its kv tables), then converts it to the
// native engine's typed tables as CopyInto does: the generator's way to a
// large database (store/storetest/gen), minutes where the key-by-key copy
// of a million reservations takes most of an hour.
func (db *DB) CopyBulkInto(ctx context.Context, dsn string) error {
	return copyIntoNew(dsn, "bulk copy", "", func(dst *DB) error { return db.CopyBulkTo(ctx, dst) })
}

// CopyInto copies every record of db (a cache file) into the team's
// database at dsn, then converts it to the native engine's typed tables.
// The copy moves buckets, so it writes the database's kv tables, which are
// the store only until its conversion begins: it goes into a database no
// paydesk of the native engine has opened yet (a new one, or one an older
// paydesk wrote). Cut short, it is finished by running it again, as long
// as the conversion has not begun.
func (db *DB) CopyInto(ctx context.Context, dsn string, progress func(bucket string, keys int)) error {
	return copyIntoNew(dsn, "copy", " (a paydesk opened it, or a copy into it was finished)", func(dst *DB) error {
		return db.CopyTo(ctx, dst, progress)
	})
}

// copyIntoNew runs copy into the kv tables of the database at dsn, which
// no paydesk of the native engine may have opened yet, then converts it
// to the typed tables; what names the copy in errors, why says how the
// database came to be on the native engine.
func copyIntoNew(dsn, what, why string, copy func(dst *DB) error) error {
	dst, err := Open(dsn, Options{kvEngine: true})
	if err != nil {
		return err
	}
	if dst.rel != nil {
		_ = dst.Close()
		return fmt.Errorf("%s: database %s is on the native engine already%s: %w; nothing was copied: copy into a new database", what, dst.path, why, ErrInUse)
	}
	err = copy(dst)
	if cerr := dst.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return err
	}
	conv, err := Open(dsn, Options{})
	if err != nil {
		return fmt.Errorf("%s: converting the copied records to tables: %w", what, err)
	}
	return conv.Close()
}

// WarmLists reads the lists' sketches and search-text blocks of a file
// once, in the background after the console's first frame
// (kv.DB.WarmLists); nothing on PostgreSQL.
func (db *DB) WarmLists(ctx context.Context) error {
	if db.bk == nil {
		return nil
	}
	return db.bk.WarmLists(ctx)
}

// Identity is who this process is on a team's database: the role it logged
// in as (session_user, which the database vouches for, unlike $USER) and
// whether that role may write. On a file it is ("", true).
func (db *DB) Identity(ctx context.Context) (role string, canWrite bool, err error) {
	if db.conn == nil {
		return "", true, nil
	}
	// The table every write of the engine in use goes to.
	table := "paydesk_kv"
	if db.rel != nil {
		table = "paydesk_reservations"
	}
	err = db.conn.Pool().QueryRow(ctx, `SELECT session_user::text, has_table_privilege(current_user, $1, 'INSERT')`, table).Scan(&role, &canWrite)
	if err != nil {
		return "", false, fmt.Errorf("database %s: who am I: %w", db.path, err)
	}
	return role, canWrite, nil
}
