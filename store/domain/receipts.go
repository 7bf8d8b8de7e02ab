package domain

import (
	"slices"
	"time"
)

// Receipts of a push: the store keeps a push once and records each
// repeated receipt against the push stored first (store/receipts.go has
// the rules); these are the values the engines keep.

// MaxPushReceipts is how many repeated receipts of one push are kept in
// full; older ones are counted only.
const MaxPushReceipts = 20

// PushReceipt is one receipt of a push.
type PushReceipt struct {
	At         time.Time `json:"at"`
	RemoteAddr string    `json:"remote,omitempty"`
	Signature  string    `json:"sig,omitempty"` // the verdict, one of the Signature* values
}

// PushRef names a stored push for its receipts: its ID and its identity
// (key and content hash). An engine keys the receipts by either.
type PushRef struct {
	ID   uint64
	Key  string
	Hash [32]byte
}

// RefOf is the PushRef of a stored push.
func RefOf(p *PushRecord) PushRef { return PushRef{ID: p.ID, Key: p.Key, Hash: p.Hash} }

// PushRepeats is what an engine keeps of a push's repeated receipts.
type PushRepeats struct {
	Count  int64         `json:"n"`      // repeats ever recorded
	First  time.Time     `json:"first"`  // the first repeat
	Last   time.Time     `json:"last"`   // the latest repeat
	Recent []PushReceipt `json:"recent"` // the newest repeats, oldest first, at most MaxPushReceipts
}

// Add records r, keeping the newest keep receipts (0: all).
func (p *PushRepeats) Add(r PushReceipt, keep int) {
	if p.Count == 0 || r.At.Before(p.First) {
		p.First = r.At
	}
	if r.At.After(p.Last) || p.Count == 0 {
		p.Last = r.At
	}
	p.Count++
	p.Recent = append(p.Recent, r)
	if keep > 0 && len(p.Recent) > keep {
		p.Recent = slices.Delete(p.Recent, 0, len(p.Recent)-keep)
	}
}

// ReceiptsTx is what an engine keeps of repeated receipts.
type ReceiptsTx interface {
	// AddPushReceipt records one repeated receipt of the stored push ref,
	// keeping the newest keep in full (PushRepeats.add's rule).
	AddPushReceipt(ref PushRef, r PushReceipt, keep int) error
	// PushRepeatsOf returns the repeats recorded of each of refs, by push
	// ID; a push never repeated is not in the map.
	PushRepeatsOf(refs []PushRef) (map[uint64]*PushRepeats, error)
}
