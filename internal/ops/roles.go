package ops

import (
	"context"
	"fmt"

	"github.com/shopspring/decimal"

	"paydesk/internal/access"
)

// Roles are enforced here, where every operation runs, before anything is
// journaled or sent: the console only hides what the same policy refuses.

// Principal is who the operation runs as: the principal ctx carries (a
// session or command of the server), else the Service's
// (Config.Principal), else one person alone, who may do everything.
func (s *Service) Principal(ctx context.Context) access.Principal {
	if p, ok := access.From(ctx); ok && p.Role != "" {
		return p
	}
	if s.cfg.Principal.Role != "" {
		return s.cfg.Principal
	}
	return access.Alone(s.cfg.Operator)
}

// Policy is the role policy the service enforces.
func (s *Service) Policy() access.Policy { return s.cfg.Policy }

// ApprovalOver is the amount above which a refund waits for a second
// person; zero: never.
func (s *Service) ApprovalOver() decimal.Decimal { return s.cfg.ApprovalOver }

// Allows reports whether the service's principal may do a (the console
// asks it to offer or grey a key).
func (s *Service) Allows(ctx context.Context, a access.Action) bool {
	return s.cfg.Policy.Allows(s.Principal(ctx).Role, a)
}

// Check refuses an action the principal may not do, naming the roles that
// may (an *access.DeniedError, errors.Is access.ErrDenied). Commands that
// run outside the operations here (batch, reconcile, import) ask it first.
func (s *Service) Check(ctx context.Context, a access.Action) error {
	if err := s.cfg.Policy.Check(s.Principal(ctx), a); err != nil {
		return fmt.Errorf("%s: %w", a, err)
	}
	return nil
}
