package sshd

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"

	gossh "golang.org/x/crypto/ssh"

	"paydesk/internal/access"
)

// TestArgsSplitHint: a command that refuses its number of arguments over
// SSH (a reason of several words quoted once: ssh joined it, the server
// split it again) gets a line on how to quote it twice; any other
// failure gets none.
func TestArgsSplitHint(t *testing.T) {
	us := &users{by: map[string]access.Principal{}}
	key := alice(t, us)
	run := func(_ context.Context, _ access.Principal, args []string, s Streams) int {
		if len(args) > 2 && args[0] == "deny" {
			fmt.Fprintf(s.Stderr, "Error: accepts 1 arg(s), received %d\n", len(args)-3)
			return 2
		}
		fmt.Fprintln(s.Stderr, "refund: carol (role warehouse) may not refund")
		return 1
	}
	s, _ := testServer(t, us, run, nil)
	c, err := dial(s, "alice", gossh.PublicKeys(key))
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	const hint = `quote a value of several words twice, e.g. ssh … 'deny 2 --reason "no return label"'`
	for _, tc := range []struct {
		cmd  string
		code int
		hint bool
	}{
		{`deny 2 --reason no return label`, 2, true},
		{`refund K 10`, 1, false},
	} {
		sess, err := c.NewSession()
		if err != nil {
			t.Fatal(err)
		}
		var errb bytes.Buffer
		sess.Stderr = &errb
		err = sess.Run(tc.cmd)
		var ee *gossh.ExitError
		if !errors.As(err, &ee) || ee.ExitStatus() != tc.code {
			t.Errorf("%s: %v; want exit %d", tc.cmd, err, tc.code)
		}
		if got := strings.Contains(errb.String(), hint); got != tc.hint {
			t.Errorf("%s: hint %v, want %v; stderr:\n%s", tc.cmd, got, tc.hint, errb.String())
		}
	}
}
