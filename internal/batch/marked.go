package batch

import (
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"slices"
	"strings"

	"paydesk/store"
)

// Marked is the manifest of a bulk action on reservations marked in the
// console (keys): it is planned, journaled and run exactly as a file's
// manifest, so a run killed half way resumes its batch and sends no
// reservation twice.
//
// Its hash names the action and the set of keys (not their order, not
// today's remaining quantities): marking the same reservations again finds
// the same batch, and resumes it instead of starting another.
//
// For a cancel-rest every key is one row. For a capture every line of a
// reservation with units left is a row of those units; a reservation with
// none left is a row with its problem, which the pre-flight refuses.
func Marked(kind string, keys []string, lookup Lookup) (*Manifest, error) {
	if kind != store.BatchCapture && kind != store.BatchCancelRest {
		return nil, fmt.Errorf("bulk action %q: kind is neither %s nor %s", kind, store.BatchCapture, store.BatchCancelRest)
	}
	if len(keys) == 0 {
		return nil, errors.New("bulk action: no reservation is marked")
	}
	if len(keys) > MaxManifestRows {
		return nil, tooMany("marked list")
	}
	m := &Manifest{Hash: markedHash(kind, keys)}
	seen := make(map[string]bool, len(keys))
	for _, k := range keys {
		if seen[k] {
			continue
		}
		seen[k] = true
		line := len(seen)
		if kind == store.BatchCancelRest {
			m.Rows = append(m.Rows, Row{Line: line, Ref: k})
			continue
		}
		r, err := lookup(k)
		if errors.Is(err, store.ErrNotFound) {
			m.Rows = append(m.Rows, Row{Line: line, Ref: k}) // the pre-flight names it unknown
			continue
		}
		if err != nil {
			return nil, fmt.Errorf("bulk capture: reservation %s: %w", k, err)
		}
		n := len(m.Rows)
		for _, l := range r.Lines {
			if q := l.Remaining(); q > 0 {
				m.Rows = append(m.Rows, Row{Line: line, Ref: k, Article: l.ArticleNumber, Quantity: q})
			}
		}
		if len(m.Rows) == n {
			m.Rows = append(m.Rows, Row{Line: line, Ref: k,
				Problem: fmt.Sprintf("reservation %s (invoice %s): nothing remains to capture", r.ReservationNumber, r.Invoice)})
		}
	}
	return m, nil
}

// markedHash is the SHA-256 of the action and the sorted, distinct keys.
func markedHash(kind string, keys []string) string {
	sorted := slices.Compact(slices.Sorted(slices.Values(keys)))
	h := sha256.New()
	h.Write([]byte("paydesk marked " + kind + "\n"))
	h.Write([]byte(strings.Join(sorted, "\n")))
	return hex.EncodeToString(h.Sum(nil))
}
