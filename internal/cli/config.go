package cli

import (
	"errors"
	"fmt"
	"io/fs"
	"net"
	"net/url"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"time"

	"github.com/BurntSushi/toml"
	"github.com/spf13/pflag"

	"paydesk/api"
	"paydesk/internal/alert"
	"paydesk/internal/ops"
	"paydesk/internal/private"
	"paydesk/store"
	"paydesk/ui"
)

// settings is what the console and the commands run with. Each value comes
// from the first of: a flag the user set, the environment, the config
// file, the default. The secret key is never a flag (flags show in ps): it
// comes from $PAYDESK_SECRET_KEY or from the file named by --secret-file
// (or secret-file in the config).
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
	// ScanPrefix and ScanSuffix are what the barcode scanner adds around
	// each code (its setup); the capture form's scan mode takes them off.
	ScanPrefix, ScanSuffix string
	// SyncEvery is how often the console asks the gateway what no push
	// told (autosync.go); 0: never.
	SyncEvery time.Duration
	// AlertWebhook, AlertSecretFile and AlertCommand are where alerts go
	// (alerts.go): a webhook signed with the secret file's key, a command.
	AlertWebhook, AlertSecretFile, AlertCommand string
	// AlertQuiet is the silence in opening hours that is an alert (0: none).
	AlertQuiet   time.Duration
	OpeningHours alert.Hours
	// AlertDeliveryFailing is how long a shop endpoint may fail before it
	// is an alert (0: never); Forwarding is true when forward-to names
	// endpoints (the console then offers to resend to them).
	AlertDeliveryFailing time.Duration
	Forwarding           bool
	// ForwardTo are the shop endpoints every push stored is delivered to
	// (forward-to), ForwardRetries the waits between attempts (nil: the
	// family's schedule). A console or serve that owns the store runs the
	// outbox worker (wiring.go).
	ForwardTo      []string
	ForwardRetries []time.Duration
	// Views are the config's saved views ([views] name = "filter"), by
	// name; each filter parsed when the config is read.
	Views []ui.SavedView
	// Merchant is the merchant account's configuration: the embedded
	// sandbox runs with it and the forms allow what it allows.
	Merchant api.Merchant
	// console is true for the console (not a command): it lives long
	// enough to take the pushes of its own requests.
	console bool
	// upgrading is told what opening an older cache file does once
	// before it opens (store.Options.Upgrading); nil says nothing.
	upgrading func(what string)
	// localData is $XDG_DATA_HOME/paydesk: where the log and the embedded
	// sandbox live when the cache is a team's database.
	localData string
	// ConfigFile is the file that was read, "" when none.
	ConfigFile string
	// Team is who may do what (roles.go).
	Team team
}

// Embedded reports whether the console runs its own sandbox.
func (s settings) Embedded() bool { return s.Gateway == "" || s.Gateway == "sandbox" }

// DataDir is the folder of the cache: the embedded sandbox's state, its
// credentials and the log live next to it.
func (s settings) DataDir() string {
	if store.IsPostgresURL(s.DB) {
		return s.localData // a team's database: the log and the sandbox stay on this machine
	}
	return filepath.Dir(s.DB)
}

// fileConfig is the config file, $XDG_CONFIG_HOME/paydesk/config.toml. Its
// keys are the flags' names, so one name works in both places.
type fileConfig struct {
	Gateway    string `toml:"gateway"`
	Mode       string `toml:"mode"`
	WebsiteKey string `toml:"website-key"`
	SecretFile string `toml:"secret-file"`
	Listen     string `toml:"listen"`
	PushURL    string `toml:"push-url"`
	DB         string `toml:"db"`
	ReadOnly   bool   `toml:"read-only"`
	ExportDir  string `toml:"export-dir"`
	FixtureDir string `toml:"fixture-dir"`
	Currency   string `toml:"currency"`
	ScanPrefix string `toml:"scan-prefix"`
	SyncEvery  string `toml:"sync-every"`
	// The shop endpoints paydesk listen delivers every push to, and the
	// waits before each retry (outbox).
	ForwardTo      textOrList `toml:"forward-to"`
	ForwardRetries textOrList `toml:"forward-retries"`
	// Alerts (alerts.go).
	AlertWebhook    string `toml:"alert-webhook"`
	AlertSecretFile string `toml:"alert-secret-file"`
	AlertCommand    string `toml:"alert-command"`
	AlertQuiet      string `toml:"alert-quiet"`
	// AlertDeliveryFailing: a duration, or 0/off.
	AlertDeliveryFailing string `toml:"alert-delivery-failing"`
	OpeningHours         string `toml:"opening-hours"`
	ScanSuffix           string `toml:"scan-suffix"`
	// paydesk serve over SSH (sshserve.go).
	SSH        string `toml:"ssh"`
	SSHHostKey string `toml:"ssh-host-key"`
	SSHIdle    string `toml:"ssh-idle"`
	// The merchant account's settings (api.Merchant): what the sandbox
	// does and what the forms allow.
	Autocapture    bool       `toml:"autocapture"`
	PartialRefunds textOrList `toml:"partial-refunds"`
	GiftCardCodes  textOrList `toml:"gift-card-codes"`
	// A team (roles.go): four-eyes approvals, refund limits per role,
	// the role of each user of this machine.
	ApprovalOver string            `toml:"approval-over"`
	ApprovalTTL  string            `toml:"approval-ttl"`
	Roles        map[string]string `toml:"roles"`
	Users        map[string]string `toml:"users"`
	// Views are the saved views: name = filter, each a tab of the console.
	Views map[string]string `toml:"views"`
}

