package cli

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"time"

	tea "charm.land/bubbletea/v2"
	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"paydesk/api"
	"paydesk/internal/demo"
	"paydesk/internal/hub"
	"paydesk/internal/webshop"
	"paydesk/ui"
	"paydesk/views"
)

// consoleCmd makes the root command open the console, with the console's
// own flags (the root's local flags: subcommands do not inherit them).
func consoleCmd(root *cobra.Command, sio IO) {
	fs := root.Flags()
	addFlags(fs, gatewayFlags...)
	addFlags(fs, "currency")
	addFlags(fs, merchantFlags...)
	fs.String("scan-prefix", "", "what the barcode scanner sends before each code (taken off in scan mode)")
	fs.String("scan-suffix", "", "what the barcode scanner sends after each code, before its enter (taken off in scan mode)")
	fs.Bool("read-only", false, "look, never change: every operation is off")
	fs.String("sync-every", "", "how often to ask the gateway what no push told (paydesk sync): a duration, 0 for never (default 15m)")
	forwardFlags(fs)
	teamFlags(fs)
	fs.Bool("demo", false, "fill the embedded sandbox with about 20 demo orders after start")
	fs.String("export-dir", "", "folder for exports (default: the current folder)")
	fs.String("fixture-dir", "", "folder for pushes saved as fixtures (default: the current folder)")
	root.RunE = func(cmd *cobra.Command, _ []string) error {
		return exit(runConsole(cmd.Context(), sio, cmd.Flags()))
	}
}

// runConsole opens the console: with no configuration on an embedded
// sandbox (state kept next to the cache) whose pushes go to an embedded
// listener, both on loopback ports.
func runConsole(ctx context.Context, sio IO, fs *pflag.FlagSet) int {
	getenv := getenvOf(sio)
	set, err := resolveSettings(fs, getenv)
	if err != nil {
		fmt.Fprintf(sio.Stderr, "paydesk: %v\n", err)
		return 2
	}
	if !sio.Interactive {
		// Without this the user would read bubbletea's "could not create
		// cancelable reader" and nothing about what to do instead.
		fmt.Fprintln(sio.Stderr, "paydesk: the console needs a terminal; in scripts use the commands (paydesk --help lists them)")
		return 2
	}
	set.console = true
	set.upgrading = upgradeNotice(sio.Stderr, "paydesk", set.DB)
	con, err := startConsole(ctx, set, getenv)
	if err != nil {
		fmt.Fprintf(sio.Stderr, "paydesk: %v\n", ownedError(ctx, err, set, getenv, "a second console"))
		return 1
	}
	defer con.close()

	// 120 frames a second, Bubble Tea's most: what a key changed reaches
	// the screen on the renderer's next tick. On 2,000 reservations a
	// filter key showed its rows 10.2 ms (median; p90 21.8 ms) after the
	// key against 16.4 ms (p90 26–33 ms) at the default 60 (internal/keylat,
	// both binaries side by side). An idle tick draws and writes nothing.
	opts := []tea.ProgramOption{tea.WithContext(ctx), tea.WithFPS(120)}
	if sio.Stdin != nil {
		opts = append(opts, tea.WithInput(sio.Stdin))
	}
	if sio.Stdout != nil {
		opts = append(opts, tea.WithOutput(sio.Stdout))
	}
	opts = append(opts, colorProfileOption(sio.Stdout)...)
	p := tea.NewProgram(con.app, opts...)
	con.startAutoSync(set.SyncEvery, func(line string) { p.Send(views.StatusMsg{Level: views.LevelInfo, Text: line}) })
	if err := con.startAlerts(set); err != nil {
		fmt.Fprintf(sio.Stderr, "paydesk: %v\n", err)
		return 1
	}
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

// console is the program's model on top of the runtime that the operation
// commands use too: the cache, the push listener, the embedded sandbox,
// the service and the log.
type console struct {
	*runtime
	app *ui.App
	// hub runs the commands of this machine on the console's cache.
	hub *hub.Server
}

// close stops the socket first: a command still running for a client ends
// before the runtime it runs on.
func (c *console) close() {
	if c.hub != nil {
		_ = c.hub.Close()
	}
	c.runtime.Close()
}

// startConsole starts the runtime and builds the console on it. On error
// everything started is stopped.
func startConsole(ctx context.Context, set settings, getenv func(string) string) (*console, error) {
	rt, err := start(ctx, set, getenv)
	if err != nil {
		return nil, err
	}
	con := &console{runtime: rt, app: ui.New(consoleConfig(ctx, rt, set))}
	// Without its socket the console still works; the commands then say
	// the cache is in use, as they did before there was one.
	srv, err := (&host{what: "the console", rt: rt, db: rt.db, set: rt.set, getenv: getenv}).serve()
	if err != nil {
		rt.logf("commands cannot run through the console: %v", err)
	}
	con.hub = srv
	return con, nil
}

// consoleConfig is the console's configuration on rt: the local console's,
// and each SSH session's (with a service of the session's user).
func consoleConfig(ctx context.Context, rt *runtime, set settings) ui.Config {
	cfg := ui.Config{Store: rt.db, Ops: rt.svc, Mode: set.Mode, GatewayURL: rt.gatewayURL, ListenAddr: rt.listenAddr, IntakeURL: rt.intakeURL,
		PartialRefunds: set.Merchant.PartialRefundsFor(api.ProviderB), GiftCardCodes: set.Merchant.Codes(),
		ReadOnly: rt.set.ReadOnly, Currency: set.Currency, ExportDir: set.ExportDir, FixtureDir: set.FixtureDir, Context: ctx,
		ScanPrefix: set.ScanPrefix, ScanSuffix: set.ScanSuffix, Views: set.Views,
		Forwarding: rt.set.Forwarding}
	if rt.sandbox != nil {
		cfg.Sandbox = rt.sandbox
	}
	return cfg
}

// runDemo fills the embedded sandbox and reports progress in the status
// line while the console runs.
func (c *console) runDemo(ctx context.Context, p *tea.Program) {
	status := func(level views.Level, format string, args ...any) {
		p.Send(views.StatusMsg{Level: level, Text: fmt.Sprintf(format, args...)})
	}
	status(views.LevelInfo, "demo: sending orders to the embedded sandbox…")
	// The demo's orders come from a webshop: its own gateway client (its
	// requests are not paydesk's, so not in the gateway log) and paydesk's
	// order intake, as a shop plugin would post to it.
	shopClient, err := api.NewClient(api.Config{BaseURL: c.gatewayURL, Credentials: c.creds})
	if err != nil {
		status(views.LevelError, "demo: %v", err)
		return
	}
	shop := &webshop.Shop{Gateway: shopClient, IntakeURL: c.intakeURL, Credentials: c.creds}
	sum, err := demo.Fill(ctx, demo.Config{Ops: c.svc, Shop: shop, Progress: func(done, total int) {
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
