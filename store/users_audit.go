package store

import (
	"context"
	"fmt"
	"time"
)

// The audit log records every change to who may reach paydesk and with
// which role, in the transaction that makes it: an admin's changes to who
// may move money are as accountable as the money's moves.

// auditUser writes the audit entry of a change to the user called name.
func auditUser(tx RepoTx, c *Change, at time.Time, by, action, name, result string) error {
	if by == "" {
		by = "unknown"
	}
	_, err := appendAudit(tx, AuditEntry{Time: at, Operator: by, Action: action, Target: "user " + name, Result: result}, c)
	if err != nil {
		return fmt.Errorf("user %s: audit: %w", name, err)
	}
	return nil
}

// SetUserRole gives the user called name the role role, by the user by
// (for the audit log); ErrNoUser when there is none. Setting the role a
// user has already changes nothing and is not audited.
func (db *DB) SetUserRole(ctx context.Context, name, role, by string) (changed bool, err error) {
	err = db.update(ctx, func(tx RepoTx, c *Change) error {
		changed = false // a transaction may run again
		u, err := tx.User(name)
		if err != nil {
			return err
		}
		if u == nil {
			return fmt.Errorf("user %q: %w", name, ErrNoUser)
		}
		if u.Role == role {
			return nil
		}
		old := u.Role
		u.Role = role
		if err := checkUser(u); err != nil {
			return err
		}
		if err := tx.PutUser(u); err != nil {
			return err
		}
		changed = true
		return auditUser(tx, c, db.now(), by, "user-role", name, fmt.Sprintf("role %s, was %s (key %s)", role, old, u.Fingerprint))
	})
	return changed, err
}
