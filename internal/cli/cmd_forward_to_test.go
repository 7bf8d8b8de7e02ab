package cli

import (
	"context"
	"path/filepath"
	"strings"
	"testing"

	"paydesk/store"
)

// paydesk forward-to shows the store's endpoints (passwords masked); set
// and clear change them for an admin only, with an audit entry naming
// who; a read-only config changes nothing; a URL that is no http(s) is a
// usage error.
func TestForwardToCommand(t *testing.T) {
	const ep = "https://hook:pw-s3cret@shop.test/push"
	for _, tc := range []struct {
		name, user, conf string
		args             []string
		code             int
		errIn, stored    string // stored: the store's endpoints after, joined by spaces
		audit            string
	}{
		{"alone is admin", "sam", "", []string{"set", ep, "http://b.test/x"}, 0, "", ep + " http://b.test/x",
			"sam https://hook:xxxxx@shop.test/push, http://b.test/x was http://a.test/; from the command line"},
		{"admin clears", "ann", "[users]\nann = \"admin\"\n", []string{"clear"}, 0, "", "", "ann none was http://a.test/; from the command line"},
		{"finance refused", "fin", "[users]\nfin = \"finance\"\n", []string{"set", ep}, 1, "only admin may", "http://a.test/", ""},
		{"read-only", "sam", "read-only = true\n", []string{"clear"}, 1, "forward-to not changed", "http://a.test/", ""},
		{"no URL", "sam", "", []string{"set", "ftp://x"}, 2, "must be an absolute http(s) URL", "http://a.test/", ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "paydesk.db")
			db, err := store.Open(path, store.Options{ForwardTo: []string{"http://a.test/"}})
			if err != nil {
				t.Fatal(err)
			}
			db.Close()
			var stdout, stderr lockedBuffer
			env := map[string]string{"USER": tc.user, "HOME": t.TempDir()}
			args := append([]string{"forward-to"}, tc.args[0], "--config", writeConfig(t, tc.conf), "--db", path)
			code := Main(context.Background(), IO{Stdout: &stdout, Stderr: &stderr, Getenv: func(k string) string { return env[k] }},
				append(args, tc.args[1:]...))
			if code != tc.code || !strings.Contains(stderr.String(), tc.errIn) {
				t.Fatalf("exit %d (want %d): %s", code, tc.code, stderr.String())
			}
			db, err = store.Open(path, store.Options{})
			if err != nil {
				t.Fatal(err)
			}
			eps, err := db.ForwardTo(t.Context())
			if err != nil || strings.Join(eps, " ") != tc.stored {
				db.Close()
				t.Fatalf("the store's endpoints after: %q, %v; want %q", eps, err, tc.stored)
			}
			es, err := db.Audit(t.Context(), 10)
			if err != nil {
				db.Close()
				t.Fatal(err)
			}
			var got []string
			for _, e := range es {
				if e.Action == store.AuditForwardTo && e.Operator != "paydesk" {
					got = append(got, e.Operator+" "+e.Result+" "+e.Reason)
				}
			}
			if strings.Join(got, "|") != tc.audit {
				db.Close()
				t.Fatalf("audit %q, want %q", got, tc.audit)
			}

			db.Close()
			var shown lockedBuffer
			if code := Main(context.Background(), IO{Stdout: &shown, Stderr: &stderr, Getenv: func(k string) string { return env[k] }},
				[]string{"forward-to", "--db", path, "--config", writeConfig(t, "")}); code != 0 {
				t.Fatalf("forward-to: exit %d: %s", code, stderr.String())
			}
			if out := shown.String(); strings.Contains(out, "pw-s3cret") || (tc.stored == "" && !strings.Contains(out, "no endpoints")) ||
				(tc.stored != "" && !strings.Contains(out, strings.Fields(store.EndpointShown(strings.Fields(tc.stored)[0]))[0])) {
				t.Fatalf("forward-to shows:\n%s", out)
			}
		})
	}
}
