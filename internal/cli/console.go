package cli

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"log"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"sync"
	"time"

	tea "charm.land/bubbletea/v2"

	"paydesk/api"
	"paydesk/api/sandbox"
	"paydesk/internal/demo"
	"paydesk/internal/ops"
	"paydesk/pushlistener"
	"paydesk/store"
	"paydesk/ui"
	"paydesk/views"
)

// runConsole opens the console: with no configuration on an embedded
// sandbox (state kept next to the cache) whose pushes go to an embedded
// listener, both on loopback ports.
func runConsole(ctx context.Context, sio IO, args []string) int {
	fs := flag.NewFlagSet("paydesk", flag.ContinueOnError)
	fs.SetOutput(sio.Stderr)
	consoleFlags(fs)
	fs.Usage = func() {
		fmt.Fprintln(sio.Stderr, "Usage: paydesk [flags]            the console\n       paydesk COMMAND [flags]    (paydesk help lists them)")
		fmt.Fprintln(sio.Stderr, "\nWith no gateway configured the console runs an embedded sandbox and push listener on loopback.")
		fmt.Fprintln(sio.Stderr, "Flags beat $PAYDESK_GATEWAY, $PAYDESK_WEBSITE_KEY, $PAYDESK_MODE, $PAYDESK_DB, which beat the config file.")
		fmt.Fprintln(sio.Stderr, "The secret key comes from $PAYDESK_SECRET_KEY or --secret-file, never from a flag.\n\nFlags:")
		fs.PrintDefaults()
	}
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return 0
		}
		return 2
	}
	if fs.NArg() > 0 {
		fmt.Fprintf(sio.Stderr, "paydesk: unexpected argument %q (paydesk help lists the commands)\n", fs.Arg(0))
		return 2
	}
	getenv := getenvOf(sio)
	set, err := resolveSettings(fs, getenv)
	if err != nil {
		fmt.Fprintf(sio.Stderr, "paydesk: %v\n", err)
		return 2
	}
	con, err := startConsole(ctx, set, getenv)
	if err != nil {
		fmt.Fprintf(sio.Stderr, "paydesk: %v\n", err)
		return 1
	}
	defer con.close()

	opts := []tea.ProgramOption{tea.WithContext(ctx)}
	if sio.Stdin != nil {
		opts = append(opts, tea.WithInput(sio.Stdin))
	}
	if sio.Stdout != nil {
		opts = append(opts, tea.WithOutput(sio.Stdout))
	}
	p := tea.NewProgram(con.app, opts...)
	if set.Demo {
		go con.runDemo(ctx, p)
	}
	_, err = p.Run()
	con.app.Close()
	if err != nil && !errors.Is(err, tea.ErrProgramKilled) && ctx.Err() == nil {
		fmt.Fprintf(sio.Stderr, "paydesk: %v\n", err)
		return 1
	}
	return 0
}

// console is everything the console runs besides the program: the cache,
// the push listener, the embedded sandbox and the log.
type console struct {
	app     *ui.App
	db      *store.DB
	svc     *ops.Service
	set     settings
	logf    func(string, ...any)
	closers []func()
}

func (c *console) close() {
	for i := len(c.closers) - 1; i >= 0; i-- {
		c.closers[i]()
	}
}

