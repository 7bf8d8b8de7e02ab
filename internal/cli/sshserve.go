package cli

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"

	tea "charm.land/bubbletea/v2"
	"github.com/spf13/pflag"

	"paydesk/internal/access"
	"paydesk/internal/hub"
	"paydesk/internal/ops"
	"paydesk/internal/sshd"
	"paydesk/store"
	"paydesk/ui"
)

// sshOptions are paydesk serve's SSH settings: --ssh ADDR, --ssh-host-key
// FILE, --ssh-idle DURATION (or ssh, ssh-host-key, ssh-idle in the
// config file).
type sshOptions struct {
	Addr    string
	HostKey string
	Idle    time.Duration
}

// sshStreamWindow is how long a console over SSH gathers the changes of a
// stream of pushes before it reloads.
const sshStreamWindow = time.Second

// sshStreamWindowMax is how long that window grows to while the stream
// lasts (1 s, 2 s, then 3 s): what is on screen is at most this old.
const sshStreamWindowMax = 3 * time.Second

// defaultSSHIdle closes a session nobody typed in for this long.
const defaultSSHIdle = 30 * time.Minute

// sshFlags adds serve's SSH flags.
func sshFlags(fs *pflag.FlagSet) {
	fs.String("ssh", "", "serve the console and the commands over SSH on ADDR (host:port), to the users paydesk user add made")
	fs.String("ssh-host-key", "", "the SSH host key file, made once (default: ssh_host_ed25519_key beside the cache)")
	fs.String("ssh-idle", "", "close an SSH session after this long without input (default 30m; 0: never)")
}

// resolveSSH reads the SSH settings: flags, then the config file.
func resolveSSH(fs *pflag.FlagSet, getenv func(string) string, set settings) (sshOptions, error) {
	l, err := loadLayers(fs, getenv)
	if err != nil {
		return sshOptions{}, err
	}
	o := sshOptions{Addr: l.value("ssh"), HostKey: l.value("ssh-host-key"), Idle: defaultSSHIdle}
	if o.HostKey == "" {
		o.HostKey = filepath.Join(set.DataDir(), "ssh_host_ed25519_key")
	}
	if v := l.value("ssh-idle"); v != "" {
		d, err := time.ParseDuration(v)
		if v == "0" {
			d, err = 0, nil
		}
		if err != nil || d < 0 {
			return sshOptions{}, fmt.Errorf("ssh-idle = %q: a duration (30m, 1h), or 0 for never", v)
		}
		o.Idle = d
	}
	return o, nil
}

// startSSH serves the host's console and commands over SSH.
func (h *host) startSSH(ctx context.Context, o sshOptions) (*sshd.Server, error) {
	// The consoles over SSH share their reads: one read per change for
	// all of them (ui.SharedStore). It hears the store until the store
	// closes.
	reads := ui.NewSharedStore(h.db)
	srv, err := sshd.Start(sshd.Config{
		Addr: o.Addr, HostKey: o.HostKey, Idle: o.Idle, Logf: h.rt.logf,
		Lookup: h.principalOf,
		Console: func(ctx context.Context, p access.Principal) (tea.Model, func(), error) {
			return h.sshConsole(ctx, p, reads)
		},
		Run: h.runAs,
	})
	if err != nil {
		reads.Stop()
		return nil, err
	}
	h.sshd = srv
	return srv, nil
}

// principalOf is the user whose key has fingerprint fp, who must be the
// user the client named (ssh alice@host).
func (h *host) principalOf(ctx context.Context, user, fp string) (access.Principal, error) {
	u, err := h.db.UserByKey(ctx, fp)
	if errors.Is(err, store.ErrNoUser) {
		return access.Principal{}, fmt.Errorf("%w: %v", sshd.ErrUnknownKey, err)
	}
	if err != nil {
		return access.Principal{}, err
	}
	if u.Name != user {
		return access.Principal{}, fmt.Errorf("%w: key %s is %s's, not %s's", sshd.ErrUnknownKey, fp, u.Name, clean(user))
	}
	role, err := access.ParseRole(u.Role)
	if err != nil {
		return access.Principal{}, fmt.Errorf("user %s: %w", u.Name, err)
	}
	return access.Principal{User: u.Name, Role: role, Via: access.SSH, Key: fp}, nil
}

// serviceAs is the host's operations service acting as p: the journal
// and the audit log name the user and the key.
func (h *host) serviceAs(p access.Principal) (*ops.Service, error) {
	cfg := h.rt.opsCfg
	cfg.Operator = p.String()
	return ops.New(cfg)
}

// sshConsole is the console of one SSH session, on the host's runtime.
func (h *host) sshConsole(ctx context.Context, p access.Principal, reads *ui.SharedStore) (tea.Model, func(), error) {
	svc, err := h.serviceAs(p)
	if err != nil {
		return nil, nil, err
	}
	cfg := consoleConfig(ctx, h.rt, h.rt.set)
	cfg.Ops = svc
	cfg.Store = reads
	// While pushes keep coming a console over SSH reloads once a second,
	// then every 2 and 3 s while they go on (a change after a quiet spell
	// still shows within 25 ms): fifty of them reloading four times a
	// second took the listener's CPU, and once a second still half of it.
	cfg.StreamWindow, cfg.StreamWindowMax = sshStreamWindow, sshStreamWindowMax
	// The client's terminal takes no file: the session's exports and saved
	// pushes go to the user's folder on the server (paydesk exports).
	dir := userFilesDir(h.rt.set.DataDir(), p.User)
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return nil, nil, fmt.Errorf("the user's folder for exports: %w", err)
	}
	cfg.ExportDir, cfg.FixtureDir, cfg.ExportsOnServer = dir, dir, true
	app := ui.New(cfg)
	return app, app.Close, nil
}

// sshRefusedFlags name files on the server: a client over SSH may not
// point the server at its configuration, another cache or a secret.
var sshRefusedFlags = []string{"--config", "--db", "--secret-file"}

// runAs runs a command line for p, over SSH: with the server's settings
// (its cache, gateway, mode and website key), none of the client's
// environment, and p as the operator.
func (h *host) runAs(ctx context.Context, p access.Principal, args []string, s sshd.Streams) int {
	for _, a := range args {
		if a == "--" {
			break
		}
		for _, f := range sshRefusedFlags {
			if a == f || strings.HasPrefix(a, f+"=") {
				fmt.Fprintf(s.Stderr, "paydesk: %s names a file on the server; over SSH the server's own settings apply\n", f)
				return exitUsage
			}
		}
	}
	hs := h.rt.set
	env := map[string]string{"PAYDESK_DB": hs.DB, "PAYDESK_GATEWAY": hs.Gateway, "PAYDESK_MODE": string(hs.Mode),
		"PAYDESK_WEBSITE_KEY": hs.WebsiteKey, "PAYDESK_CONFIG": hs.ConfigFile, "USER": p.String()}
	for _, k := range []string{"HOME", "XDG_CONFIG_HOME", "XDG_DATA_HOME", "XDG_RUNTIME_DIR"} {
		env[k] = h.getenv(k)
	}
	// Relative paths (an import's file, a report's output) are the
	// server's data folder's, never its working folder's.
	req := hub.Request{Args: args, Env: env, Dir: hs.DataDir(), Stdin: true, Interactive: s.Terminal, StderrTerminal: s.Terminal}
	return h.run(access.With(ctx, p), req, hub.Streams{Stdin: s.Stdin, Stdout: s.Stdout, Stderr: s.Stderr})
}
