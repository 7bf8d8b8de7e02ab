package cli

import (
	"context"
	"fmt"
	"strings"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"paydesk/internal/hub"
	"paydesk/internal/sshd"
	"paydesk/internal/textsafe"
	"paydesk/store"
)

func serveCmd(sio IO) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "serve",
		Short: "The console without its screen: owns the cache; the commands on this machine run through it",
		Long: `Own the cache as the console does, without its screen: the gateway credentials, the push
listener and order intake (and, with no gateway configured, the embedded sandbox), until
Ctrl-C. Every paydesk command on this machine that names this cache runs through it — sent
over a unix socket beside it, run here on the open cache, its output and exit code back at
the command — instead of failing because the cache is in use. Only the same OS user may
use the socket. See docs/serve.md.`,
		Example: `paydesk serve                       # the embedded sandbox, the default cache
paydesk serve --db ./shop.db --listen 127.0.0.1:8801
paydesk serve --ssh :2222               # and over SSH, to the users of paydesk user add`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			return exit(runServe(cmd.Context(), sio, cmd.Flags()))
		},
	}
	fs := cmd.Flags()
	addFlags(fs, gatewayFlags...)
	addFlags(fs, "currency")
	addFlags(fs, merchantFlags...)
	forwardFlags(fs)
	teamFlags(fs)
	sshFlags(fs)
	return cmd
}

// runServe starts the console's runtime without the console and serves
// its cache's socket until ctx ends.
func runServe(ctx context.Context, sio IO, fs *pflag.FlagSet) int {
	getenv := getenvOf(sio)
	set, err := resolveSettings(fs, getenv)
	if err != nil {
		fmt.Fprintf(sio.Stderr, "paydesk serve: %v\n", err)
		return exitUsage
	}
	so, err := resolveSSH(fs, getenv, set)
	if err != nil {
		fmt.Fprintf(sio.Stderr, "paydesk serve: %v\n", err)
		return exitUsage
	}
	if set.ReadOnly {
		fmt.Fprintf(sio.Stderr, "paydesk serve: read-only = true in %s: serve runs operations for the commands; open the console to look\n", set.ConfigFile)
		return exitFailed
	}
	// It lives as long as the console would: long enough to take the
	// pushes of its own requests.
	set.console = true
	set.upgrading = upgradeNotice(sio.Stderr, "paydesk serve", set.DB)
	rt, err := start(ctx, set, getenv)
	if err != nil {
		fmt.Fprintf(sio.Stderr, "paydesk serve: %v\n", ownedError(ctx, err, set, getenv, "paydesk serve"))
		return exitFailed
	}
	defer rt.Close()
	rt.startAutoSync(set.SyncEvery, func(line string) { fmt.Fprintf(sio.Stderr, "paydesk serve: %s\n", line) })
	if err := rt.startAlerts(set); err != nil {
		fmt.Fprintf(sio.Stderr, "paydesk serve: %v\n", err)
		return exitFailed
	}
	h := &host{what: "paydesk serve", rt: rt, db: rt.db, set: rt.set, getenv: getenv}
	var sock *hub.Server
	if !rt.db.Shared() {
		if sock, err = h.serve(); err != nil {
			fmt.Fprintf(sio.Stderr, "paydesk serve: %v\n", err)
			return exitFailed
		}
		defer sock.Close()
	}
	var ssh *sshd.Server
	if so.Addr != "" {
		if ssh, err = h.startSSH(ctx, so); err != nil {
			fmt.Fprintf(sio.Stderr, "paydesk serve: %v\n", err)
			return exitFailed
		}
		defer ssh.Close()
	}
	fmt.Fprint(sio.Stderr, serveBanner(rt, sock, ssh))
	<-ctx.Done()
	fmt.Fprintln(sio.Stderr, "paydesk serve: stopped")
	return exitOK
}

// serveBanner says what serve runs, on stderr.
func serveBanner(rt *runtime, sock *hub.Server, ssh *sshd.Server) string {
	var b strings.Builder
	gateway := rt.gatewayURL
	if rt.sandbox != nil {
		gateway += " (the embedded sandbox)"
	}
	socket := "none: a team's database, which every command opens itself"
	if sock != nil {
		socket = sock.Path() + " (the commands on this machine run through it)"
	}
	fmt.Fprintf(&b, "paydesk serve: owns %s\n", rt.db.Path())
	fmt.Fprintf(&b, "  gateway:        %s, mode %s\n", gateway, rt.set.Mode)
	fmt.Fprintf(&b, "  push listener:  http://%s/push\n", rt.listenAddr)
	fmt.Fprintf(&b, "  order intake:   %s\n", rt.intakeURL)
	if len(rt.set.ForwardTo) > 0 {
		eps := make([]string, len(rt.set.ForwardTo))
		for i, ep := range rt.set.ForwardTo {
			eps[i] = textsafe.Clean(store.EndpointShown(ep))
		}
		fmt.Fprintf(&b, "  forwarding to:  %s (every push, from the outbox: paydesk deliveries; attempts in paydesk.log)\n", strings.Join(eps, ", "))
	}
	fmt.Fprintf(&b, "  operator:       %s\n", rt.svc.Operator())
	fmt.Fprintf(&b, "  socket:         %s\n", socket)
	if ssh != nil {
		fmt.Fprintf(&b, "  ssh:            %s (ssh -p PORT USER@host; paydesk user add)\n", ssh.Addr())
	}
	b.WriteString("Ctrl-C stops it.\n")
	return b.String()
}
