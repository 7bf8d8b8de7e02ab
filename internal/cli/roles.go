package cli

import (
	"fmt"
	"strings"
	"time"

	"github.com/shopspring/decimal"
	"github.com/spf13/pflag"

	"paydesk/internal/access"
	"paydesk/internal/ops"
)

// team is who may do what on this machine: the refund limits per role
// ([roles] in the config), the four-eyes threshold and how long a request
// waits (approval-over, approval-ttl), and the role of each user of this
// machine ([users]: OS user → role), for the console and the commands run
// through its socket. No [users] is one person alone: everyone is admin.
type team struct {
	Policy       access.Policy
	ApprovalOver decimal.Decimal
	ApprovalTTL  time.Duration
	Users        map[string]access.Role
}

// team reads the team's settings; a wrong value is an error naming it.
func (l layers) team() (team, error) {
	var t team
	limits := map[string]string{}
	for k, v := range l.file {
		switch {
		case strings.HasPrefix(k, "roles."):
			limits[strings.TrimPrefix(k, "roles.")] = v
		case strings.HasPrefix(k, "users."):
			name := strings.TrimPrefix(k, "users.")
			r, err := access.ParseRole(v)
			if err != nil {
				return team{}, fmt.Errorf("users.%s: %w", name, err)
			}
			if t.Users == nil {
				t.Users = map[string]access.Role{}
			}
			t.Users[name] = r
		}
	}
	pol, err := access.ParseLimits(limits)
	if err != nil {
		return team{}, err
	}
	t.Policy = pol
	if v := strings.TrimSpace(l.value("approval-over")); v != "" {
		d, err := decimal.NewFromString(v)
		if err != nil || d.IsNegative() || !d.Equal(d.Round(2)) {
			return team{}, fmt.Errorf("approval-over %q: give an amount such as \"500.00\" (0: no approvals)", v)
		}
		t.ApprovalOver = d
	}
	if v := strings.TrimSpace(l.value("approval-ttl")); v != "" {
		d, err := time.ParseDuration(v)
		if err != nil || d < time.Minute {
			return team{}, fmt.Errorf("approval-ttl %q: give a duration of a minute or more, such as \"72h\"", v)
		}
		t.ApprovalTTL = d
	}
	return t, nil
}

// roleOf is the role of an OS user: the [users] entry, else admin for the
// owner's own user and for everyone when no users are configured (one
// person alone), else viewer: a user the config does not name only reads.
func (t team) roleOf(name, owner string) access.Role {
	if r, ok := t.Users[name]; ok {
		return r
	}
	if len(t.Users) == 0 || name == owner {
		return access.Admin
	}
	return access.Viewer
}

// principal is the OS user name acting here, with its role.
func (t team) principal(name, owner string, via access.Via) access.Principal {
	return access.Principal{User: name, Role: t.roleOf(name, owner), Via: via}
}

// apply puts the team's rules into an operations config.
func (t team) apply(oc *ops.Config) {
	oc.Policy, oc.ApprovalOver, oc.ApprovalTTL = t.Policy, t.ApprovalOver, t.ApprovalTTL
}

// teamFlags are the console's and paydesk serve's four-eyes flags (the
// config's approval-over and approval-ttl).
func teamFlags(fs *pflag.FlagSet) {
	fs.String("approval-over", "", "a refund above this amount waits for a second person's approval (paydesk approvals); 0 or unset: never")
	fs.String("approval-ttl", "", "how long an approval request may be approved: a duration (default 72h)")
}
