package reconcile

import (
	"testing"
	"time"

	"paydesk/store"
)

// An item is open while its newest entry of the last week is not a match.
func TestOpenItems(t *testing.T) {
	now := time.Date(2026, 11, 25, 12, 0, 0, 0, time.UTC)
	e := func(target, result string, ago time.Duration) store.AuditEntry {
		return store.AuditEntry{Action: ItemAction, Target: target, Result: result, Time: now.Add(-ago)}
	}
	entries := []store.AuditEntry{ // newest first
		e("K1", ItemMatched, time.Hour),
		e("K2", "unknown", 2*time.Hour),
		{Action: "reconcile", Target: "a.csv", Time: now.Add(-2 * time.Hour)},
		e("K1", "differs", 3*time.Hour),
		e("K3", "unsettled", 4*time.Hour),
		e("K2", ItemMatched, 5*time.Hour), // matched before, open again since
		e("K4", "unknown", 8*24*time.Hour),
	}
	got := OpenItems(entries, now)
	var targets []string
	for _, it := range got {
		targets = append(targets, it.Target)
	}
	if len(targets) != 2 || targets[0] != "K2" || targets[1] != "K3" {
		t.Fatalf("open items %v, want [K2 K3]", targets)
	}
}
