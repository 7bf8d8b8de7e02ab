package ops

import (
	"context"
	"errors"
	"fmt"
	"time"

	"paydesk/internal/access"
	"paydesk/internal/gwsync"
)

// ErrCannotSync: the gateway or the store given to the Service cannot be
// asked what the gateway holds (a test double without lookups).
var ErrCannotSync = errors.New("this gateway connection cannot look up invoices")

// Sync asks the gateway what it holds for the open and recent reservations
// and transactions (made since since; zero: the last 30 days) and books
// what paydesk was not told — a capture, refund or cancel made in the
// gateway's back office, a push that never arrived — as the push would
// have been, with its provenance. It sends nothing that changes money: a
// lookup only reads. The console, `paydesk listen` (on a schedule) and
// `paydesk sync` call it.
func (s *Service) Sync(ctx context.Context, since time.Time) (gwsync.Result, error) {
	if err := s.Check(ctx, access.Lookup); err != nil {
		return gwsync.Result{}, fmt.Errorf("sync: %w", err)
	}
	gw, ok := s.cfg.Gateway.(gwsync.Lookup)
	if !ok {
		return gwsync.Result{}, fmt.Errorf("sync: %w", ErrCannotSync)
	}
	st, ok := s.cfg.Store.(gwsync.Store)
	if !ok {
		return gwsync.Result{}, fmt.Errorf("sync: %w", ErrCannotSync)
	}
	return gwsync.Run(ctx, st, gw, gwsync.Options{Since: since, Now: s.cfg.Now, Operator: s.cfg.Operator})
}
