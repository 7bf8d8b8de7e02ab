package cli

import (
	"slices"
	"strings"
	"testing"
)

// TestPartialRefundsWithASpace: "--partial-refunds B" works as
// "--partial-refunds=B" does, and the flag alone still means B.
func TestPartialRefundsWithASpace(t *testing.T) {
	for _, tc := range []struct {
		args []string
		want string // in stderr: how far the command got
	}{
		// B reaches the merchant settings; the sandbox then asks for its key.
		{[]string{"sandbox", "--partial-refunds", "B"}, "--website-key"},
		{[]string{"sandbox", "--partial-refunds=B"}, "--website-key"},
		{[]string{"sandbox", "--partial-refunds"}, "--website-key"},
		// A reaches the merchant settings too, which refuse it by name.
		{[]string{"sandbox", "--partial-refunds", "A"}, "only voucher provider B offers partial refunds, not A"},
	} {
		code, _, errs := run(t, t.TempDir(), tc.args...)
		if code != 2 || !strings.Contains(errs, tc.want) {
			t.Errorf("%v: exit %d, stderr %q, want %q", tc.args, code, errs, tc.want)
		}
	}
	for _, tc := range []struct{ in, want []string }{
		{[]string{"--partial-refunds", "B", "--demo"}, []string{"--partial-refunds=B", "--demo"}},
		{[]string{"--partial-refunds", "b,c"}, []string{"--partial-refunds=b,c"}},
		{[]string{"--partial-refunds", "--demo"}, []string{"--partial-refunds", "--demo"}},
		{[]string{"--partial-refunds", "capture"}, []string{"--partial-refunds", "capture"}},
		{[]string{"--", "--partial-refunds", "B"}, []string{"--", "--partial-refunds", "B"}},
		{[]string{"--gift-card-codes", "B"}, []string{"--gift-card-codes", "B"}},
	} {
		if got := joinOptionalValues(tc.in); !slices.Equal(got, tc.want) {
			t.Errorf("%q: %q, want %q", tc.in, got, tc.want)
		}
	}
}

// TestMistypedCommandSuggests: a mistyped command, on the root or in a
// group, is a usage error naming the nearest command; a group alone still
// shows its help.
func TestMistypedCommandSuggests(t *testing.T) {
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"reservatons"}, `unknown command "reservatons" for "paydesk"; did you mean "reservations"`},
		{[]string{"shwo", "R-1"}, `did you mean "show"`},
		{[]string{"giftcard", "pya", "5"}, `unknown command "pya" for "paydesk giftcard"; did you mean "pay"`},
		{[]string{"db", "mgrate"}, `did you mean "migrate"`},
		{[]string{"nonsense"}, `unknown command "nonsense" for "paydesk"`},
	} {
		code, _, errs := run(t, t.TempDir(), tc.args...)
		if code != 2 || !strings.Contains(strings.ToLower(errs), strings.ToLower(tc.want)) {
			t.Errorf("%v: exit %d, stderr %q, want %q", tc.args, code, errs, tc.want)
		}
	}
	if code, out, _ := run(t, t.TempDir(), "giftcard"); code != 0 || !strings.Contains(out, "pay AMOUNT") {
		t.Errorf("paydesk giftcard: exit %d\n%s", code, out)
	}
}
