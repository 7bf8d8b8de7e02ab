package access

import (
	"context"
	"testing"
)

func TestParseRole(t *testing.T) {
	for _, tc := range []struct {
		in   string
		want Role
		ok   bool
	}{
		{"viewer", Viewer, true}, {" Finance ", Finance, true}, {"ADMIN", Admin, true},
		{"root", "", false}, {"", "", false},
	} {
		got, err := ParseRole(tc.in)
		if (err == nil) != tc.ok || got != tc.want {
			t.Errorf("ParseRole(%q) = %q, %v; want %q ok=%v", tc.in, got, err, tc.want, tc.ok)
		}
	}
}

func TestContextCarriesPrincipal(t *testing.T) {
	if _, ok := From(context.Background()); ok {
		t.Fatal("a bare context carries a principal")
	}
	p := Principal{User: "alice", Role: Agent, Via: SSH, Key: "SHA256:abc"}
	got, ok := From(With(context.Background(), p))
	if !ok || got != p {
		t.Fatalf("From(With(p)) = %+v, %v", got, ok)
	}
	if s := got.String(); s != "alice (SHA256:abc)" {
		t.Fatalf("String() = %q", s)
	}
}
