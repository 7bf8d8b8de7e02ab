package main

import (
	"path/filepath"
	"strings"
	"testing"
)

// The addresses are read from paydesk serve's banner as it prints it; a
// banner without the SSH server (serve without --ssh) is an error naming
// what it said.
func TestAwaitBanner(t *testing.T) {
	for _, tt := range []struct {
		name, banner     string
		listen, ssh, err string
	}{
		{name: "serve --ssh", banner: "paydesk serve: owns /tmp/x/cache.db\n  gateway:        http://127.0.0.1:35071 (the embedded sandbox), mode sandbox\n" +
			"  push listener:  http://127.0.0.1:41205/push\n  order intake:   http://127.0.0.1:41205/orders\n  operator:       sshload\n" +
			"  socket:         /tmp/x/paydesk/cache.db-7186e99b0575.sock (the commands on this machine run through it)\n" +
			"  ssh:            127.0.0.1:2299 (ssh -p PORT USER@host; paydesk user add)\nCtrl-C stops it.\nlater lines\n",
			listen: "127.0.0.1:41205", ssh: "127.0.0.1:2299"},
		{name: "no ssh", banner: "paydesk serve: owns /tmp/x/cache.db\n  push listener:  http://127.0.0.1:41205/push\nCtrl-C stops it.\n", err: "push listener:  http://127.0.0.1:41205/push"},
		{name: "a failed start", banner: "paydesk serve: cache /tmp/x/cache.db is in use\n", err: "is in use"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			got, err := awaitBanner(strings.NewReader(tt.banner), filepath.Join(t.TempDir(), "rest"))
			if tt.err != "" {
				if err == nil || !strings.Contains(err.Error(), tt.err) {
					t.Fatalf("error %v; want one saying %q", err, tt.err)
				}
				return
			}
			if err != nil || got["listen"] != tt.listen || got["ssh"] != tt.ssh {
				t.Fatalf("got %v, %v; want listener %s, ssh %s", got, err, tt.listen, tt.ssh)
			}
		})
	}
}
