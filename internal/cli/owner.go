package cli

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"paydesk/internal/access"
	"paydesk/internal/hub"
	"paydesk/internal/ops"
	"paydesk/internal/sshd"
	"paydesk/store"
)

// A bbolt cache has one owner at a time. The console, paydesk serve and
// paydesk listen own theirs for as long as they run and serve a socket
// (internal/hub) beside it; a command that finds its cache owned runs
// through the owner: the same cobra command, in the owner's process, on
// the owner's open cache and runtime, with the client's stdin, stdout,
// stderr and exit code.

// ownerRuns marks the commands an owner runs for a client.
const ownerRuns = "paydesk/owner-runs"

// forwarding is a command line's way to an owner: set by the command that
// found its cache owned, then run by Main.
type forwarding struct {
	to   *hub.Client
	info hub.Info
	// direct: run here whatever happens (the owner went away between
	// finding it and sending the command).
	direct bool
}

// host is the owner's side: what a client's command runs on.
type host struct {
	// what names the owner in messages: "the console", "paydesk serve".
	what string
	// rt is the runtime, nil for paydesk listen (a cache and nothing else).
	rt  *runtime
	db  *store.DB
	set settings
	// getenv is the owner's environment (where its socket goes).
	getenv func(string) string
	// sshd is the owner's SSH server (paydesk serve --ssh), nil without.
	sshd *sshd.Server
}

// forwardedEnv are the variables a client sends with its command: those
// the commands read their settings and the operator's name from. The
// secret key is never among them: the owner has its own.
var forwardedEnv = []string{"PAYDESK_CONFIG", "PAYDESK_DB", "PAYDESK_GATEWAY", "PAYDESK_MODE", "PAYDESK_WEBSITE_KEY",
	"XDG_CONFIG_HOME", "XDG_DATA_HOME", "XDG_RUNTIME_DIR", "HOME", "USER"}

// socketPaths are where the owner of the cache set names serves its
// socket; none for a team's database, which has no single owner.
func socketPaths(cache string, getenv func(string) string) []string {
	if store.IsPostgresURL(cache) {
		return nil
	}
	return hub.Paths(cache, getenv("XDG_RUNTIME_DIR"))
}

// findOwner asks whether a process owns cache and serves its socket.
func findOwner(ctx context.Context, cache string, getenv func(string) string) (*hub.Client, hub.Info, bool) {
	paths := socketPaths(cache, getenv)
	if len(paths) == 0 {
		return nil, hub.Info{}, false
	}
	cl, info, err := hub.Dial(ctx, paths)
	if err != nil {
		return nil, hub.Info{}, false
	}
	return cl, info, true
}

// ownedBy names an owner for a message: "the console (pid 4711)".
func ownedBy(info hub.Info) string {
	return fmt.Sprintf("%s (pid %d)", clean(info.Owner), info.PID)
}

// throughOwner sends the command to the owner of its cache when there is
// one: it reports true and Main runs the command line there. Checked
// before the command reads anything, so its stdin is still the client's.
func (c *cmdContext) throughOwner(ctx context.Context) (int, bool) {
	fw := c.sio.client
	if c.sio.host != nil || fw == nil || fw.direct || c.cmd.Flags().Lookup("db") == nil {
		return 0, false
	}
	set, err := c.settings()
	if err != nil {
		return 0, false // the command says what is wrong
	}
	cl, info, ok := findOwner(ctx, set.DB, getenvOf(c.sio))
	if !ok {
		return 0, false
	}
	if c.cmd.Annotations[ownerRuns] == "" {
		cl.Close()
		fmt.Fprintf(c.sio.Stderr, "paydesk %s: %s owns the cache %s, and %s cannot run through it: %s\n",
			c.name, ownedBy(info), clean(info.Cache), c.name, notThroughOwner(c.name))
		return exitFailed, true
	}
	fw.to, fw.info = cl, info
	return exitOK, true
}

// notThroughOwner says what to do instead of a command an owner cannot run.
func notThroughOwner(name string) string {
	switch name {
	case "form":
		return "a form needs a terminal and the cache at once; open the same form in the console, or run the command instead (paydesk --help lists them)"
	}
	return "stop it first"
}

// lateOwnerWait is how long a command that found the cache locked waits
// for its owner's socket: an owner opens the cache first and serves the
// socket once its runtime is up.
const lateOwnerWait = 1500 * time.Millisecond

