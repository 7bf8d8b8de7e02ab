package store

import "testing"

func TestPushOutcome(t *testing.T) {
	tests := []struct {
		name                          string
		rejected, applied, duplicate  bool
		ignored, reason, word, detail string
	}{
		{name: "applied", applied: true, word: OutcomeApplied},
		{name: "repeats the stored status", ignored: Confirms, word: OutcomeConfirmed},
		{name: "duplicate flag", duplicate: true, ignored: "duplicate of push 12", word: OutcomeDuplicate, detail: "of push 12"},
		{name: "duplicate stored", ignored: "duplicate of push 7", word: OutcomeDuplicate, detail: "of push 7"},
		{name: "final already stored", ignored: ignoredFinal, word: OutcomeIgnored, detail: ignoredFinal},
		{name: "older", ignored: ignoredOlder, word: OutcomeIgnored, detail: ignoredOlder},
		{name: "rejected wins", rejected: true, applied: true, reason: "signature: stale timestamp", word: OutcomeRejected, detail: "signature: stale timestamp"},
		{name: "nothing said", word: OutcomeStored},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			w, d := PushOutcome(tt.rejected, tt.applied, tt.duplicate, tt.ignored, tt.reason)
			if w != tt.word || d != tt.detail {
				t.Fatalf("PushOutcome = %q, %q; want %q, %q", w, d, tt.word, tt.detail)
			}
		})
	}
}
