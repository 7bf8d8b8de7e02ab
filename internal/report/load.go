package report

import (
	"context"
	"fmt"
	"sort"
	"time"

	"paydesk/store"
)

// Source is what Load reads (*store.DB has it).
type Source interface {
	LoadReservationSummaries(ctx context.Context) ([]store.Summary, error)
	Reservation(ctx context.Context, ref string) (*store.Reservation, error)
	Transactions(ctx context.Context) ([]*store.Transaction, error)
	Ops(ctx context.Context, states ...store.OpState) ([]*store.PendingOp, error)
	Audit(ctx context.Context, limit int) ([]store.AuditEntry, error)
}

// Load reads what Build needs from the store and builds the report.
func Load(ctx context.Context, src Source, by By, from, to time.Time, loc *time.Location) (Report, error) {
	sums, err := src.LoadReservationSummaries(ctx)
	if err != nil {
		return Report{}, fmt.Errorf("report: reservations: %w", err)
	}
	in := Input{Summaries: sums, Reservations: map[string]*store.Reservation{}, Ops: map[uint64]*store.PendingOp{}, Reasons: map[uint64]string{}}
	for _, s := range sums {
		if !NeedsReservation(s) {
			continue
		}
		r, err := src.Reservation(ctx, s.Key)
		if err != nil {
			return Report{}, fmt.Errorf("report: reservation %s: %w", s.Key, err)
		}
		in.Reservations[s.Key] = r
	}
	if in.Transactions, err = src.Transactions(ctx); err != nil {
		return Report{}, fmt.Errorf("report: transactions: %w", err)
	}
	ops, err := src.Ops(ctx)
	if err != nil {
		return Report{}, fmt.Errorf("report: journal: %w", err)
	}
	for _, op := range ops {
		in.Ops[op.ID] = op
	}
	audit, err := src.Audit(ctx, 0)
	if err != nil {
		return Report{}, fmt.Errorf("report: audit: %w", err)
	}
	for _, e := range audit {
		if e.OpID != 0 && e.Reason != "" && e.Completes == 0 {
			in.Reasons[e.OpID] = e.Reason
		}
	}
	in.Settlements = Settlements(audit)
	return Build(in, by, from, to, loc), nil
}

// The audit actions reconcile records a statement's payouts with: one
// entry for what a payout paid out and one for the fees it kept, both
// naming the payout reference and, as their result, its day.
const (
	AuditSettlement    = "settlement"
	AuditSettlementFee = "settlement-fee"
)

// Settlements reads the payouts reconcile recorded in the audit log. A
// statement reconciled again records its payouts again: the newest entry
// of a payout reference (and currency) is the one that counts, so a day is
// never settled twice.
func Settlements(audit []store.AuditEntry) []Settlement {
	type id struct{ ref, cur string }
	type seen struct {
		entry uint64
		st    Settlement
	}
	gross, fees := map[id]seen{}, map[id]seen{}
	for _, e := range audit {
		var m map[id]seen
		switch e.Action {
		case AuditSettlement:
			m = gross
		case AuditSettlementFee:
			m = fees
		default:
			continue
		}
		k := id{e.Target, e.Currency}
		if old, ok := m[k]; ok && old.entry > e.ID {
			continue
		}
		m[k] = seen{e.ID, Settlement{Reference: e.Target, Currency: e.Currency, Day: e.Result, Gross: e.Amount}}
	}
	out := make([]Settlement, 0, len(gross))
	for k, g := range gross {
		st := g.st
		if f, ok := fees[k]; ok {
			st.Fees = f.st.Gross
		}
		out = append(out, st)
	}
	sort.Slice(out, func(i, j int) bool {
		if out[i].Day != out[j].Day {
			return out[i].Day < out[j].Day
		}
		return out[i].Reference+out[i].Currency < out[j].Reference+out[j].Currency
	})
	return out
}
