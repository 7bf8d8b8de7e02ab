package access

import (
	"errors"
	"fmt"
	"strings"

	"github.com/shopspring/decimal"
)

// Action is something a role may be allowed to do. The server checks one
// before anything is journaled or sent; the console asks the same policy
// which keys to offer.
type Action string

// The actions the policy grants.
const (
	// Read: lists, show, exports, reports, the audit log.
	Read Action = "read"
	// Capture announces a shipment.
	Capture Action = "capture"
	// CancelRest cancels what remains of a reservation after a capture.
	CancelRest Action = "cancel-rest"
	// Cancel cancels a whole reservation (nothing captured yet).
	Cancel Action = "cancel"
	// Update changes a reservation's lines or addresses.
	Update Action = "update"
	// Refund refunds a capture or a gift card payment, up to the role's
	// limit.
	Refund Action = "refund"
	// Batch runs a shipment manifest.
	Batch Action = "batch"
	// Approve approves or denies another user's approval request.
	Approve Action = "approve"
	// Reconcile matches a bank statement.
	Reconcile Action = "reconcile"
	// Payment takes a new payment (gift card) or sends a test reservation.
	Payment Action = "payment"
	// Lookup asks the gateway what became of an operation or what it
	// holds (sync, ask): it reads only, but books what it learns.
	Lookup Action = "lookup"
	// Resolve closes an operation whose outcome is unknown by hand.
	Resolve Action = "resolve"
	// Import takes orders from a file or the webshop.
	Import Action = "import"
	// Redeliver sends pushes to the shop's endpoints again (the outbox):
	// no money moves, but the shop acts on what it is sent again.
	Redeliver Action = "resend-deliveries"
	// Users adds and removes users; Settings changes the configuration.
	Users    Action = "users"
	Settings Action = "settings"
)

// grants says which roles may do what; admin may do everything and is
// not listed. Warehouse may cancel only the rest of a partly shipped
// reservation: a whole cancel is the customer's business (agent).
var grants = map[Action][]Role{
	Read:       {Viewer, Warehouse, Agent, Finance},
	Capture:    {Warehouse},
	CancelRest: {Warehouse, Agent},
	Cancel:     {Agent},
	Update:     {Agent},
	Refund:     {Agent, Finance},
	Batch:      {Warehouse},
	Approve:    {Finance},
	Reconcile:  {Finance},
	Payment:    {Agent, Finance},
	Lookup:     {Warehouse, Agent, Finance},
	Resolve:    {Finance},
	Import:     {Warehouse, Agent},
	// The people who answer for a shop that missed a push: the agent (a
	// customer's order stuck) and finance (a capture or refund the shop's
	// books lack). The warehouse ships, it does not mend the shop's feed.
	Redeliver: {Agent, Finance},
}

// DefaultAgentRefundLimit is the agent's refund limit when the config
// names none: an agent refunds small amounts, finance the rest.
var DefaultAgentRefundLimit = decimal.RequireFromString("100.00")

// Policy is what each role may do: the grants above and the refund
// limits from the config. The zero Policy has the default limits.
type Policy struct {
	// RefundLimit is the most one refund of the role may be; a role not
	// in the map (or with a zero limit) has no limit of its own, except
	// the agent, whose limit defaults to DefaultAgentRefundLimit.
	RefundLimit map[Role]decimal.Decimal
}

// Limit is the role's refund limit and whether it has one.
func (pol Policy) Limit(r Role) (decimal.Decimal, bool) {
	if l, ok := pol.RefundLimit[r]; ok && l.IsPositive() {
		return l, true
	}
	if r == Agent {
		return DefaultAgentRefundLimit, true
	}
	return decimal.Zero, false
}

// Allows reports whether role r may do a.
func (pol Policy) Allows(r Role, a Action) bool {
	if r == Admin {
		return true
	}
	for _, g := range grants[a] {
		if g == r {
			return true
		}
	}
	return false
}