// textOrList is a setting that the config file may give as "B, C" or as
// ["B", "C"]; it is kept as the comma-separated text the flags use.
type textOrList string

// UnmarshalTOML implements toml.Unmarshaler.
func (t *textOrList) UnmarshalTOML(v any) error {
	switch v := v.(type) {
	case string:
		*t = textOrList(v)
	case []any:
		parts := make([]string, 0, len(v))
		for _, e := range v {
			s, ok := e.(string)
			if !ok {
				return fmt.Errorf("want text, got %v", e)
			}
			parts = append(parts, s)
		}
		*t = textOrList(strings.Join(parts, ","))
	default:
		return fmt.Errorf("want text or a list of text, got %v", v)
	}
	return nil
}

// fileKeys are the keys the config file knows, in the order the help
// lists them.
var fileKeys = []string{"gateway", "mode", "website-key", "secret-file", "listen", "push-url", "db", "read-only",
	"autocapture", "partial-refunds", "gift-card-codes",
	"export-dir", "fixture-dir", "currency", "scan-prefix", "scan-suffix", "sync-every", "forward-to", "forward-retries",
	"alert-webhook", "alert-secret-file", "alert-command", "alert-quiet", "alert-delivery-failing", "opening-hours",
	"approval-over", "approval-ttl", "roles", "users", "ssh", "ssh-host-key", "ssh-idle"}

// settingEnv maps setting names to their environment variables.
var settingEnv = map[string]string{
	"gateway": "PAYDESK_GATEWAY", "website-key": "PAYDESK_WEBSITE_KEY", "mode": "PAYDESK_MODE", "db": "PAYDESK_DB",
}

// pathKeys may start with ~/ in the config file.
var pathKeys = map[string]bool{"ssh-host-key": true, "db": true, "secret-file": true, "export-dir": true, "fixture-dir": true, "alert-secret-file": true}

// layers are the sources of the settings below the defaults: the flags of
// the command that runs (only those the user set count), the environment
// and the config file.
type layers struct {
	flags  *pflag.FlagSet
	getenv func(string) string
	file   map[string]string // key → value, only the keys the file sets
	path   string            // the config file read, "" when none
}

// loadLayers finds and reads the config file: --config, else
// $PAYDESK_CONFIG, else $XDG_CONFIG_HOME/paydesk/config.toml when it exists.
func loadLayers(flags *pflag.FlagSet, getenv func(string) string) (layers, error) {
	l := layers{flags: flags, getenv: getenv, file: map[string]string{}}
	path, explicit := l.flag("config")
	if path == "" {
		path, explicit = getenv("PAYDESK_CONFIG"), true
	}
	if path == "" {
		path, explicit = defaultConfigPath(getenv), false
	}
	file, err := readConfigFile(path)
	switch {
	case errors.Is(err, os.ErrNotExist) && !explicit:
		return l, nil
	case err != nil:
		return l, err
	}
	for k, v := range file {
		if pathKeys[k] && strings.HasPrefix(v, "~/") {
			file[k] = filepath.Join(homeDir(getenv), v[2:])
		}
	}
	l.file, l.path = file, path
	return l, nil
}

