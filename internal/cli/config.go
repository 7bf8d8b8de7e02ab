package cli

import (
	"bufio"
	"errors"
	"flag"
	"fmt"
	"net"
	"net/url"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"paydesk/internal/ops"
)

// settings is what the console runs with. Each value comes from the first
// of: a flag, the environment, the config file, the default. The secret
// key is never a flag (flags show in ps): it comes from $PAYDESK_SECRET_KEY
// or from the file named by --secret-file (or secret-file in the config).
type settings struct {
	Gateway    string // "sandbox" (the embedded one) or a base URL
	Mode       ops.Mode
	WebsiteKey string
	SecretFile string
	Listen     string // the push listener's address
	PushURL    string // where the gateway should push, when not the listener's own URL
	DB         string
	ReadOnly   bool
	Demo       bool
	ExportDir  string
	FixtureDir string
	Currency   string
	// ConfigFile is the file that was read, "" when none.
	ConfigFile string
}

// Embedded reports whether the console runs its own sandbox.
func (s settings) Embedded() bool { return s.Gateway == "" || s.Gateway == "sandbox" }

// DataDir is the folder of the cache: the embedded sandbox's state, its
// credentials and the log live next to it.
func (s settings) DataDir() string { return filepath.Dir(s.DB) }

// settingKeys are the names shared by flags and the config file.
var settingKeys = []string{"gateway", "mode", "website-key", "secret-file", "listen", "push-url", "db", "read-only",
	"export-dir", "fixture-dir", "currency"}

// settingEnv maps setting names to their environment variables.
var settingEnv = map[string]string{
	"gateway": "PAYDESK_GATEWAY", "website-key": "PAYDESK_WEBSITE_KEY", "mode": "PAYDESK_MODE", "db": "PAYDESK_DB",
}

// sharedFlags registers the settings flags that the console and the
// operation commands share, with one help text; resolveSettings reads them
// back by name, so only the flags given on the command line count.
func sharedFlags(fs *flag.FlagSet) {
	fs.String("gateway", "", "gateway base URL, or \"sandbox\" for the embedded sandbox (default $PAYDESK_GATEWAY, else sandbox)")
	fs.String("mode", "", "sandbox, test or live (default $PAYDESK_MODE; guessed from --gateway: loopback is sandbox, a host with \"test\" is test, anything else LIVE)")
	fs.String("website-key", "", "website key (default $PAYDESK_WEBSITE_KEY)")
	fs.String("secret-file", "", "file holding the secret key (default $PAYDESK_SECRET_KEY)")
	fs.String("db", "", "cache file (default $PAYDESK_DB, else $XDG_DATA_HOME/paydesk/paydesk.db)")
	fs.String("config", "", "config file of key = value lines (default $PAYDESK_CONFIG, else $XDG_CONFIG_HOME/paydesk/config when it exists)")
}

// consoleFlags registers the console's flags: the shared ones and those
// only the console has (the commands take these from the config file).
func consoleFlags(fs *flag.FlagSet) {
	sharedFlags(fs)
	fs.String("listen", "", "address of the push listener (default 127.0.0.1 on a free port)")
	fs.String("push-url", "", "URL the gateway pushes to, when it is not the listener's own (a tunnel, a proxy)")
	fs.Bool("read-only", false, "look, never change: every operation is off")
	fs.Bool("demo", false, "fill the embedded sandbox with about 20 demo orders after start")
	fs.String("export-dir", "", "folder for exports (default: the current folder)")
	fs.String("fixture-dir", "", "folder for pushes saved as fixtures (default: the current folder)")
	fs.String("currency", "", "currency of new test reservations and gift card payments (default EUR)")
}

