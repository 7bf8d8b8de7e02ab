package cli

import (
	"slices"
	"testing"
)

// The config's forward-to is a list kept as comma-separated text: a comma
// inside a URL (a query) must not cut it in two.
func TestSplitEndpoints(t *testing.T) {
	tests := []struct {
		in   string
		want []string
	}{
		{"", nil},
		{"https://shop.example/push", []string{"https://shop.example/push"}},
		{"https://a.example/push,https://b.example/push", []string{"https://a.example/push", "https://b.example/push"}},
		{"https://a.example/push, http://b.example/push ", []string{"https://a.example/push", "http://b.example/push"}},
		{"https://shop.example/push?tags=a,b", []string{"https://shop.example/push?tags=a,b"}},
		{"https://shop.example/push?tags=a,,b,https://b.example/x?c=1,2", []string{"https://shop.example/push?tags=a,,b", "https://b.example/x?c=1,2"}},
		{"shop.example/push", []string{"shop.example/push"}}, // refused later by CheckEndpoint, named
	}
	for _, tt := range tests {
		if got := splitEndpoints(tt.in); !slices.Equal(got, tt.want) {
			t.Errorf("splitEndpoints(%q) = %q, want %q", tt.in, got, tt.want)
		}
	}
}
