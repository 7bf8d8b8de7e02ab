package cli

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"log"
	"net"
	"net/http"
	"os"
	"os/user"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"paydesk/api"
	"paydesk/api/sandbox"
	"paydesk/internal/access"
	"paydesk/internal/ops"
	"paydesk/internal/outbox"
	"paydesk/internal/private"
	"paydesk/internal/pushrelay"
	"paydesk/internal/textsafe"
	"paydesk/pushlistener"
	"paydesk/store"
)

// runtime is paydesk wired to its gateway: the cache, the push listener,
// the embedded sandbox when no gateway is configured, and the operation
// service. The console and the operation commands both run on one, so a
// command does exactly what the same action in the console does.
type runtime struct {
	set settings
	db  *store.DB
	svc *ops.Service
	// opsCfg is svc's configuration: an owner makes a service of its own
	// from it for a client whose operator has another name.
	opsCfg ops.Config
	// sandbox is the embedded sandbox, nil on a real gateway.
	sandbox *sandbox.Sandbox
	// gatewayURL is where requests go (the embedded sandbox's loopback URL
	// when embedded); listenAddr is the push listener's bound address.
	gatewayURL string
	listenAddr string
	// intakeURL is the listener's order intake (…/orders) and creds the
	// merchant's credentials: the demo's webshop posts its orders there.
	intakeURL string
	creds     api.Credentials
	// logf writes to paydesk.log next to the cache: the terminal belongs
	// to the console or to a command's output, never to the servers.
	logf    func(string, ...any)
	closers []func()
}

// Close stops everything start started, in reverse order.
func (r *runtime) Close() {
	for i := len(r.closers) - 1; i >= 0; i-- {
		r.closers[i]()
	}
	r.closers = nil
}

// lockedHint follows store.ErrLocked: bbolt allows one process per cache,
// and waiting would only hang the command or the console. A console, serve
// or listen that holds the cache runs the commands through its socket
// (owner.go), so what is left is a command that runs by itself, or an
// owner whose socket was not found.
const lockedHint = "(a paydesk command that is still running holds the cache, or a console, serve or listen whose socket this command does not find: one started with another $XDG_RUNTIME_DIR, or by an older paydesk)"

// lockedError adds lockedHint to a store.ErrLocked, and the --db way out
// only when the cache is the default one (not when --db, $PAYDESK_DB or
// the config file named it).
func lockedError(err error, set settings, getenv func(string) string) error {
	hint := lockedHint
	if set.DB == filepath.Join(dataHome(getenv), "paydesk", "paydesk.db") {
		hint += "; close it, or point --db at another cache"
	} else {
		hint += "; close it first"
	}
	return fmt.Errorf("%w\n%s", err, hint)
}

// upgradeNotice says on w that opening the cache at path does a one-time
// upgrade, before it does: the console's screen stays empty until the
// cache is open.
func upgradeNotice(w io.Writer, name, path string) func(string) {
	return func(what string) {
		fmt.Fprintf(w, "%s: %s is from an older paydesk: %s, once (a million reservations take up to a minute)…\n", name, clean(store.RedactURL(path)), what)
	}
}

