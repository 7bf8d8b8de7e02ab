package cli

import (
	"context"
	"net/http"
	"strings"
	"testing"
)

// TestForwardToSetWhileServeRuns: paydesk serve started while the store
// forwards nowhere starts delivering once `paydesk forward-to set` gives
// the store an endpoint — the command run through serve's socket, as any
// command on the machine is — without a restart: every push stored after
// reaches the shop once. Before, the worker ran only in a process started
// with endpoints, and the deliveries waited for the next restart.
func TestForwardToSetWhileServeRuns(t *testing.T) {
	if testing.Short() {
		t.Skip("runs serve and the embedded sandbox")
	}
	shop := &outboxShop{addr: "127.0.0.1:0"}
	shop.up(t, http.StatusOK)
	defer shop.down()
	endpoint := "http://" + shop.addr + "/push"
	dir := shortTemp(t)
	env := cliEnv(dir)
	env["XDG_RUNTIME_DIR"] = shortTemp(t)
	stderr, stop := startServe(t, env, "--listen", "127.0.0.1:0")
	if strings.Contains(stderr.String(), "forwarding to:") {
		t.Fatalf("serve forwards before any endpoint was set:\n%s", stderr.String())
	}
	ctx := context.Background()
	if code, out, errs := runEnv(t, ctx, env, nil, false, "forward-to", "set", endpoint); code != 0 {
		t.Fatalf("forward-to set through serve: exit %d %s %s", code, out, errs)
	}
	if code, out, errs := runEnv(t, ctx, env, nil, false, "test-reservation", "--approve", "--json"); code != 0 {
		t.Fatalf("test-reservation through serve: exit %d %s %s", code, out, errs)
	}
	if n := forwardedOnce(t, env, shop); n == 0 {
		t.Fatal("no push stored")
	}
	stop()
}
