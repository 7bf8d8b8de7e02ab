package cli

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"flag"
	"fmt"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"paydesk/api"
	"paydesk/api/sandbox"
	"paydesk/internal/ops"
	"paydesk/pushlistener"
	"paydesk/store"
)

// opsFlags are the flags every operation command shares.
type opsFlags struct {
	gateway    string
	websiteKey string
	secretFile string
	db         string
	mode       string
	json       bool
	wait       time.Duration
}

func (f *opsFlags) register(fs *flag.FlagSet) {
	fs.StringVar(&f.gateway, "gateway", "", "gateway base URL, or \"sandbox\" for the embedded sandbox (default $PAYDESK_GATEWAY or sandbox)")
	fs.StringVar(&f.websiteKey, "website-key", "", "website key (default $PAYDESK_WEBSITE_KEY)")
	fs.StringVar(&f.secretFile, "secret-file", "", "file holding the secret key (default $PAYDESK_SECRET_KEY)")
	fs.StringVar(&f.db, "db", "", "cache file (default $PAYDESK_DB or the user data dir)")
	fs.StringVar(&f.mode, "mode", "", "gateway mode: sandbox, test or live (default $PAYDESK_MODE; sandbox for the embedded one)")
	fs.BoolVar(&f.json, "json", false, "print JSON (a stable scripting interface)")
	fs.DurationVar(&f.wait, "wait", ops.DefaultWait, "how long to wait for the push that settles the operation")
}

// opsEnv is what an operation command runs with: the cache, the service,
// and with the embedded sandbox the sandbox and a push receiver for the
// command's duration.
type opsEnv struct {
	db       *store.DB
	svc      *ops.Service
	embedded bool
	closers  []func()
}

func (e *opsEnv) Close() {
	for i := len(e.closers) - 1; i >= 0; i-- {
		e.closers[i]()
	}
}

func getenvOf(sio IO) func(string) string {
	if sio.Getenv != nil {
		return sio.Getenv
	}
	return func(string) string { return "" }
}

// defaultDBPath is $XDG_DATA_HOME/paydesk/paydesk.db (or ~/.local/share).
func defaultDBPath(getenv func(string) string) string {
	if p := getenv("PAYDESK_DB"); p != "" {
		return p
	}
	dir := getenv("XDG_DATA_HOME")
	if dir == "" {
		home := getenv("HOME")
		if home == "" {
			home, _ = os.UserHomeDir()
		}
		dir = filepath.Join(home, ".local", "share")
	}
	return filepath.Join(dir, "paydesk", "paydesk.db")
}

// embeddedCredentials are the embedded sandbox's website key and a secret
// made once per cache folder (file 0600), so the console and the commands
// that share a cache also share the sandbox's state.
func embeddedCredentials(dir string) (api.Credentials, error) {
	path := filepath.Join(dir, "sandbox.secret")
	b, err := os.ReadFile(path)
	if errors.Is(err, os.ErrNotExist) {
		raw := make([]byte, 24)
		if _, err := rand.Read(raw); err != nil {
			return api.Credentials{}, err
		}
		b = []byte(hex.EncodeToString(raw))
		if err := os.WriteFile(path, b, 0o600); err != nil {
			return api.Credentials{}, fmt.Errorf("write %s: %w", path, err)
		}
	} else if err != nil {
		return api.Credentials{}, fmt.Errorf("read %s: %w", path, err)
	}
	return api.Credentials{WebsiteKey: "PAYDESKEMBEDDED", SecretKey: strings.TrimSpace(string(b))}, nil
}

