package domain

import "strings"

// Push outcomes: the one set of words the push log, its export and the
// listener's output use for what a push did. A push that repeats the
// status already stored (the usual case: the response booked it first) is
// "confirmed", never "ignored".
const (
	OutcomeApplied   = "applied"   // it changed the cache
	OutcomeConfirmed = "confirmed" // it repeats the status already stored
	OutcomeDuplicate = "duplicate" // the same push was stored before
	OutcomeIgnored   = "ignored"   // older news than what is stored; changed nothing
	OutcomeRejected  = "rejected"  // it failed a check and changed nothing
	OutcomeStored    = "stored"    // kept; nothing it could apply to
)

// PushOutcome names what a push did, and the detail behind the word
// ("" when the word says it all).
func PushOutcome(rejected, applied, duplicate bool, ignored, reason string) (word, detail string) {
	switch {
	case rejected:
		return OutcomeRejected, reason
	case applied:
		return OutcomeApplied, ""
	case duplicate || strings.HasPrefix(ignored, "duplicate of push"):
		return OutcomeDuplicate, strings.TrimPrefix(ignored, "duplicate ")
	case ignored == Confirms:
		return OutcomeConfirmed, ""
	case ignored != "":
		return OutcomeIgnored, ignored
	}
	return OutcomeStored, ""
}

// Outcome names what the stored push did.
func (p *PushRecord) Outcome() (word, detail string) {
	return PushOutcome(p.Rejected, p.Applied, false, p.Ignored, p.Reason)
}

// Outcome names what ApplyPush did with a push.
func (r ApplyResult) Outcome() (word, detail string) {
	return PushOutcome(false, r.Applied, r.Duplicate, r.Ignored, "")
}

// Confirms is PushRecord.Ignored for a push that repeats the final status
// already stored (usually from the response to the request): the normal
// case, which a push log shows as a confirmation, not as a refusal.
const Confirms = "confirms the status already stored"
