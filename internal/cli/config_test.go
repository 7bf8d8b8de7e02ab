package cli

import (
	"context"
	"io"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	"paydesk/internal/alert"
	"paydesk/internal/ops"
	"paydesk/store"
)

// parseSettings parses args as the console (no command name) or the
// command they name does, and resolves the settings.
func parseSettings(t *testing.T, env map[string]string, args ...string) (settings, error) {
	t.Helper()
	root := newRoot(IO{Stdout: io.Discard, Stderr: io.Discard})
	cmd, rest, err := root.Find(args)
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.ParseFlags(rest); err != nil {
		t.Fatal(err)
	}
	return resolveSettings(cmd.Flags(), func(k string) string { return env[k] })
}

func writeConfig(t *testing.T, text string) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), "config.toml")
	if err := os.WriteFile(p, []byte(text), 0o600); err != nil {
		t.Fatal(err)
	}
	return p
}

func TestSettingsPrecedence(t *testing.T) {
	home := t.TempDir()
	file := writeConfig(t, "# paydesk\ngateway = \"https://testcheckout.example.com\"\nwebsite-key = \"FROMFILE\"\nlisten = \"127.0.0.1:9000\"\nread-only = true\ncurrency = \"SEK\"\n")
	defaultDB := filepath.Join(home, ".local/share/paydesk/paydesk.db")
	fromFile := settings{Gateway: "https://testcheckout.example.com", Mode: ops.ModeTest, WebsiteKey: "FROMFILE", Listen: "127.0.0.1:9000",
		ReadOnly: true, Currency: "SEK", DB: defaultDB, ConfigFile: file}
	with := func(s settings, f func(*settings)) settings { f(&s); return s }
	xdgConfig := t.TempDir()
	if err := os.MkdirAll(filepath.Join(xdgConfig, "paydesk"), 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(xdgConfig, "paydesk", "config.toml"), []byte("website-key = \"XDG\"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name string
		env  map[string]string
		args []string
		want settings
	}{
		{"defaults", map[string]string{"HOME": home}, nil,
			settings{Gateway: "sandbox", Mode: ops.ModeSandbox, DB: defaultDB}},
		{"xdg data home", map[string]string{"XDG_DATA_HOME": "/data"}, nil,
			settings{Gateway: "sandbox", Mode: ops.ModeSandbox, DB: "/data/paydesk/paydesk.db"}},
		{"xdg config home", map[string]string{"HOME": home, "XDG_CONFIG_HOME": xdgConfig}, nil,
			settings{Gateway: "sandbox", Mode: ops.ModeSandbox, WebsiteKey: "XDG", DB: defaultDB,
				ConfigFile: filepath.Join(xdgConfig, "paydesk", "config.toml")}},
		{"file", map[string]string{"HOME": home}, []string{"--config", file}, fromFile},
		{"file named by the environment", map[string]string{"HOME": home, "PAYDESK_CONFIG": file}, nil, fromFile},
		{"--config beats PAYDESK_CONFIG", map[string]string{"HOME": home, "PAYDESK_CONFIG": "/nonexistent.toml"}, []string{"--config", file}, fromFile},
		{"env beats file", map[string]string{"HOME": home, "PAYDESK_WEBSITE_KEY": "FROMENV", "PAYDESK_CONFIG": file}, nil,
			with(fromFile, func(s *settings) { s.WebsiteKey = "FROMENV" })},
		{"flags beat env", map[string]string{"HOME": home, "PAYDESK_WEBSITE_KEY": "FROMENV", "PAYDESK_GATEWAY": "https://gw.example.com"},
			[]string{"--config", file, "--website-key", "FROMFLAG", "--read-only=false", "--db", "/tmp/x.db", "--mode", "test"},
			settings{Gateway: "https://gw.example.com", Mode: ops.ModeTest, WebsiteKey: "FROMFLAG", Listen: "127.0.0.1:9000", DB: "/tmp/x.db",
				Currency: "SEK", ConfigFile: file}},
		// A flag set to its default still counts (Changed), one left alone does not.
		{"flag set to the default counts", map[string]string{"HOME": home}, []string{"--config", file, "--read-only=false", "--currency", ""},
			with(fromFile, func(s *settings) { s.ReadOnly, s.Currency = false, "" })},
		{"a command reads the same layers", map[string]string{"HOME": home, "PAYDESK_MODE": "live"},
			[]string{"capture", "R1", "--config", file, "--listen", "127.0.0.1:9100", "--push-url", "https://hooks.example.com/push"},
			with(fromFile, func(s *settings) {
				s.Mode, s.Listen, s.PushURL = ops.ModeLive, "127.0.0.1:9100", "https://hooks.example.com/push"
			})},
		{"env DB beats file db", map[string]string{"HOME": home, "PAYDESK_DB": "/env.db"}, []string{"reservations", "--config", file},
			with(fromFile, func(s *settings) { s.DB = "/env.db" })},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got, err := parseSettings(t, tc.env, tc.args...)
			if err != nil {
				t.Fatal(err)
			}
			got.localData = "" // derived from the data home, not a setting
			if tc.want.SyncEvery == 0 {
				tc.want.SyncEvery = defaultSyncEvery // no case here sets it
			}
			if tc.want.AlertDeliveryFailing == 0 {
				tc.want.AlertDeliveryFailing = alert.DefaultDeliveryFailing // nor this
			}
			if !reflect.DeepEqual(got, tc.want) {
				t.Fatalf("got  %+v\nwant %+v", got, tc.want)
			}
		})
	}
}

