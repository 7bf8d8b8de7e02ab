package ui

import (
	"slices"
	"testing"

	"paydesk/store"
)

// TestMergeKeepsReceipts: changes gathered into one keep their repeated
// receipts — the keys of both, or none (the whole log) when one did not
// name them — so a repeat that came with an audit entry still shows.
func TestMergeKeepsReceipts(t *testing.T) {
	for _, tc := range []struct {
		name     string
		a, b     store.Change
		receipts int
		keys     []string
		wholeLog bool
	}{
		{"audit then repeat", store.Change{Audit: true}, store.Change{Receipts: 1, ReceiptKeys: []string{"K"}}, 1, []string{"K"}, false},
		{"repeat then audit", store.Change{Receipts: 1, ReceiptKeys: []string{"K"}}, store.Change{Audit: true}, 1, []string{"K"}, false},
		{"two repeats", store.Change{Receipts: 1, ReceiptKeys: []string{"K"}}, store.Change{Receipts: 2, ReceiptKeys: []string{"K", "L"}}, 3, []string{"K", "L"}, false},
		{"one unnamed", store.Change{Receipts: 1, ReceiptKeys: []string{"K"}}, store.Change{Receipts: 70}, 71, nil, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := merge(tc.a, tc.b)
			if got.Receipts != tc.receipts || !slices.Equal(got.ReceiptKeys, tc.keys) || (got.ReceiptKeys == nil) != tc.wholeLog {
				t.Errorf("merged: %d receipts, keys %v; want %d, %v", got.Receipts, got.ReceiptKeys, tc.receipts, tc.keys)
			}
		})
	}
}
