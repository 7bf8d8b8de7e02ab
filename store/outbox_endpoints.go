package store

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"

	"paydesk/store/postgres"
)

// The store's forward endpoints: one set per store, kept in it (the
// file's meta bucket, paydesk_forward_to on PostgreSQL) and read by the
// push's own transaction when it records its deliveries. Before, each
// process recorded them with its own forward-to, so on a team's database
// the process that applied a push decided where it went.

// AuditForwardTo is the audit action of a change of the endpoints.
const AuditForwardTo = "forward-to"

// ErrForwardToDiffers is a process started with endpoints other than the
// store's (ForwardToMismatch says which).
var ErrForwardToDiffers = errors.New("forward-to differs from the store's")

// ForwardToMismatch is the error of a store opened with Options.ForwardTo
// other than the endpoints it keeps.
type ForwardToMismatch struct {
	Store, Given []string
	Path         string
}

func (m *ForwardToMismatch) Error() string {
	return fmt.Sprintf("forward-to: this process was given %s, but %s forwards every push to %s; "+
		"give the same, or none (the store's are used), or change the store's with "+
		"`paydesk forward-to set URL…` or `paydesk forward-to clear` (role admin)",
		shownSet(m.Given), m.Path, shownSet(m.Store))
}

func (m *ForwardToMismatch) Unwrap() error { return ErrForwardToDiffers }

// shownSet names endpoints for a message, passwords masked.
func shownSet(eps []string) string {
	if len(eps) == 0 {
		return "none"
	}
	shown := make([]string, len(eps))
	for i, ep := range eps {
		shown[i] = EndpointShown(ep)
	}
	return strings.Join(shown, ", ")
}

// NormalizeForwardTo checks every endpoint (CheckEndpoint) and drops the
// ones given twice, keeping the order.
func NormalizeForwardTo(eps []string) ([]string, error) {
	var out []string
	for _, ep := range eps {
		if err := CheckEndpoint(ep); err != nil {
			return nil, err
		}
		if !slices.Contains(out, ep) {
			out = append(out, ep)
		}
	}
	return out, nil
}

// sameSet says whether a and b hold the same endpoints, in any order.
func sameSet(a, b []string) bool {
	a, b = slices.Clone(a), slices.Clone(b)
	slices.Sort(a)
	slices.Sort(b)
	return slices.Equal(slices.Compact(a), slices.Compact(b))
}

// ForwardTo returns the endpoints the store delivers every push to.
func (db *DB) ForwardTo(ctx context.Context) ([]string, error) {
	var eps []string
	err := db.repo.View(ctx, func(tx RepoTx) error {
		var err error
		eps, err = tx.ForwardTo()
		return err
	})
	if err != nil {
		return nil, fmt.Errorf("forward-to of %s: %w", db.path, err)
	}
	return eps, nil
}

// SetForwardTo replaces the store's endpoints (none: pushes are no longer
// forwarded; the deliveries recorded stay), with an audit entry of who
// and how, in one commit. Pushes stored from then on are delivered to
// the new ones, whichever process stores them.
func (db *DB) SetForwardTo(ctx context.Context, eps []string, operator, via string) error {
	eps, err := NormalizeForwardTo(eps)
	if err != nil {
		return err
	}
	if operator == "" {
		operator = "unknown"
	}
	err = db.update(ctx, func(tx RepoTx, c *Change) error {
		before, err := tx.ForwardTo()
		if err != nil {
			return err
		}
		if err := tx.SetForwardTo(eps); err != nil {
			return err
		}
		c.Endpoints = true // a process with no worker yet starts one (internal/cli's startOutbox)
		reason := "was " + shownSet(before)
		if via != "" {
			reason += "; from the " + via
		}
		_, err = appendAudit(tx, AuditEntry{Time: db.now(), Operator: operator, Action: AuditForwardTo,
			Target: "the shop's push endpoints", Result: shownSet(eps), Reason: reason}, c)
		return err
	})
	if err != nil {
		return fmt.Errorf("forward-to of %s: %w", db.path, err)
	}
	return nil
}

// adoptForwardTo checks Options.ForwardTo against the store's endpoints
// at open: a store that keeps none takes them (the first process started
// with a forward-to sets the store's, audited); one that keeps others
// refuses with a *ForwardToMismatch. A role that may not write leaves a
// store without endpoints as it is: it records no deliveries.
func (db *DB) adoptForwardTo(ctx context.Context) error {
	given, err := NormalizeForwardTo(db.opts.ForwardTo)
	if err != nil || len(given) == 0 {
		return err
	}
	stored, err := db.ForwardTo(ctx)
	if err != nil {
		return err
	}
	if len(stored) > 0 {
		if !sameSet(stored, given) {
			return &ForwardToMismatch{Store: stored, Given: given, Path: db.path}
		}
		return nil
	}
	if db.opts.ForwardToReadOnly {
		return nil // read-only: the store keeps none, and records no deliveries
	}
	err = db.update(ctx, func(tx RepoTx, c *Change) error {
		stored, err := tx.ForwardTo()
		if err != nil {
			return err
		}
		if len(stored) > 0 { // another process took them meanwhile
			if !sameSet(stored, given) {
				return &ForwardToMismatch{Store: stored, Given: given, Path: db.path}
			}
			return nil
		}
		if err := tx.SetForwardTo(given); err != nil {
			return err
		}
		c.Endpoints = true
		_, err = appendAudit(tx, AuditEntry{Time: db.now(), Operator: "paydesk", Action: AuditForwardTo,
			Target: "the shop's push endpoints", Result: shownSet(given),
			Reason: "was none; the first forward-to a process was started with"}, c)
		return err
	})
	var mismatch *ForwardToMismatch
	switch {
	case errors.As(err, &mismatch):
		return mismatch
	case err != nil && db.shared && postgres.IsReadOnlyRole(err):
		return nil
	case err != nil:
		return fmt.Errorf("forward-to of %s: %w", db.path, err)
	}
	return nil
}
