package reconcile

import (
	"time"

	"paydesk/store"
)

// The audit log keeps what a reconciliation did not match: one
// ItemAction entry per statement line or booked transaction, its target
// the transaction key (else the invoice, else the payout reference) and
// its result the outcome. A later run that matches a target still open
// records one more entry for it, with the result ItemMatched, which
// closes it.
const (
	ItemAction  = "reconcile-item"
	ItemMatched = "matched"
	// ItemDays is how long an item stays open when nothing matches it.
	ItemDays = 7
	// ItemScan bounds the newest audit entries read for the open items.
	ItemScan = 2000
)

// OpenItems are the items still open at now, newest first: per target the
// newest entry of the last ItemDays, unless a later run matched it.
// entries is the audit log newest first, as the store reads it.
func OpenItems(entries []store.AuditEntry, now time.Time) []store.AuditEntry {
	var out []store.AuditEntry
	seen := map[string]bool{}
	for _, e := range entries {
		if e.Action != ItemAction || now.Sub(e.Time) > ItemDays*24*time.Hour || seen[e.Target] {
			continue
		}
		seen[e.Target] = true
		if e.Result != ItemMatched {
			out = append(out, e)
		}
	}
	return out
}
