package store

import (
	"context"
	"errors"
	"fmt"

	"paydesk/store/domain"
)

// Audit returns up to limit audit entries, newest first (0: all), each with
// the latest result its completions recorded; the completions themselves
// are folded in, not listed.
func (db *DB) Audit(ctx context.Context, limit int) ([]AuditEntry, error) {
	var out []AuditEntry
	err := db.read(ctx, func(tx RepoTx) error {
		latest := map[uint64]string{} // entry → its newest completion's result
		var bad error
		err := tx.WalkAudit(true, func(_ uint64, e *AuditEntry, _ []byte, err error) bool {
			if err != nil {
				bad = err
				return false
			}
			if e.Completes != 0 {
				if _, seen := latest[e.Completes]; !seen {
					latest[e.Completes] = e.Result // read newest first: the first seen is the latest
				}
				return true
			}
			if r, ok := latest[e.ID]; ok {
				e.Result = r
				delete(latest, e.ID)
			}
			out = append(out, *e)
			return limit <= 0 || len(out) < limit
		})
		if err != nil {
			return err
		}
		return bad
	})
	if err != nil {
		return nil, fmt.Errorf("audit log: %w", err)
	}
	return out, nil
}

// AuditCheck is what VerifyAudit found.
type AuditCheck struct {
	Entries   int    // entries read
	ChainFrom uint64 // the first entry of the chain (entries before it predate it)
	Last      uint64 // the newest entry
	// KeyedFrom is the first keyed entry (0: none). The Unkeyed entries
	// before it were written before the log was keyed: the keyed entries
	// after them anchor them (they cannot be edited or removed without it
	// showing) but nothing proves who wrote them.
	KeyedFrom uint64
	Unkeyed   int
	// NoKey: this paydesk has no audit key, so no entry's key was checked.
	NoKey    bool
	Problems []string
}

// OK reports a log with no gap, no broken link and no entry added behind
// paydesk's back (as far as the key can tell: see KeyedFrom, NoKey).
func (a AuditCheck) OK() bool { return len(a.Problems) == 0 }

// VerifyAudit walks the audit log from its first entry: every ID follows
// the one before (a gap is a removed entry), every entry carries the hash
// of the one before as stored (a mismatch is an entry edited or removed
// before it), and the log's sequence ends at its last entry (else entries
// at the end were removed). Entries written before the chain existed (no
// link) are accepted at the start only. Every entry from the first keyed
// one on must be keyed with this paydesk's audit key (auditkey.go): one
// that is not, or whose MAC does not hold, was written by someone without
// the key — added behind paydesk's back — and is named.
func (db *DB) VerifyAudit(ctx context.Context) (AuditCheck, error) {
	a := AuditCheck{NoKey: db.audit == nil}
	err := db.read(ctx, func(tx RepoTx) error {
		var prevID uint64
		var prev []byte
		err := tx.WalkAudit(false, func(id uint64, e *AuditEntry, v []byte, err error) bool {
			a.Entries++
			if err != nil {
				a.Problems = append(a.Problems, fmt.Sprintf("entry %d cannot be read: %v", id, errors.Unwrap(err)))
			}
			if prevID != 0 && id != prevID+1 {
				a.Problems = append(a.Problems, fmt.Sprintf("entries %d–%d are missing (removed)", prevID+1, id-1))
			}
			switch {
			case e.Prev == "" && a.ChainFrom != 0:
				a.Problems = append(a.Problems, fmt.Sprintf("entry %d has no link to the entry before it (written outside paydesk)", id))
			case e.Prev == "":
				// the log's first entry, or one from before the chain began
			case prevID == 0:
				a.ChainFrom = id
				a.Problems = append(a.Problems, fmt.Sprintf("entries before %d are missing (removed)", id))
			default:
				if a.ChainFrom == 0 {
					a.ChainFrom = prevID
				}
				if e.Prev != domain.ChainHash(prev) && id == prevID+1 {
					a.Problems = append(a.Problems, fmt.Sprintf("entry %d is not as it was written (edited)", prevID))
				}
			}
			a.checkKey(db.audit, id, v, *e)
			prevID, prev = id, append(prev[:0], v...)
			return true
		})
		if err != nil {
			return err
		}
		a.Last = prevID
		seq, err := tx.AuditSequence()
		if err != nil {
			return err
		}
		if seq > prevID {
			a.Problems = append(a.Problems, fmt.Sprintf("entries %d–%d at the end are missing (removed)", prevID+1, seq))
		}
		return nil
	})
	if err != nil {
		return a, fmt.Errorf("verify the audit log: %w", err)
	}
	return a, nil
}

// checkKey notes what entry id's key says.
func (a *AuditCheck) checkKey(keys *auditKeyring, id uint64, v []byte, e AuditEntry) {
	state := keys.check(v, e)
	if state != unkeyed && a.KeyedFrom == 0 {
		a.KeyedFrom = id
	}
	switch state {
	case unkeyed:
		if a.KeyedFrom == 0 {
			a.Unkeyed++ // before keying: anchored by the keyed entries after it
			return
		}
		a.Problems = append(a.Problems, fmt.Sprintf("entry %d is forged: not keyed, written outside paydesk after the log was keyed (%s %s %s)",
			id, e.Action, e.Target, e.Result))
	case forged:
		a.Problems = append(a.Problems, fmt.Sprintf("entry %d is forged: its key does not match, written or edited outside paydesk (%s %s %s)",
			id, e.Action, e.Target, e.Result))
	case otherKey:
		a.Problems = append(a.Problems, fmt.Sprintf("entry %d is keyed with another key (%s), not this paydesk's (%s): written with another secret key, or forged; verify with the secret it was written with",
			id, e.KeyID, keys.id))
	}
}