// startConsole opens the cache, starts the listener (and the embedded
// sandbox) and builds the console. On error everything started is stopped.
func startConsole(ctx context.Context, set settings, getenv func(string) string) (c *console, err error) {
	c = &console{set: set}
	defer func() {
		if err != nil {
			c.close()
		}
	}()
	db, err := store.Open(set.DB, store.Options{LockTimeout: 500 * time.Millisecond})
	if err != nil {
		if errors.Is(err, store.ErrLocked) {
			return nil, fmt.Errorf("%w\n(another paydesk console or command holds it)", err)
		}
		return nil, err
	}
	c.db = db
	c.closers = append(c.closers, func() { _ = db.Close() })

	// The terminal belongs to the console: servers log to a file next to
	// the cache.
	logFile, err := os.OpenFile(filepath.Join(set.DataDir(), "paydesk.log"), os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o600)
	if err != nil {
		return nil, fmt.Errorf("open the log: %w", err)
	}
	c.closers = append(c.closers, func() { _ = logFile.Close() })
	logger := log.New(logFile, "", log.LstdFlags)
	c.logf = func(format string, args ...any) { logger.Printf(format, args...) }

	var creds api.Credentials
	if set.Embedded() {
		if creds, err = embeddedCredentials(set.DataDir()); err != nil {
			return nil, err
		}
	} else {
		creds.WebsiteKey = set.WebsiteKey
		if creds.WebsiteKey == "" {
			return nil, errors.New("a gateway needs a website key: --website-key, $PAYDESK_WEBSITE_KEY or website-key in the config file")
		}
		if creds.SecretKey, err = readSecret(set.SecretFile, getenv); err != nil {
			return nil, err
		}
	}

	// The push listener, on loopback unless told otherwise.
	listenAddr := set.Listen
	if listenAddr == "" {
		listenAddr = "127.0.0.1:0"
	}
	pushLn, err := net.Listen("tcp", listenAddr)
	if err != nil {
		return nil, fmt.Errorf("push listener: %w", err)
	}
	listenURL := "http://" + pushLn.Addr().String() + "/push"
	pushURL := set.PushURL
	if pushURL == "" {
		pushURL = listenURL
	}
	listener, err := pushlistener.New(pushlistener.Config{DB: db, Verifier: api.VerifierFor(creds), PushURL: pushURL, Logf: c.logf})
	if err != nil {
		pushLn.Close()
		return nil, err
	}
	c.serve(listener, pushLn)

	base := set.Gateway
	var sb *sandbox.Sandbox
	if set.Embedded() {
		if sb, base, err = c.startSandbox(creds, pushURL); err != nil {
			return nil, err
		}
	}
	var exMu sync.Mutex
	client, err := api.NewClient(api.Config{BaseURL: base, Credentials: creds, Observe: func(x api.Exchange) {
		exMu.Lock()
		defer exMu.Unlock()
		if _, err := db.AppendExchange(store.ExchangeFrom(x)); err != nil {
			c.logf("gateway log: %v", err)
		}
	}})
	if err != nil {
		return nil, err
	}
	operator := getenv("USER")
	if operator == "" {
		operator = "unknown"
	}
	oc := ops.Config{Gateway: client, Store: db, Mode: set.Mode, Operator: operator, Currency: set.Currency}
	if sb != nil {
		oc.CustomerStep = func(ctx context.Context, key, _ string, approve bool) error {
			if approve {
				return sb.Approve(ctx, key)
			}
			return sb.Decline(ctx, key)
		}
	} else if set.PushURL != "" {
		oc.PushURL = set.PushURL // tell the gateway per request where to push
	}
	if c.svc, err = ops.New(oc); err != nil {
		return nil, err
	}

	cfg := ui.Config{Store: db, Ops: c.svc, Mode: set.Mode, GatewayURL: base, ListenAddr: pushLn.Addr().String(),
		ReadOnly: set.ReadOnly, Currency: set.Currency, ExportDir: set.ExportDir, FixtureDir: set.FixtureDir, Context: ctx}
	if sb != nil {
		cfg.Sandbox = sb
	}
	c.app = ui.New(cfg)
	return c, nil
}

// serve answers pushes until the console closes.
func (c *console) serve(h http.Handler, ln net.Listener) {
	srv := &http.Server{Handler: h, ReadHeaderTimeout: 10 * time.Second, ReadTimeout: 30 * time.Second,
		WriteTimeout: 30 * time.Second, IdleTimeout: 2 * time.Minute, ErrorLog: log.New(io.Discard, "", 0)}
	go func() {
		if err := srv.Serve(ln); err != nil && !errors.Is(err, http.ErrServerClosed) {
			c.logf("serve %s: %v", ln.Addr(), err)
		}
	}()
	c.closers = append(c.closers, func() {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		_ = srv.Shutdown(ctx)
	})
}

// startSandbox runs the embedded sandbox with its state next to the cache;
// pushes it could not deliver while the console was closed go out now.
func (c *console) startSandbox(creds api.Credentials, pushURL string) (*sandbox.Sandbox, string, error) {
	sb, err := sandbox.New(sandbox.Config{Credentials: []api.Credentials{creds}, StatePath: filepath.Join(c.set.DataDir(), "sandbox.db"),
		PushURL: pushURL, Logf: c.logf})
	if err != nil {
		return nil, "", fmt.Errorf("embedded sandbox: %w", err)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		_ = sb.Close()
		return nil, "", fmt.Errorf("embedded sandbox: %w", err)
	}
	runCtx, stop := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- sb.Run(runCtx) }()
	c.closers = append(c.closers, func() {
		stop()
		if err := <-done; err != nil {
			c.logf("sandbox push sender: %v", err)
		}
		if err := sb.Close(); err != nil {
			c.logf("sandbox: %v", err)
		}
	})
	c.serve(sb, ln) // closes before the sender stops: no new transactions while it drains
	sb.SetPushURL(pushURL)
	return sb, "http://" + ln.Addr().String(), nil
}

// runDemo fills the embedded sandbox and reports progress in the status
// line while the console runs.
func (c *console) runDemo(ctx context.Context, p *tea.Program) {
	status := func(level views.Level, format string, args ...any) {
		p.Send(views.StatusMsg{Level: level, Text: fmt.Sprintf(format, args...)})
	}
	status(views.LevelInfo, "demo: sending orders to the embedded sandbox…")
	sum, err := demo.Fill(ctx, demo.Config{Ops: c.svc, Progress: func(done, total int) {
		status(views.LevelInfo, "demo: %d of %d orders sent", done, total)
	}})
	for _, f := range sum.Failed {
		c.logf("demo: %s", f)
	}
	switch {
	case err != nil:
		status(views.LevelError, "demo: %v", err)
	case len(sum.Failed) > 0:
		status(views.LevelWarn, "demo: %d orders in %s, %d went wrong (see %s)", sum.Orders, sum.Duration.Round(time.Millisecond), len(sum.Failed), filepath.Join(c.set.DataDir(), "paydesk.log"))
	default:
		status(views.LevelOK, "demo: %d orders in %s — browse the tabs (1–5), ? for help", sum.Orders, sum.Duration.Round(time.Millisecond))
	}
}