// resolveSettings combines the parsed flags, the environment and the config
// file. given lists the flags that were on the command line.
func resolveSettings(fs *flag.FlagSet, getenv func(string) string) (settings, error) {
	given := map[string]string{}
	fs.Visit(func(f *flag.Flag) { given[f.Name] = f.Value.String() })

	path, explicit := given["config"], true
	if path == "" {
		path, explicit = getenv("PAYDESK_CONFIG"), true
	}
	if path == "" {
		path, explicit = defaultConfigPath(getenv), false
	}
	file, err := readConfigFile(path)
	switch {
	case errors.Is(err, os.ErrNotExist) && !explicit:
		file, path = map[string]string{}, ""
	case err != nil:
		return settings{}, err
	}

	value := func(name string) string {
		if v, ok := given[name]; ok {
			return v
		}
		if env, ok := settingEnv[name]; ok {
			if v := getenv(env); v != "" {
				return v
			}
		}
		return file[name]
	}
	for _, k := range []string{"db", "secret-file", "export-dir", "fixture-dir"} {
		if v := file[k]; strings.HasPrefix(v, "~/") {
			file[k] = filepath.Join(homeDir(getenv), v[2:])
		}
	}
	s := settings{ConfigFile: path, Gateway: value("gateway"), WebsiteKey: value("website-key"), SecretFile: value("secret-file"),
		Listen: value("listen"), PushURL: value("push-url"), DB: value("db"), ExportDir: value("export-dir"),
		FixtureDir: value("fixture-dir"), Currency: value("currency")}
	if s.Gateway == "" {
		s.Gateway = "sandbox"
	}
	for name, dst := range map[string]*bool{"read-only": &s.ReadOnly, "demo": &s.Demo} {
		v := value(name)
		if v == "" {
			continue
		}
		b, err := strconv.ParseBool(v)
		if err != nil {
			return settings{}, fmt.Errorf("%s = %q: not true or false", name, v)
		}
		*dst = b
	}
	if s.DB == "" {
		s.DB = filepath.Join(dataHome(getenv), "paydesk", "paydesk.db")
	}
	if !s.Embedded() {
		u, err := url.Parse(s.Gateway)
		if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
			return settings{}, fmt.Errorf("gateway %q: give \"sandbox\" or an http(s) base URL", s.Gateway)
		}
	}
	mode := value("mode")
	if mode == "" {
		mode = string(guessMode(s.Gateway))
	}
	if s.Mode, err = ops.ParseMode(mode); err != nil {
		return settings{}, err
	}
	if s.Embedded() && s.Mode != ops.ModeSandbox {
		return settings{}, fmt.Errorf("mode %s needs --gateway URL: the embedded gateway is a sandbox", s.Mode)
	}
	if s.Demo && !s.Embedded() {
		return settings{}, errors.New("--demo fills the embedded sandbox; leave --gateway unset (or \"sandbox\")")
	}
	return s, nil
}

// guessMode names the gateway when no mode is given: the embedded sandbox
// and loopback addresses are sandboxes, a host with "test" in it is a test
// gateway, and anything else is treated as LIVE (the safe mistake: the
// console then asks for typed confirmations).
func guessMode(gateway string) ops.Mode {
	if gateway == "" || gateway == "sandbox" {
		return ops.ModeSandbox
	}
	u, err := url.Parse(gateway)
	if err != nil {
		return ops.ModeLive
	}
	host := u.Hostname()
	if host == "localhost" {
		return ops.ModeSandbox
	}
	if ip := net.ParseIP(host); ip != nil && ip.IsLoopback() {
		return ops.ModeSandbox
	}
	if strings.Contains(strings.ToLower(host), "test") {
		return ops.ModeTest
	}
	return ops.ModeLive
}

// dataHome is $XDG_DATA_HOME, else ~/.local/share.
func dataHome(getenv func(string) string) string {
	if d := getenv("XDG_DATA_HOME"); d != "" {
		return d
	}
	return filepath.Join(homeDir(getenv), ".local", "share")
}

// homeDir is $HOME, else the system's idea of it.
func homeDir(getenv func(string) string) string {
	if home := getenv("HOME"); home != "" {
		return home
	}
	home, _ := os.UserHomeDir()
	return home
}

// defaultConfigPath is $XDG_CONFIG_HOME/paydesk/config (~/.config/…).
func defaultConfigPath(getenv func(string) string) string {
	dir := getenv("XDG_CONFIG_HOME")
	if dir == "" {
		dir = filepath.Join(homeDir(getenv), ".config")
	}
	return filepath.Join(dir, "paydesk", "config")
}

// readConfigFile reads "key = value" lines; # starts a comment, blank
// lines are skipped, values may be quoted. Unknown keys are an error (a
// typo should not be ignored), and so is a secret: it does not belong in a
// file that is copied around; name a secret-file instead.
func readConfigFile(path string) (map[string]string, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("config file: %w", err)
	}
	defer f.Close()
	out := map[string]string{}
	sc := bufio.NewScanner(f)
	for n := 1; sc.Scan(); n++ {
		line := strings.TrimSpace(sc.Text())
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		k, v, ok := strings.Cut(line, "=")
		if !ok {
			return nil, fmt.Errorf("config file %s line %d: want key = value", path, n)
		}
		k, v = strings.ToLower(strings.TrimSpace(k)), strings.TrimSpace(v)
		if uq, err := strconv.Unquote(v); err == nil {
			v = uq
		}
		switch {
		case k == "secret" || k == "secret-key" || k == "secret_key":
			return nil, fmt.Errorf("config file %s line %d: the secret key is not read from the config file; set PAYDESK_SECRET_KEY or secret-file", path, n)
		case !known(k):
			return nil, fmt.Errorf("config file %s line %d: unknown key %q (known: %s)", path, n, k, strings.Join(settingKeys, ", "))
		}
		out[k] = v
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("config file %s: %w", path, err)
	}
	return out, nil
}

func known(k string) bool {
	for _, s := range settingKeys {
		if s == k {
			return true
		}
	}
	return false
}