// forwardLate is for a command that found no socket but the cache locked:
// an owner that is starting serves its socket in a moment. It reports true
// when the command goes there (Main runs it), which is only possible while
// the command has read nothing of its stdin.
func (c *cmdContext) forwardLate(ctx context.Context, set settings) bool {
	fw := c.sio.client
	if c.sio.host != nil || fw == nil || fw.direct || c.stdinRead || c.cmd.Annotations[ownerRuns] == "" {
		return false
	}
	deadline := time.Now().Add(lateOwnerWait)
	for {
		if cl, info, ok := findOwner(ctx, set.DB, getenvOf(c.sio)); ok {
			fw.to, fw.info = cl, info
			return true
		}
		if time.Now().After(deadline) || ctx.Err() != nil {
			return false
		}
		select {
		case <-ctx.Done():
			return false
		case <-time.After(50 * time.Millisecond):
		}
	}
}

// removeStale removes the sockets of cache that nobody serves (an owner
// killed without its cleanup); the caller holds the cache's lock.
func removeStale(cache string, getenv func(string) string) {
	hub.RemoveStale(socketPaths(cache, getenv))
}

// run sends the command line to the owner fw found and returns its exit
// code. A connection that breaks after the command went out is reported as
// an unknown outcome: the command may have run, in part or whole.
func (fw *forwarding) run(ctx context.Context, sio IO, args []string) int {
	defer fw.to.Close()
	getenv := getenvOf(sio)
	req := hub.Request{Args: args, Env: map[string]string{}, Interactive: sio.Interactive, StderrTerminal: isTerminal(sio.Stderr)}
	for _, k := range forwardedEnv {
		if v := getenv(k); v != "" {
			req.Env[k] = v
		}
	}
	dir, err := os.Getwd()
	if err != nil {
		fmt.Fprintf(sio.Stderr, "paydesk: the working folder: %v\n", err)
		return exitFailed
	}
	req.Dir = dir
	code, err := fw.to.Run(ctx, req, sio.Stdin, sio.Stdout, sio.Stderr)
	switch {
	case errors.Is(err, hub.ErrNoOwner):
		// Gone before it took the command: run it here.
		sio.client = &forwarding{direct: true}
		return execute(ctx, sio, args)
	case errors.Is(err, hub.ErrBroken):
		fmt.Fprintf(sio.Stderr, "paydesk: %v\n  %s ran the command; it may have done all or part of it: look (paydesk audit, paydesk reservations) before running it again\n",
			err, ownedBy(fw.info))
		return exitOutcomeUnknown
	case err != nil:
		fmt.Fprintf(sio.Stderr, "paydesk: %v\n", err)
		return exitFailed
	}
	return code
}

// serve starts the owner's socket. On a team's database there is none:
// every command opens the database itself.
func (h *host) serve() (*hub.Server, error) {
	paths := socketPaths(h.db.Path(), h.getenv)
	if len(paths) == 0 || h.db.Shared() {
		return nil, nil
	}
	removeStale(h.db.Path(), h.getenv)
	logf := func(string, ...any) {}
	if h.rt != nil {
		logf = h.rt.logf
	}
	return hub.Listen(paths, hub.Info{Owner: h.what, PID: os.Getpid(), Cache: h.db.Path()}, h.run, logf)
}

// run runs a client's command line in this process, on the host's cache.
func (h *host) run(ctx context.Context, req hub.Request, s hub.Streams) int {
	env := req.Env
	sio := IO{Stdin: s.Stdin, Stdout: s.Stdout, Stderr: s.Stderr, Interactive: req.Interactive && s.Stdin != nil,
		Getenv: func(k string) string { return env[k] }, host: h, dir: req.Dir, stderrTerminal: req.StderrTerminal}
	root := newRoot(sio)
	if cmd, _, err := root.Find(joinOptionalValues(req.Args)); err == nil && cmd.Annotations[ownerRuns] == "" {
		name := strings.TrimPrefix(cmd.CommandPath(), "paydesk ")
		if cmd == root {
			name = "the console"
		}
		fmt.Fprintf(s.Stderr, "paydesk: %s owns this cache and runs commands for others on this machine, not %s: stop it first\n", h.what, name)
		return exitFailed
	}
	if _, ok := access.From(ctx); !ok {
		// A client of the socket: the same OS user as the owner (the
		// socket answers no other), named as its login names itself, with
		// the role the owner's config gives that name (one person alone:
		// admin).
		ctx = access.With(ctx, h.socketPrincipal(operatorName(sio.Getenv)))
	}
	return execute(ctx, sio, req.Args)
}