// Who lists the roles that may do a, least first (admin last).
func Who(a Action) []Role {
	out := append([]Role(nil), grants[a]...)
	return append(out, Admin)
}

// ErrDenied is a refusal of the policy: the role may not do the action
// (or not for that amount). Nothing was journaled or sent.
var ErrDenied = errors.New("not allowed for this role")

// DeniedError says who was refused what and which roles may do it.
type DeniedError struct {
	Principal Principal
	Action    Action
	// Amount and Limit are set for a refund above the role's limit.
	Amount, Limit decimal.Decimal
	// May are the roles that may do it.
	May []Role
}

func (e *DeniedError) Error() string {
	may := make([]string, len(e.May))
	for i, r := range e.May {
		may[i] = string(r)
	}
	who := fmt.Sprintf("%s (role %s)", e.Principal.User, e.Principal.Role)
	if e.Limit.IsPositive() {
		return fmt.Sprintf("%s may refund at most %s at once, not %s: %s may refund it (nothing was sent)",
			who, e.Limit.StringFixed(2), e.Amount.StringFixed(2), strings.Join(may, ", "))
	}
	return fmt.Sprintf("%s may not %s: only %s may (nothing was sent)", who, e.Action, strings.Join(may, ", "))
}

// Is makes errors.Is(err, ErrDenied) true.
func (e *DeniedError) Is(target error) bool { return target == ErrDenied }

// Check refuses p doing a with a *DeniedError naming who may; nil when
// allowed.
func (pol Policy) Check(p Principal, a Action) error {
	if pol.Allows(p.Role, a) {
		return nil
	}
	return &DeniedError{Principal: p, Action: a, May: Who(a)}
}

// CheckRefund refuses a refund of amount by p: the role must refund at
// all, and amount must be within its limit.
func (pol Policy) CheckRefund(p Principal, amount decimal.Decimal) error {
	if err := pol.Check(p, Refund); err != nil {
		return err
	}
	l, ok := pol.Limit(p.Role)
	if !ok || amount.LessThanOrEqual(l) {
		return nil
	}
	var may []Role
	for _, r := range Who(Refund) {
		if rl, has := pol.Limit(r); !has || amount.LessThanOrEqual(rl) {
			may = append(may, r)
		}
	}
	return &DeniedError{Principal: p, Action: Refund, Amount: amount, Limit: l, May: may}
}

// Alone is the principal of one person alone: no users configured, the
// console or a command run by the owner of the cache. It may do
// everything.
func Alone(user string) Principal {
	if user == "" {
		user = "unknown"
	}
	return Principal{User: user, Role: Admin, Via: Local}
}

// ParseLimits reads the [roles] table of the config: keys
// "<role>-refund-limit" with a decimal amount (text, "100.00"). An
// unknown key, role or a bad amount is an error naming it.
func ParseLimits(table map[string]string) (Policy, error) {
	var pol Policy
	for k, v := range table {
		name, ok := strings.CutSuffix(k, "-refund-limit")
		if !ok {
			return Policy{}, fmt.Errorf("roles.%s: unknown setting (known: <role>-refund-limit)", k)
		}
		r, err := ParseRole(name)
		if err != nil {
			return Policy{}, fmt.Errorf("roles.%s: %w", k, err)
		}
		d, err := decimal.NewFromString(strings.TrimSpace(v))
		if err != nil {
			return Policy{}, fmt.Errorf("roles.%s: %q is not an amount (write it as text, e.g. \"100.00\")", k, v)
		}
		if !d.IsPositive() || !d.Equal(d.Round(2)) {
			return Policy{}, fmt.Errorf("roles.%s: %s must be a positive amount with at most two decimals", k, v)
		}
		if pol.RefundLimit == nil {
			pol.RefundLimit = map[Role]decimal.Decimal{}
		}
		pol.RefundLimit[r] = d
	}
	return pol, nil
}
