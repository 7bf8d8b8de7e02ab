package cli

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// teamConfig writes a config naming the users of this machine and the
// four-eyes threshold.
func teamConfig(t *testing.T, dir, extra string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Join(dir, "paydesk"), 0o700); err != nil {
		t.Fatal(err)
	}
	cfg := "approval-over = \"100.00\"\n" + extra + "\n[users]\nalice = \"agent\"\nbob = \"finance\"\ncarol = \"warehouse\"\n"
	if err := os.WriteFile(filepath.Join(dir, "paydesk", "config.toml"), []byte(cfg), 0o600); err != nil {
		t.Fatal(err)
	}
}

func as(env map[string]string, user string) map[string]string {
	out := map[string]string{}
	for k, v := range env {
		out[k] = v
	}
	out["USER"] = user
	return out
}

// TestFourEyesThroughOwner: with paydesk serve owning the cache, every
// user's command runs through its socket with the role the owner's config
// gives their name: carol (warehouse) captures but may not refund, alice
// (agent) asks for a 150.00 refund and it waits, she cannot approve it,
// bob (finance) sees it and approves it: it is sent and settled, and the
// audit log says who requested, decided and sent.
func TestFourEyesThroughOwner(t *testing.T) {
	dir := shortTemp(t)
	env := cliEnv(dir)
	env["XDG_RUNTIME_DIR"] = shortTemp(t)
	teamConfig(t, dir, "[roles]\nagent-refund-limit = \"50.00\"")
	startOwner(t, env)
	ctx := context.Background()
	run := func(user string, args ...string) (int, string, string) {
		t.Helper()
		return runEnv(t, ctx, as(env, user), nil, false, args...)
	}
	code, out, errs := run("ownerdesk", "test-reservation", "--approve", "--json")
	if code != 0 {
		t.Fatalf("test-reservation: %d %s%s", code, out, errs)
	}
	number, _ := decodeJSON[map[string]any](t, out)["target"].(string)
	code, out, errs = run("carol", "capture", number, "--yes", "--json")
	capKey, _ := decodeJSON[map[string]any](t, out)["key"].(string)
	if code != 0 || capKey == "" {
		t.Fatalf("carol (warehouse) captures: %d %s%s", code, out, errs)
	}

	code, out, _ = run("carol", "refund", capKey, "10", "--reason", "return", "--yes", "--json")
	res := decodeJSON[map[string]any](t, out)
	if code != exitFailed || !strings.Contains(res["error"].(string), "carol (role warehouse) may not refund: only agent, finance, admin may (nothing was sent)") {
		t.Fatalf("carol refunds: %d %v", code, res)
	}
	// Without a reason too: the role is what refuses, not the missing reason.
	code, out, _ = run("carol", "refund", capKey, "10", "--yes", "--json")
	res = decodeJSON[map[string]any](t, out)
	if code != exitFailed || !strings.Contains(res["error"].(string), "carol (role warehouse) may not refund") {
		t.Fatalf("carol refunds without a reason: %d %v", code, res)
	}

	// Within the threshold but above her limit from the config: refused.
	code, out, _ = run("alice", "refund", capKey, "60", "--reason", "return", "--yes", "--json")
	res = decodeJSON[map[string]any](t, out)
	if code != exitFailed || !strings.Contains(res["error"].(string), "alice (role agent) may refund at most 50.00 at once, not 60.00: finance, admin may refund it") {
		t.Fatalf("alice above her limit: %d %v", code, res)
	}
	code, out, errs = run("alice", "refund", capKey, "150", "--reason", "return", "--yes", "--json")
	res = decodeJSON[map[string]any](t, out)
	if code != 0 || res["state"] != "awaiting_approval" || res["approval"] != float64(1) || res["opId"] != nil {
		t.Fatalf("alice's refund: %d %v %s", code, res, errs)
	}
	code, _, errs = run("alice", "approve", "1", "--yes")
	if code != exitFailed || !strings.Contains(errs, "alice (role agent) may not approve: only finance, admin may") {
		t.Fatalf("alice approves her own: %d %s", code, errs)
	}
	code, out, _ = run("bob", "approvals", "--json")
	list := decodeJSON[[]approvalJSON](t, out)
	if code != 0 || len(list) != 1 || list[0].State != "pending" || list[0].Amount != "150.00" || list[0].RequestedBy != "alice" {
		t.Fatalf("bob's list: %d %+v", code, list)
	}
	code, out, errs = run("bob", "approve", "1", "--yes", "--json")
	res = decodeJSON[map[string]any](t, out)
	if code != 0 || res["state"] != "settled" || res["amount"] != "150.00" || res["approval"] != float64(1) {
		t.Fatalf("bob approves: %d %v %s", code, res, errs)
	}
	code, out, _ = run("bob", "approvals", "--all", "--json")
	list = decodeJSON[[]approvalJSON](t, out)
	if code != 0 || len(list) != 1 || list[0].State != "approved" || list[0].Decider != "bob" || list[0].OpID == 0 {
		t.Fatalf("after: %+v", list)
	}
	code, out, _ = run("bob", "audit", "--json")
	if code != 0 {
		t.Fatalf("audit: %d", code)
	}
	var trail []string
	for _, e := range decodeJSON[[]auditJSON](t, out) {
		switch e.Action {
		case "approval-request", "approval-approve", "refund":
			trail = append(trail, e.Operator+" "+e.Action)
		}
	}
	if got := strings.Join(trail, ", "); got != "bob refund, bob approval-approve, alice approval-request" {
		t.Fatalf("audit trail: %s", got)
	}
}