// openOpsEnv resolves the flags, opens the cache (failing fast and plainly
// when the console holds it) and wires the service; with the embedded
// sandbox it starts the sandbox and a push receiver on loopback.
func openOpsEnv(ctx context.Context, sio IO, f opsFlags) (*opsEnv, error) {
	getenv := getenvOf(sio)
	gateway := f.gateway
	if gateway == "" {
		gateway = getenv("PAYDESK_GATEWAY")
	}
	embedded := gateway == "" || gateway == "sandbox"
	modeName := f.mode
	if modeName == "" {
		modeName = getenv("PAYDESK_MODE")
	}
	if modeName == "" && !embedded {
		modeName = string(ops.ModeTest)
	}
	mode, err := ops.ParseMode(modeName)
	if err != nil {
		return nil, err
	}
	if embedded && mode != ops.ModeSandbox {
		return nil, fmt.Errorf("--mode %s needs --gateway URL; the embedded gateway is a sandbox", mode)
	}
	dbPath := f.db
	if dbPath == "" {
		dbPath = defaultDBPath(getenv)
	}
	db, err := store.Open(dbPath, store.Options{LockTimeout: 500 * time.Millisecond})
	if err != nil {
		if errors.Is(err, store.ErrLocked) {
			return nil, fmt.Errorf("%w\n(the console holds the cache; run the command with the console closed, or point --db at another cache)", err)
		}
		return nil, err
	}
	env := &opsEnv{db: db, embedded: embedded}
	env.closers = append(env.closers, func() { _ = db.Close() })

	var creds api.Credentials
	var base string
	var customerStep func(ctx context.Context, key, redirect string, approve bool) error
	if embedded {
		creds, err = embeddedCredentials(filepath.Dir(dbPath))
		if err != nil {
			env.Close()
			return nil, err
		}
		base, customerStep, err = env.startEmbedded(ctx, creds, filepath.Join(filepath.Dir(dbPath), "sandbox.db"))
		if err != nil {
			env.Close()
			return nil, err
		}
	} else {
		base = gateway
		creds.WebsiteKey = f.websiteKey
		if creds.WebsiteKey == "" {
			creds.WebsiteKey = getenv("PAYDESK_WEBSITE_KEY")
		}
		creds.SecretKey, err = readSecret(f.secretFile, getenv)
		if err != nil {
			env.Close()
			return nil, err
		}
	}
	var exMu sync.Mutex
	client, err := api.NewClient(api.Config{BaseURL: base, Credentials: creds, Observe: func(x api.Exchange) {
		exMu.Lock()
		defer exMu.Unlock()
		_, _ = db.AppendExchange(store.ExchangeFrom(x))
	}})
	if err != nil {
		env.Close()
		return nil, err
	}
	operator := getenv("USER")
	if operator == "" {
		operator = "unknown"
	}
	svc, err := ops.New(ops.Config{Gateway: client, Store: db, Mode: mode, Operator: operator, CustomerStep: customerStep})
	if err != nil {
		env.Close()
		return nil, err
	}
	env.svc = svc
	return env, nil
}

// startEmbedded runs the persisted sandbox and a loopback push receiver
// for the command's duration. Pushes the sandbox could not deliver earlier
// (the console was closed) go out to this receiver now.
func (e *opsEnv) startEmbedded(ctx context.Context, creds api.Credentials, statePath string) (string, func(context.Context, string, string, bool) error, error) {
	sb, err := sandbox.New(sandbox.Config{Credentials: []api.Credentials{creds}, StatePath: statePath})
	if err != nil {
		return "", nil, fmt.Errorf("embedded sandbox: %w", err)
	}
	gwLn, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		_ = sb.Close()
		return "", nil, err
	}
	pushLn, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		gwLn.Close()
		_ = sb.Close()
		return "", nil, err
	}
	pushURL := "http://" + pushLn.Addr().String() + "/push"
	listener, err := pushlistener.New(pushlistener.Config{DB: e.db, Verifier: api.VerifierFor(creds), PushURL: pushURL})
	if err != nil {
		gwLn.Close()
		pushLn.Close()
		_ = sb.Close()
		return "", nil, err
	}
	gw := &http.Server{Handler: sb, ReadHeaderTimeout: 5 * time.Second}
	recv := &http.Server{Handler: listener, ReadHeaderTimeout: 5 * time.Second}
	go func() { _ = gw.Serve(gwLn) }()
	go func() { _ = recv.Serve(pushLn) }()
	runCtx, stop := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- sb.Run(runCtx) }()
	sb.SetPushURL(pushURL)
	e.closers = append(e.closers, func() {
		sctx, cancel := context.WithTimeout(context.Background(), 3*time.Second)
		defer cancel()
		_ = gw.Shutdown(sctx)
		stop()
		<-done
		_ = recv.Shutdown(sctx)
		_ = sb.Close()
	})
	step := func(ctx context.Context, key, _ string, approve bool) error {
		if approve {
			return sb.Approve(ctx, key)
		}
		return sb.Decline(ctx, key)
	}
	return "http://" + gwLn.Addr().String(), step, nil
}
