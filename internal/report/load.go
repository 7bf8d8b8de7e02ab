package report

import (
	"fmt"
	"time"

	"paydesk/store"
)

// Source is what Load reads (*store.DB has it).
type Source interface {
	LoadReservationSummaries() ([]store.Summary, error)
	Reservation(ref string) (*store.Reservation, error)
	Transactions() ([]*store.Transaction, error)
	Ops(states ...store.OpState) ([]*store.PendingOp, error)
	Audit(limit int) ([]store.AuditEntry, error)
}

// Load reads what Build needs from the store and builds the report.
func Load(src Source, by By, from, to time.Time, loc *time.Location) (Report, error) {
	sums, err := src.LoadReservationSummaries()
	if err != nil {
		return Report{}, fmt.Errorf("report: reservations: %w", err)
	}
	in := Input{Summaries: sums, Reservations: map[string]*store.Reservation{}, Ops: map[uint64]*store.PendingOp{}, Reasons: map[uint64]string{}}
	for _, s := range sums {
		if !NeedsReservation(s) {
			continue
		}
		r, err := src.Reservation(s.Key)
		if err != nil {
			return Report{}, fmt.Errorf("report: reservation %s: %w", s.Key, err)
		}
		in.Reservations[s.Key] = r
	}
	if in.Transactions, err = src.Transactions(); err != nil {
		return Report{}, fmt.Errorf("report: transactions: %w", err)
	}
	ops, err := src.Ops()
	if err != nil {
		return Report{}, fmt.Errorf("report: journal: %w", err)
	}
	for _, op := range ops {
		in.Ops[op.ID] = op
	}
	audit, err := src.Audit(0)
	if err != nil {
		return Report{}, fmt.Errorf("report: audit: %w", err)
	}
	for _, e := range audit {
		if e.OpID != 0 && e.Reason != "" && e.Completes == 0 {
			in.Reasons[e.OpID] = e.Reason
		}
	}
	return Build(in, by, from, to, loc), nil
}