func TestSettingsRefuse(t *testing.T) {
	for _, tc := range []struct {
		name, file string
		args       []string
		want       string
	}{
		{"secret in the file", "gateway = \"sandbox\"\nsecret-key = \"hunter2\"\n", nil, "line 2: the secret key is not read from the config file"},
		{"unknown key names its line", "# a comment\ngateway = \"sandbox\"\ngatway = \"sandbox\"\n", nil, `line 3: unknown key "gatway" (known: gateway,`},
		{"unknown table names its line", "gateway = \"sandbox\"\n\n[team]\nname = \"x\"\n", nil, `line 3: unknown key "team"`},
		{"not TOML", "gateway\n", nil, "line 1"},
		{"unquoted string", "gateway = https://gw.example.com\n", nil, "line 1"},
		{"wrong type names its line", "\nread-only = \"yes\"\n", nil, "line 2"},
		{"demo on a real gateway", "", []string{"--gateway", "https://gw.example.com", "--demo"}, "embedded sandbox"},
		{"live mode on the sandbox", "", []string{"--mode", "live"}, "needs --gateway"},
		{"bad mode", "", []string{"--mode", "prod"}, "mode"},
		{"bad gateway", "", []string{"--gateway", "gw.example.com"}, "http(s) base URL"},
		{"bad push url", "push-url = \"hooks.example.com\"\n", nil, "push-url"},
		{"bad bool", "read-only = maybe\n", nil, "line 1"},
		{"config named but missing", "", []string{"--config", "/nonexistent/paydesk.toml"}, "no such file"},
		{"alert-quiet not a duration", "alert-quiet = \"half an hour\"\n", nil, `alert-quiet = "half an hour": a duration of a minute or more`},
		{"alert-delivery-failing too short", "alert-delivery-failing = \"5s\"\n", nil, `alert-delivery-failing = "5s": a duration of a minute or more`},
		{"opening hours backwards", "alert-quiet = \"30m\"\nopening-hours = \"20:00-08:00\"\n", nil, "opening-hours \"20:00-08:00\": hours must be HH:MM-HH:MM, opening before closing"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			args := append([]string{"--config", writeConfig(t, tc.file)}, tc.args...)
			_, err := parseSettings(t, map[string]string{"HOME": t.TempDir()}, args...)
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("err = %v, want it to say %q", err, tc.want)
			}
			if err != nil && strings.Contains(err.Error(), "hunter2") {
				t.Fatal("the error repeats the secret")
			}
		})
	}
}