// flag is the value of a flag the user set; ok is false when the command
// has no such flag or it was left alone.
func (l layers) flag(name string) (string, bool) {
	if l.flags == nil {
		return "", false
	}
	f := l.flags.Lookup(name)
	if f == nil || !f.Changed {
		return "", false
	}
	return f.Value.String(), true
}

// value is a setting from the first layer that has it, "" when none does.
func (l layers) value(name string) string {
	if v, ok := l.flag(name); ok {
		return v
	}
	if env, ok := settingEnv[name]; ok {
		if v := l.getenv(env); v != "" {
			return v
		}
	}
	return l.file[name]
}

// resolveSettings combines the flags the user set, the environment and the
// config file into the settings of the console and the commands.
func resolveSettings(flags *pflag.FlagSet, getenv func(string) string) (settings, error) {
	l, err := loadLayers(flags, getenv)
	if err != nil {
		return settings{}, err
	}
	return l.settings()
}

func (l layers) settings() (settings, error) {
	var err error
	s := settings{ConfigFile: l.path, Gateway: l.value("gateway"), WebsiteKey: l.value("website-key"), SecretFile: l.value("secret-file"),
		Listen: l.value("listen"), PushURL: l.value("push-url"), DB: l.value("db"), ExportDir: l.value("export-dir"),
		FixtureDir: l.value("fixture-dir"), Currency: l.value("currency"), ScanPrefix: l.value("scan-prefix"), ScanSuffix: l.value("scan-suffix")}
	if s.Gateway == "" {
		s.Gateway = "sandbox"
	}
	every, serr := parseSyncEvery(l.value("sync-every"))
	if serr != nil {
		return settings{}, serr
	}
	s.SyncEvery = every
	views, verr := l.views()
	if verr != nil {
		return settings{}, verr
	}
	s.Views = views
	s.AlertWebhook, s.AlertSecretFile, s.AlertCommand = l.value("alert-webhook"), l.value("alert-secret-file"), l.value("alert-command")
	var qerr error
	if s.AlertQuiet, s.OpeningHours, qerr = parseQuiet(l.value("alert-quiet"), l.value("opening-hours")); qerr != nil {
		return settings{}, qerr
	}
	if s.AlertDeliveryFailing, qerr = parseDeliveryFailing(l.value("alert-delivery-failing")); qerr != nil {
		return settings{}, qerr
	}
	if s.ForwardTo, s.ForwardRetries, qerr = l.forwarding(); qerr != nil {
		return settings{}, qerr
	}
	s.Forwarding = len(s.ForwardTo) > 0
	if s.AlertWebhook != "" {
		u, err := url.Parse(s.AlertWebhook)
		if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
			return settings{}, fmt.Errorf("alert-webhook %q: give an absolute http(s) URL", s.AlertWebhook)
		}
		if s.AlertSecretFile == "" {
			return settings{}, errors.New("alert-webhook needs alert-secret-file: the key its requests are signed with")
		}
	}
	m, merr := api.ParseMerchant(l.value)
	if merr != nil {
		return settings{}, merr
	}
	s.Merchant = m
	if s.Team, err = l.team(); err != nil {
		return settings{}, err
	}
	for name, dst := range map[string]*bool{"read-only": &s.ReadOnly, "demo": &s.Demo} {
		v := l.value(name)
		if v == "" {
			continue
		}
		b, err := strconv.ParseBool(v)
		if err != nil {
			return settings{}, fmt.Errorf("%s = %q: not true or false", name, v)
		}
		*dst = b
	}
	s.localData = filepath.Join(dataHome(l.getenv), "paydesk")
	if s.DB == "" {
		s.DB = filepath.Join(dataHome(l.getenv), "paydesk", "paydesk.db")
	}
	if !s.Embedded() {
		u, err := url.Parse(s.Gateway)
		if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
			return settings{}, fmt.Errorf("gateway %q: give \"sandbox\" or an http(s) base URL", s.Gateway)
		}
	}
	if s.PushURL != "" {
		u, err := url.Parse(s.PushURL)
		if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
			return settings{}, fmt.Errorf("push-url %q: give an absolute http(s) URL", s.PushURL)
		}
	}
	mode := l.value("mode")
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

// defaultConfigPath is $XDG_CONFIG_HOME/paydesk/config.toml (~/.config/…).
func defaultConfigPath(getenv func(string) string) string {
	dir := getenv("XDG_CONFIG_HOME")
	if dir == "" {
		dir = filepath.Join(homeDir(getenv), ".config")
	}
	return filepath.Join(dir, "paydesk", "config.toml")
}

