package cli

import (
	"context"
	"io"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"paydesk/internal/ops"
)

// commandSettings parses args as the named operation command does and
// resolves its settings.
func commandSettings(t *testing.T, name string, env map[string]string, args ...string) (*cmdContext, settings, error) {
	t.Helper()
	sio := IO{Stdout: io.Discard, Stderr: io.Discard, Getenv: func(k string) string { return env[k] }}
	cmd, rest, err := newRoot(sio).Find(append([]string{name}, args...))
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.ParseFlags(rest); err != nil {
		t.Fatalf("paydesk %s %v: %v", name, args, err)
	}
	c := &cmdContext{name: name, sio: sio, cmd: cmd}
	set, err := c.settings()
	return c, set, err
}

// TestCommandsResolveSettingsLikeTheConsole: the same flags, environment
// and config file give a command and the console the same settings, the
// mode guessed the same way (a gateway URL with no mode is LIVE for both).
func TestCommandsResolveSettingsLikeTheConsole(t *testing.T) {
	home := t.TempDir()
	liveFile := writeConfig(t, "gateway = 'https://checkout.example.com'\nwebsite-key = 'FROMFILE'\ndb = '~/pd/cache.db'\ncurrency = 'SEK'\n")
	testFile := writeConfig(t, "gateway = 'https://testcheckout.example.com'\nwebsite-key = 'FROMFILE'\n")
	defaultFile := filepath.Join(home, ".config", "paydesk", "config.toml")
	if err := os.MkdirAll(filepath.Dir(defaultFile), 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(defaultFile, []byte("gateway = 'https://pay.example.com'\nwebsite-key = 'DEFAULTFILE'\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name     string
		env      map[string]string
		args     []string
		wantMode ops.Mode
		wantDB   string
	}{
		{"nothing configured", map[string]string{"XDG_CONFIG_HOME": t.TempDir(), "XDG_DATA_HOME": "/data"}, nil,
			ops.ModeSandbox, "/data/paydesk/paydesk.db"},
		{"gateway flag without mode is live", map[string]string{"HOME": t.TempDir()}, []string{"--gateway", "https://checkout.example.com"},
			ops.ModeLive, ""},
		{"gateway env without mode is live", map[string]string{"HOME": t.TempDir(), "PAYDESK_GATEWAY": "https://checkout.example.com"}, nil,
			ops.ModeLive, ""},
		{"config file gateway is live", map[string]string{"HOME": home}, []string{"--config", liveFile},
			ops.ModeLive, filepath.Join(home, "pd/cache.db")},
		{"config file from the environment", map[string]string{"HOME": home, "PAYDESK_CONFIG": testFile}, nil,
			ops.ModeTest, filepath.Join(home, ".local/share/paydesk/paydesk.db")},
		{"default config file", map[string]string{"HOME": home}, nil,
			ops.ModeLive, filepath.Join(home, ".local/share/paydesk/paydesk.db")},
		{"flags beat env beat file", map[string]string{"HOME": home, "PAYDESK_MODE": "test", "PAYDESK_WEBSITE_KEY": "FROMENV", "PAYDESK_DB": "/env.db"},
			[]string{"--config", liveFile, "--website-key", "FROMFLAG", "--secret-file", "/s", "--db", "/flag.db"},
			ops.ModeTest, "/flag.db"},
		{"loopback gateway is a sandbox", map[string]string{"HOME": t.TempDir()}, []string{"--gateway", "http://127.0.0.1:8800"},
			ops.ModeSandbox, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			console, err := parseSettings(t, tc.env, tc.args...)
			if err != nil {
				t.Fatal(err)
			}
			for _, name := range []string{"capture", "cancel", "update", "refund", "test-reservation", "resolve", "form"} {
				_, command, err := commandSettings(t, name, tc.env, append([]string{"--json", "--wait", "1s"}, tc.args...)...)
				if err != nil {
					t.Fatalf("%s: %v", name, err)
				}
				if !reflect.DeepEqual(command, console) {
					t.Fatalf("%s resolves\n  %+v\nthe console\n  %+v", name, command, console)
				}
			}
			if console.Mode != tc.wantMode {
				t.Fatalf("mode %s, want %s", console.Mode, tc.wantMode)
			}
			if tc.wantDB != "" && console.DB != tc.wantDB {
				t.Fatalf("db %s, want %s", console.DB, tc.wantDB)
			}
		})
	}
}

// TestCommandRunsLiveOnAnUnknownGateway goes through the whole command
// path (no request is sent: starting sends nothing) and finds the service
// in LIVE mode, as the console would be.
func TestCommandRunsLiveOnAnUnknownGateway(t *testing.T) {
	data := t.TempDir()
	env := map[string]string{"XDG_DATA_HOME": data, "HOME": data, "PAYDESK_SECRET_KEY": "s3cret", "USER": "tester"}
	args := []string{"--gateway", "https://checkout.example.com", "--website-key", "SHOP"}
	c, _, err := commandSettings(t, "capture", env, args...)
	if err != nil {
		t.Fatal(err)
	}
	rt, code := c.open(context.Background())
	if rt == nil {
		t.Fatalf("open: exit %d", code)
	}
	defer rt.Close()
	if rt.svc.Mode() != ops.ModeLive || c.set.Mode != ops.ModeLive {
		t.Fatalf("command mode %s", rt.svc.Mode())
	}
	set, err := parseSettings(t, env, args...)
	if err != nil {
		t.Fatal(err)
	}
	con, err := startConsole(context.Background(), set, func(k string) string { return env[k] })
	if err == nil {
		con.close()
		t.Fatal("the console opened the cache the command holds")
	}
	if !strings.Contains(err.Error(), "a paydesk command that is still running holds the cache, or a console") {
		t.Fatalf("console on a held cache: %v", err)
	}
	rt.Close()
	con, err = startConsole(context.Background(), set, func(k string) string { return env[k] })
	if err != nil {
		t.Fatal(err)
	}
	defer con.close()
	if con.svc.Mode() != ops.ModeLive {
		t.Fatalf("console mode %s", con.svc.Mode())
	}
}

// TestCommandsReadConfigFile: the cache named in the config file is the
// one a command uses, and read-only there stops the commands that change
// things but not those that look.
func TestCommandsReadConfigFile(t *testing.T) {
	dir := t.TempDir()
	cache := filepath.Join(dir, "elsewhere", "cache.db")
	cfg := writeConfig(t, "db = '"+cache+"'\n")
	code, out, errs := runCLI(t, dir, "", "test-reservation", "--approve", "--json", "--config", cfg)
	if code != 0 {
		t.Fatalf("test-reservation: exit %d %s %s", code, out, errs)
	}
	if _, err := os.Stat(cache); err != nil {
		t.Fatalf("the command did not use the config file's cache: %v", err)
	}
	if _, err := os.Stat(filepath.Join(dir, "paydesk", "paydesk.db")); err == nil {
		t.Fatal("the command opened the default cache too")
	}

	ro := writeConfig(t, "db = '"+cache+"'\nread-only = true\n")
	code, out, _ = runCLI(t, dir, "", "reservations", "--json", "--config", ro)
	if list := decodeJSON[[]map[string]any](t, out); code != 0 || len(list) != 1 {
		t.Fatalf("reservations on read-only: exit %d %v", code, list)
	}
	number := decodeJSON[[]map[string]any](t, out)[0]["reservationNumber"].(string)
	code, _, errs = runCLI(t, dir, "", "capture", number, "--json", "--config", ro)
	if code != exitFailed || !strings.Contains(errs, "read-only = true") || !strings.Contains(errs, "nothing sent") {
		t.Fatalf("capture on read-only: exit %d %s", code, errs)
	}
	code, out, _ = runCLI(t, dir, "", "show", number, "--json", "--config", ro)
	if r := decodeJSON[reservationJSON](t, out); code != 0 || r.State != "reserved" {
		t.Fatalf("after the refused capture: exit %d state %s", code, r.State)
	}
}
