package access

import (
	"context"
	"fmt"
	"strings"
)

// Role is what a user may do. The roles follow the gateway family's own
// back office, which grants per action (view, capture, refund, approve).
type Role string

// The roles, from least to most.
const (
	// Viewer reads: lists, show, exports, reports.
	Viewer Role = "viewer"
	// Warehouse captures shipments, cancels the rest, runs batches.
	Warehouse Role = "warehouse"
	// Agent cancels, updates and refunds up to a limit.
	Agent Role = "agent"
	// Finance refunds, approves and reconciles.
	Finance Role = "finance"
	// Admin manages users and settings and may do everything.
	Admin Role = "admin"
)

// Roles lists every role, least first.
var roles = []Role{Viewer, Warehouse, Agent, Finance, Admin}

// Roles returns every role, least first.
func Roles() []Role { return append([]Role(nil), roles...) }

// ParseRole reads a role name (case-insensitive).
func ParseRole(s string) (Role, error) {
	r := Role(strings.ToLower(strings.TrimSpace(s)))
	for _, k := range roles {
		if r == k {
			return r, nil
		}
	}
	names := make([]string, len(roles))
	for i, k := range roles {
		names[i] = string(k)
	}
	return "", fmt.Errorf("role %q: must be one of %s", s, strings.Join(names, ", "))
}

// Via is how a principal reached paydesk.
type Via string

// The ways in.
const (
	// Local is the process itself: the console or a command run directly.
	Local Via = "local"
	// Socket is a command run through the cache's owner on this machine.
	Socket Via = "socket"
	// SSH is a console or command over SSH.
	SSH Via = "ssh"
)

// Principal is who acts: the name the journal and the audit log record,
// the role the server enforces, and how they came in.
type Principal struct {
	User string
	Role Role
	Via  Via
	// Key is the SSH public key's SHA256 fingerprint; "" otherwise.
	Key string
}

// String names the principal for the audit log: the user, and the key's
// fingerprint when they came over SSH.
func (p Principal) String() string {
	if p.Key != "" {
		return p.User + " (" + p.Key + ")"
	}
	return p.User
}

type ctxKey struct{}

// With returns ctx carrying p.
func With(ctx context.Context, p Principal) context.Context {
	return context.WithValue(ctx, ctxKey{}, p)
}

// From returns the principal ctx carries, and whether it carries one.
func From(ctx context.Context) (Principal, bool) {
	p, ok := ctx.Value(ctxKey{}).(Principal)
	return p, ok
}