// maxConfigBytes bounds the config file: a few hundred bytes in practice.
const maxConfigBytes = 1 << 20

// readConfigFile reads the TOML config file into the keys it sets. Unknown
// keys are an error naming their line (a typo should not be ignored), and
// so is a secret: it does not belong in a file that is copied around; name
// a secret-file instead. The error never repeats a value.
func readConfigFile(path string) (map[string]string, error) {
	// A regular file of a sane size only: a FIFO would block the start (and
	// SIGTERM with it), /dev/zero would never end.
	data, err := private.ReadRegular(path, maxConfigBytes)
	if err != nil {
		var pe *fs.PathError
		if errors.As(err, &pe) {
			return nil, fmt.Errorf("config file: %w", err)
		}
		return nil, fmt.Errorf("config file %s %w", path, err)
	}
	var fc fileConfig
	md, err := toml.Decode(string(data), &fc)
	if err != nil {
		var pe toml.ParseError
		if errors.As(err, &pe) {
			return nil, fmt.Errorf("config file %s line %d: %s", path, pe.Position.Line, pe.Message)
		}
		// Type mismatches already name the line: "toml: line 3 (last key …): …".
		return nil, fmt.Errorf("config file %s: %s", path, strings.TrimPrefix(err.Error(), "toml: "))
	}
	if undecoded := md.Undecoded(); len(undecoded) > 0 {
		k := undecoded[0]
		name := k.String()
		line := keyLine(string(data), k)
		switch strings.ToLower(name) {
		case "secret", "secret-key", "secret_key", "secretkey":
			return nil, fmt.Errorf("config file %s line %d: the secret key is not read from the config file; set PAYDESK_SECRET_KEY or secret-file", path, line)
		}
		return nil, fmt.Errorf("config file %s line %d: unknown key %q (known: %s)", path, line, name, strings.Join(fileKeys, ", "))
	}
	values := map[string]string{"gateway": fc.Gateway, "mode": fc.Mode, "website-key": fc.WebsiteKey, "secret-file": fc.SecretFile,
		"listen": fc.Listen, "push-url": fc.PushURL, "db": fc.DB, "read-only": strconv.FormatBool(fc.ReadOnly),
		"export-dir": fc.ExportDir, "fixture-dir": fc.FixtureDir, "currency": fc.Currency, "scan-prefix": fc.ScanPrefix, "scan-suffix": fc.ScanSuffix, "sync-every": fc.SyncEvery,
		"forward-to": string(fc.ForwardTo), "forward-retries": string(fc.ForwardRetries),
		"alert-webhook": fc.AlertWebhook, "alert-secret-file": fc.AlertSecretFile, "alert-command": fc.AlertCommand,
		"alert-quiet": fc.AlertQuiet, "alert-delivery-failing": fc.AlertDeliveryFailing, "opening-hours": fc.OpeningHours,
		"ssh": fc.SSH, "ssh-host-key": fc.SSHHostKey, "ssh-idle": fc.SSHIdle,
		"autocapture": strconv.FormatBool(fc.Autocapture), "partial-refunds": string(fc.PartialRefunds), "gift-card-codes": string(fc.GiftCardCodes),
		"approval-over": fc.ApprovalOver, "approval-ttl": fc.ApprovalTTL}
	out := map[string]string{}
	for k, v := range values {
		if md.IsDefined(k) {
			out[k] = v
		}
	}
	for table, m := range map[string]map[string]string{"roles": fc.Roles, "users": fc.Users} {
		for k, v := range m {
			out[table+"."+k] = v
		}
	}
	for name, filter := range fc.Views {
		out[viewPrefix+name] = filter
	}
	return out, nil
}

// keyLine finds the line that sets key k (or opens its table). The TOML
// library reports positions only in its own errors, and an unknown key is
// not one, so the line is looked up in the text: the first line that
// assigns the key's last part, or the header of its table.
func keyLine(text string, k toml.Key) int {
	last := regexp.QuoteMeta(k[len(k)-1])
	assign := regexp.MustCompile(`^\s*(?:[\w.-]+\.)?["']?` + last + `["']?\s*=`)
	table := regexp.MustCompile(`^\s*\[\[?\s*(?:[\w.-]+\.)?["']?` + last + `["']?\s*\]`)
	for i, line := range strings.Split(text, "\n") {
		if assign.MatchString(line) || table.MatchString(line) {
			return i + 1
		}
	}
	return 0
}