// sameCache says whether two paths name one cache file.
func sameCache(a, b string) bool {
	if a == b {
		return true
	}
	if store.IsPostgresURL(a) || store.IsPostgresURL(b) {
		return false
	}
	if hub.Canonical(a) == hub.Canonical(b) {
		return true
	}
	fa, errA := os.Stat(a)
	fb, errB := os.Stat(b)
	return errA == nil && errB == nil && os.SameFile(fa, fb)
}

// cacheFor is the host's cache for a command run for a client: the cache
// the command names must be the one the host owns.
func (h *host) cacheFor(set settings) (*store.DB, error) {
	if !sameCache(set.DB, h.db.Path()) {
		return nil, fmt.Errorf("%s runs this command for %s, not for %s", h.what, h.db.Path(), set.DB)
	}
	return h.db, nil
}

// runtimeFor is the host's runtime for an operation command run for a
// client: the same cache, gateway, mode and website key as the command
// would have used by itself, and the client's operator in the journal and
// the audit log (a service of its own when the name differs). The copy it
// returns closes nothing: the runtime stays the host's.
func (h *host) runtimeFor(name string, set settings, getenv func(string) string) (*runtime, error) {
	if _, err := h.cacheFor(set); err != nil {
		return nil, err
	}
	if h.rt == nil {
		return nil, fmt.Errorf("%s owns this cache: it runs the commands that read the cache and import, and %s needs a gateway; stop it first, or run %s on another cache", h.what, name, name)
	}
	hs := h.rt.set
	if gatewayOf(set) != gatewayOf(hs) || set.Mode != hs.Mode || (!set.Embedded() && set.WebsiteKey != hs.WebsiteKey) {
		return nil, fmt.Errorf("%s works with gateway %s (%s, website key %q) and this command with %s (%s, website key %q): run it with the same settings, or stop %s first",
			h.what, gatewayOf(hs), hs.Mode, hs.WebsiteKey, gatewayOf(set), set.Mode, set.WebsiteKey, h.what)
	}
	rt := *h.rt
	rt.closers = nil
	// The client is a user of this machine (the socket answers the
	// owner's own account only): its role is the owner's config's word
	// for its name, never the client's own config. Over SSH the session's
	// principal, in the context, is the one ops checks. A team's database
	// has no socket: its host runs commands over SSH only, each as its user.
	op := operatorName(getenv)
	p := hs.Team.principal(op, h.rt.opsCfg.Principal.User, access.Socket)
	if op != h.rt.svc.Operator() || p != h.rt.opsCfg.Principal {
		cfg := h.rt.opsCfg
		cfg.Operator, cfg.Principal = op, p
		svc, err := ops.New(cfg)
		if err != nil {
			return nil, err
		}
		rt.svc = svc
	}
	return &rt, nil
}

// gatewayOf names the gateway of set for comparing: the embedded sandbox,
// or the base URL without a trailing slash.
func gatewayOf(set settings) string {
	if set.Embedded() {
		return "sandbox"
	}
	return strings.TrimRight(set.Gateway, "/")
}

// path is a file named on the command line: relative to the client's
// working folder when the command runs for a client.
func (c *cmdContext) path(name string) string {
	if c.sio.dir == "" || name == "-" || filepath.IsAbs(name) {
		return name
	}
	return filepath.Join(c.sio.dir, name)
}

// markThroughOwner lets owners run cmd for their clients.
func markThroughOwner(cmd *cobra.Command) {
	if cmd.Annotations == nil {
		cmd.Annotations = map[string]string{}
	}
	cmd.Annotations[ownerRuns] = "yes"
}

// ownedError words a store.ErrLocked for what cannot run through an owner
// (a second console, paydesk serve, paydesk listen on the same cache): who
// owns the cache, when its socket says so.
func ownedError(ctx context.Context, err error, set settings, getenv func(string) string, what string) error {
	if !errors.Is(err, store.ErrLocked) {
		return err
	}
	cl, info, ok := findOwner(ctx, set.DB, getenv)
	if !ok {
		return err
	}
	cl.Close()
	return fmt.Errorf("%s owns the cache %s: commands on this machine run through it, %s does not; use it, stop it, or give this one a cache of its own (--db FILE)",
		ownedBy(info), clean(info.Cache), what)
}

// socketPrincipal is who a client of the socket acts as: name, with the
// role the owner's [users] give it (roles.go).
func (h *host) socketPrincipal(name string) access.Principal {
	owner := operatorName(h.getenv)
	if h.rt != nil && h.rt.opsCfg.Principal.User != "" {
		owner = h.rt.opsCfg.Principal.User
	}
	return h.set.Team.principal(name, owner, access.Socket)
}