// start opens the cache (failing fast and plainly when another paydesk
// process holds it), reads the credentials, starts the push listener and,
// with no gateway configured, the embedded sandbox whose state and
// credentials live next to the cache; then the api client, which records
// every exchange in the gateway log, and the operation service. On error
// everything started is stopped.
func start(ctx context.Context, set settings, getenv func(string) string) (_ *runtime, err error) {
	r := &runtime{set: set, logf: func(string, ...any) {}}
	defer func() {
		if err != nil {
			r.Close()
		}
	}()
	key, err := auditKey(set, getenv, true)
	if err != nil {
		return nil, err
	}
	// With shop endpoints configured every push this process stores
	// records its deliveries, whoever sends them: a command's pushes wait
	// in the outbox for the next console, serve or listen that owns the
	// store (and on a team's database whichever process applies a push
	// records them).
	// The process runs a push listener (below): on a file its pushes go
	// to the file's push inbox (store.Options.PushInbox).
	db, err := store.Open(set.DB, store.Options{LockTimeout: 500 * time.Millisecond, AuditKey: key, ForwardTo: set.ForwardTo, ForwardToReadOnly: set.ReadOnly,
		PushInbox: true, Logf: func(format string, args ...any) { r.logf(format, args...) }, Upgrading: set.upgrading})
	if err != nil {
		if errors.Is(err, store.ErrLocked) {
			return nil, lockedError(err, set, getenv)
		}
		return nil, err
	}
	r.db = db
	r.closers = append(r.closers, func() { _ = db.Close() })
	// The store's endpoints are the ones pushes go to (a process given
	// none uses them; one given others was refused at open): the worker,
	// the banner and the console go by them.
	eps, err := db.ForwardTo(context.Background())
	if err != nil {
		return nil, err
	}
	set.ForwardTo, set.Forwarding = eps, len(eps) > 0
	r.set.ForwardTo, r.set.Forwarding = eps, len(eps) > 0

	if err := os.MkdirAll(set.DataDir(), 0o700); err != nil {
		return nil, fmt.Errorf("data folder: %w", err)
	}
	logFile, err := os.OpenFile(filepath.Join(set.DataDir(), "paydesk.log"), os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o600)
	if err != nil {
		return nil, fmt.Errorf("open the log: %w", err)
	}
	r.closers = append(r.closers, func() { _ = logFile.Close() })
	logger := log.New(logFile, "", log.LstdFlags)
	r.logf = func(format string, args ...any) { logger.Printf(format, args...) }

	creds, err := credentials(set, getenv)
	if err != nil {
		return nil, err
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
	r.listenAddr = pushLn.Addr().String()
	pushURL := set.PushURL
	if pushURL == "" {
		pushURL = "http://" + r.listenAddr + "/push"
	}
	r.creds, r.intakeURL = creds, pushlistener.OrdersURL(pushURL)
	listener, err := pushlistener.New(pushlistener.Config{DB: db, Verifier: api.VerifierFor(creds), PushURL: pushURL, Logf: r.logf})
	if err != nil {
		pushLn.Close()
		return nil, err
	}
	r.servePushes(listener, pushLn)

	r.gatewayURL = set.Gateway
	if set.Embedded() {
		if r.gatewayURL, err = r.startSandbox(creds, pushURL); err != nil {
			return nil, err
		}
	}
	var exMu sync.Mutex
	client, err := api.NewClient(api.Config{BaseURL: r.gatewayURL, Credentials: creds, Rules: set.Merchant.Rules(), Observe: func(x api.Exchange) {
		exMu.Lock()
		defer exMu.Unlock()
		if _, err := db.AppendExchange(ctx, store.ExchangeFrom(x)); err != nil {
			r.logf("gateway log: %v", err)
		}
	}})
	if err != nil {
		return nil, err
	}
	operator := operatorName(getenv)
	if db.Shared() {
		// On a team's database the operator is the role the database
		// vouches for, and the machine it works from; a role that may only
		// read makes a read-only console.
		role, canWrite, err := db.Identity(context.Background())
		if err != nil {
			return nil, err
		}
		operator = role + "@" + hostName()
		if !canWrite {
			r.set.ReadOnly = true
		}
	}
	oc := ops.Config{Gateway: client, Store: db, Mode: set.Mode, Operator: operator, Currency: set.Currency, Merchant: set.Merchant}
	// The one who runs this process: admin unless [users] names them.
	me := operatorName(getenv)
	oc.Principal = set.Team.principal(me, me, access.Local)
	set.Team.apply(&oc)
	if sb := r.sandbox; sb != nil {
		oc.CustomerStep = func(ctx context.Context, key, _ string, approve bool) error {
			if approve {
				return sb.Approve(ctx, key)
			}
			return sb.Decline(ctx, key)
		}
	} else if set.PushURL != "" {
		oc.PushURL = set.PushURL // tell the gateway per request where to push
	} else if set.Mode == ops.ModeSandbox && set.console && !db.Shared() {
		// A standalone sandbox on this machine and a console of one's
		// own: its pushes reach the console only if each request says
		// where to push (a real gateway keeps the push URL configured in
		// its account, which a loopback address would override). Not for
		// a command, whose listener ends with it, nor for a team, whose
		// always-on listener is where the sandbox pushes.
		oc.PushURL = pushURL
	}
	if r.svc, err = ops.New(oc); err != nil {
		return nil, err
	}
	r.opsCfg = oc
	if set.console && !r.set.ReadOnly {
		// The console and serve own the store as listen does: they deliver
		// its pushes to the shop too (a role that may only read records
		// no attempt, and leaves them to a process that may). With no
		// endpoints yet the worker waits for some (startOutbox).
		stop, err := startOutbox(context.Background(), outboxConfig{DB: db, Credentials: creds, Endpoints: set.ForwardTo,
			Schedule: set.ForwardRetries, Logf: r.logf,
			Report: func(d store.Delivery, a store.Attempt, out store.AttemptOutcome) {
				r.logf("forward %s", deliveryLine(d, a, out))
			}})
		if err != nil {
			return nil, err
		}
		r.closers = append(r.closers, stop)
	}
	return r, nil
}

// credentials are the embedded sandbox's (made once per cache folder), or
// the configured website key with the secret from $PAYDESK_SECRET_KEY or
// the secret file.
func credentials(set settings, getenv func(string) string) (api.Credentials, error) {
	if set.Embedded() {
		return embeddedCredentials(set.DataDir())
	}
	creds := api.Credentials{WebsiteKey: set.WebsiteKey}
	if creds.WebsiteKey == "" {
		return api.Credentials{}, errors.New("a gateway needs a website key: --website-key, $PAYDESK_WEBSITE_KEY or website-key in the config file")
	}
	secret, err := readSecret(set.SecretFile, getenv)
	if err != nil {
		return api.Credentials{}, err
	}
	creds.SecretKey = secret
	return creds, nil
}

// embeddedCredentials are the embedded sandbox's website key and a secret
// made once per cache folder (file 0600), so the console and the commands
// that share a cache also share the sandbox's state.
func embeddedCredentials(dir string) (api.Credentials, error) {
	path := filepath.Join(dir, "sandbox.secret")
	if err := private.CheckPath(path); err != nil {
		return api.Credentials{}, fmt.Errorf("the embedded sandbox's secret: %w", err)
	}
	b, err := private.ReadRegular(path, private.MaxSecret)
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

// serve answers on ln until the runtime closes.
func (r *runtime) serve(h http.Handler, ln net.Listener) {
	srv := &http.Server{Handler: h, ReadHeaderTimeout: 10 * time.Second, ReadTimeout: 30 * time.Second,
		WriteTimeout: 30 * time.Second, IdleTimeout: 2 * time.Minute, ErrorLog: log.New(io.Discard, "", 0)}
	go func() {
		if err := srv.Serve(ln); err != nil && !errors.Is(err, http.ErrServerClosed) {
			r.logf("serve %s: %v", ln.Addr(), err)
		}
	}()
	r.closers = append(r.closers, func() {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		_ = srv.Shutdown(ctx)
	})
}

// servePushes runs the push listener behind the net/http server that
// `paydesk listen` and the benchmarks use (pushlistener.ServeListener:
// timeouts, connection cap, first-byte deadline).
func (r *runtime) servePushes(listener *pushlistener.Server, ln net.Listener) {
	ctx, stop := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() {
		defer close(done)
		if err := listener.ServeListener(ctx, ln); err != nil {
			r.logf("push listener %s: %v", ln.Addr(), err)
		}
	}()
	r.closers = append(r.closers, func() {
		stop()
		<-done
	})
}

// startSandbox runs the embedded sandbox with its state next to the cache
// and returns its base URL; pushes it could not deliver while no paydesk
// was running go out now.
func (r *runtime) startSandbox(creds api.Credentials, pushURL string) (string, error) {
	sb, err := sandbox.New(sandbox.Config{Credentials: []api.Credentials{creds}, StatePath: filepath.Join(r.set.DataDir(), "sandbox.db"),
		PushURL: pushURL, Logf: r.logf, Merchant: r.set.Merchant})
	if err != nil {
		return "", fmt.Errorf("embedded sandbox: %w", err)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		_ = sb.Close()
		return "", fmt.Errorf("embedded sandbox: %w", err)
	}
	runCtx, stop := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- sb.Run(runCtx) }()
	r.closers = append(r.closers, func() {
		stop()
		if err := <-done; err != nil {
			r.logf("sandbox push sender: %v", err)
		}
		if err := sb.Close(); err != nil {
			r.logf("sandbox: %v", err)
		}
	})
	r.serve(sb, ln) // closes before the sender stops: no new transactions while it drains
	sb.SetPushURL(pushURL)
	r.sandbox = sb
	return "http://" + ln.Addr().String(), nil
}

// operatorName is who the audit log names: $USER, else the account the
// process runs as (services and some shells leave $USER unset).
func operatorName(getenv func(string) string) string {
	if u := getenv("USER"); u != "" {
		return u
	}
	if u, err := user.Current(); err == nil && u.Username != "" {
		return u.Username
	}
	return "unknown"
}

// hostName is this machine's name for the audit log, "unknown" when the
// system will not say.
func hostName() string {
	if h, err := os.Hostname(); err == nil && h != "" {
		return h
	}
	return "unknown"
}

// outboxConfig is what a process that owns a store with shop endpoints
// gives its outbox worker.
type outboxConfig struct {
	DB *store.DB
	// Credentials sign each push for the shop, as the gateway signs it.
	Credentials api.Credentials
	Endpoints   []string
	Schedule    []time.Duration // nil: the family's
	// Report gets every attempt; Logf the store's errors.
	Report func(d store.Delivery, a store.Attempt, out store.AttemptOutcome)
	Logf   func(format string, args ...any)
}

// outboxLeaseRetry is how long the worker waits after the store's outbox
// lease could not be taken (a database that went away).
const outboxLeaseRetry = 5 * time.Second

// startOutbox runs the outbox worker until stop is called or ctx ends:
// paydesk listen, paydesk serve and the console run it alike, whenever
// they own a store opened with shop endpoints. It sends while it holds
// the store's outbox lease (store.DB.HoldOutbox: on a file its own, on a
// team's database one worker at a time among all the processes that
// share it), and looks at once after every commit that stored pushes —
// this process's own, or another's heard through the change bus — besides
// its own schedule.
//
// A store with no endpoints yet has nothing to send: the worker waits for
// the change that gives it some (`paydesk forward-to set`, run through
// this process's socket or, on a team's database, by another process),
// reads them and starts, so a process started before need not be
// restarted.
func startOutbox(ctx context.Context, c outboxConfig) (stop func(), err error) {
	if len(c.Endpoints) > 0 {
		return runOutbox(ctx, c)
	}
	changes, unsubscribe := c.DB.Subscribe()
	ctx, cancel := context.WithCancel(ctx)
	var stopWorker func() // set by the goroutine before watched closes
	watched := make(chan struct{})
	go func() {
		defer close(watched)
		for {
			select {
			case <-ctx.Done():
				return
			case ch, ok := <-changes:
				if !ok {
					return
				}
				if !ch.Endpoints && !ch.Overflow {
					continue
				}
			}
			eps, err := c.DB.ForwardTo(ctx)
			if err != nil {
				if ctx.Err() == nil && c.Logf != nil {
					c.Logf("outbox: %v", err)
				}
				continue
			}
			if len(eps) == 0 {
				continue
			}
			c.Endpoints = eps
			stopWorker, err = runOutbox(ctx, c)
			if c.Logf != nil {
				if err != nil {
					c.Logf("outbox: %v", err)
				} else {
					shown := make([]string, len(eps))
					for i, ep := range eps {
						shown[i] = textsafe.Clean(store.EndpointShown(ep))
					}
					c.Logf("outbox: the store's forward-to is now %s: delivering", strings.Join(shown, ", "))
				}
			}
			return
		}
	}()
	return func() {
		cancel()
		<-watched
		unsubscribe()
		if stopWorker != nil {
			stopWorker()
		}
	}, nil
}

// runOutbox runs the worker for c.Endpoints (see startOutbox).
func runOutbox(ctx context.Context, c outboxConfig) (stop func(), err error) {
	sender := pushrelay.Sender{Credentials: c.Credentials, HTTP: pushrelay.NewHTTPClient(outbox.DefaultParallel * len(c.Endpoints))}
	w, err := outbox.New(outbox.Config{Store: c.DB, Send: sender.Deliver, Schedule: c.Schedule, Report: c.Report, Logf: c.Logf})
	if err != nil {
		return nil, err
	}
	changes, unsubscribe := c.DB.Subscribe()
	kicked := make(chan struct{})
	go func() {
		defer close(kicked)
		feedWorker(changes, w)
	}()
	ctx, cancel := context.WithCancel(ctx)
	worked := make(chan struct{})
	go func() {
		defer close(worked)
		for ctx.Err() == nil {
			held, release, err := c.DB.HoldOutbox(ctx)
			if err != nil {
				if ctx.Err() == nil && c.Logf != nil {
					c.Logf("outbox: %v (trying again in %s)", err, outboxLeaseRetry)
				}
				t := time.NewTimer(outboxLeaseRetry)
				select {
				case <-ctx.Done():
				case <-t.C:
				}
				t.Stop()
				continue
			}
			w.Run(held, nil)
			release()
		}
	}()
	return func() {
		cancel()
		<-worked
		unsubscribe()
		<-kicked
	}, nil
}

// worker is what the store's changes tell the outbox worker.
type worker interface {
	Arrived(n int)
	Kick()
}

// feedWorker tells w of every commit that stored pushes (they count
// towards a burst, to which it yields) or queued deliveries again (a
// resend, due at once), until changes closes.
func feedWorker(changes <-chan store.Change, w worker) {
	for ch := range changes {
		switch {
		case ch.Pushes > 0 || ch.Overflow:
			w.Arrived(ch.Pushes)
		case ch.Deliveries:
			w.Kick()
		}
	}
}