func TestGuessMode(t *testing.T) {
	for gw, want := range map[string]ops.Mode{
		"sandbox": ops.ModeSandbox, "http://127.0.0.1:8800": ops.ModeSandbox, "http://localhost:8800": ops.ModeSandbox,
		"https://testcheckout.example.nl": ops.ModeTest, "https://checkout.example.nl": ops.ModeLive,
	} {
		if got := guessMode(gw); got != want {
			t.Errorf("guessMode(%s) = %s, want %s", gw, got, want)
		}
	}
}

// With no configuration the console starts an embedded sandbox whose
// pushes reach the embedded listener and the cache, keeps its credentials
// in the data folder (0600), and shows neither key.
func TestConsoleStartsEmbeddedPair(t *testing.T) {
	data := t.TempDir()
	env := map[string]string{"XDG_DATA_HOME": data, "USER": "tester"}
	set, err := parseSettings(t, env)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute) // only a stuck test
	defer cancel()
	c, err := startConsole(ctx, set, func(k string) string { return env[k] })
	if err != nil {
		t.Fatal(err)
	}
	defer c.close()
	res, err := c.svc.Reserve(ctx, ops.TestReservation(time.Now(), "EUR"))
	if err != nil || res.Key == "" {
		t.Fatalf("reserve: %v %+v", err, res)
	}
	if err := c.svc.CustomerStep(ctx, res.Key, true); err != nil {
		t.Fatal(err)
	}
	r, ok, err := c.svc.Waiter().Reservation(ctx, res.Key, 2*time.Minute)
	if err != nil || !ok || r.State() != store.StateReserved {
		t.Fatalf("the Reserve push did not reach the cache: ok=%v err=%v", ok, err)
	}
	info, err := os.Stat(filepath.Join(data, "paydesk", "sandbox.secret"))
	if err != nil || info.Mode().Perm() != 0o600 {
		t.Fatalf("credentials file: %v %v", err, info)
	}
	secret, _ := os.ReadFile(filepath.Join(data, "paydesk", "sandbox.secret"))
	frame := c.app.View().Content
	if strings.Contains(frame, strings.TrimSpace(string(secret))) {
		t.Fatal("the console draws the sandbox secret")
	}
	if _, err := os.Stat(filepath.Join(data, "paydesk", "sandbox.db")); err != nil {
		t.Fatalf("the sandbox keeps no state next to the cache: %v", err)
	}
}

func TestConfigFileExpandsHome(t *testing.T) {
	home := t.TempDir()
	file := writeConfig(t, "db = \"~/caches/pd.db\"\nsecret-file = \"~/.secret\"\n")
	s, err := parseSettings(t, map[string]string{"HOME": home}, "--config", file)
	if err != nil {
		t.Fatal(err)
	}
	if s.DB != filepath.Join(home, "caches/pd.db") || s.SecretFile != filepath.Join(home, ".secret") {
		t.Fatalf("db %s, secret-file %s", s.DB, s.SecretFile)
	}
}

// alert-delivery-failing defaults to alert.DefaultDeliveryFailing, takes
// a duration or off; forward-to in the file makes the console forwarding.
func TestSettingsDeliveryAlertAndForwarding(t *testing.T) {
	for _, tc := range []struct {
		name, file string
		after      time.Duration
		forwarding bool
	}{
		{"defaults", "", alert.DefaultDeliveryFailing, false},
		{"a time and endpoints", "alert-delivery-failing = \"1h\"\nforward-to = [\"https://shop.test/push\"]\n", time.Hour, true},
		{"off", "alert-delivery-failing = \"off\"\nforward-to = \"https://shop.test/push\"\n", 0, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s, err := parseSettings(t, map[string]string{"HOME": t.TempDir()}, "--config", writeConfig(t, tc.file))
			if err != nil {
				t.Fatal(err)
			}
			if s.AlertDeliveryFailing != tc.after || s.Forwarding != tc.forwarding {
				t.Fatalf("after %s forwarding %v, want %s %v", s.AlertDeliveryFailing, s.Forwarding, tc.after, tc.forwarding)
			}
		})
	}
}