// TestTeamConfig: the limits and users are read from the config, and a
// wrong one is named.
func TestTeamConfig(t *testing.T) {
	dir := t.TempDir()
	teamConfig(t, dir, "approval-ttl = \"24h\"\n[roles]\nagent-refund-limit = \"250.00\"")
	getenv := func(k string) string { return cliEnv(dir)[k] }
	set, err := resolveSettings(nil, getenv)
	if err != nil {
		t.Fatal(err)
	}
	tm := set.Team
	if l, _ := tm.Policy.Limit("agent"); l.StringFixed(2) != "250.00" || tm.ApprovalOver.StringFixed(2) != "100.00" || tm.ApprovalTTL.Hours() != 24 {
		t.Fatalf("team %+v", tm)
	}
	for _, tc := range []struct{ name, owner, want string }{
		{"alice", "desk", "agent"}, {"bob", "desk", "finance"}, {"desk", "desk", "admin"}, {"mallory", "desk", "viewer"},
	} {
		if got := tm.roleOf(tc.name, tc.owner); string(got) != tc.want {
			t.Errorf("%s: %s, want %s", tc.name, got, tc.want)
		}
	}
	if got := (team{}).roleOf("anyone", "desk"); got != "admin" {
		t.Errorf("one person alone: %s", got)
	}
	for _, bad := range []struct{ cfg, want string }{
		{"[users]\nbob = \"boss\"", "users.bob: role \"boss\""},
		{"[roles]\nagent-refund-limit = \"lots\"", "roles.agent-refund-limit"},
		{"approval-over = \"-5\"", "approval-over \"-5\""},
		{"approval-ttl = \"soon\"", "approval-ttl \"soon\""},
	} {
		d := t.TempDir()
		_ = os.MkdirAll(filepath.Join(d, "paydesk"), 0o700)
		_ = os.WriteFile(filepath.Join(d, "paydesk", "config.toml"), []byte(bad.cfg+"\n"), 0o600)
		if _, err := resolveSettings(nil, func(k string) string { return cliEnv(d)[k] }); err == nil || !strings.Contains(err.Error(), bad.want) {
			t.Errorf("%q: %v, want it to name %q", bad.cfg, err, bad.want)
		}
	}
}
