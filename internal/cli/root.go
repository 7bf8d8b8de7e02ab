package cli

import (
	"context"
	"errors"
	"fmt"
	"io"
	"runtime/debug"
	"strconv"
	"strings"

	"charm.land/fang/v2"
	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"paydesk/api"
)

// IO is where a command reads and writes; tests pass buffers.
type IO struct {
	Stdin  io.Reader
	Stdout io.Writer
	Stderr io.Writer
	// Getenv reads the environment; tests pass a map lookup.
	Getenv func(string) string
	// Interactive says someone can answer a question on Stdin (it is a
	// terminal). Without it a command that moves money needs --yes.
	Interactive bool

	// client is how a command line reaches the owner of its cache (set by
	// Main); host is set instead when the command runs in the owner for a
	// client, and dir is then the client's working folder.
	client *forwarding
	host   *host
	dir    string
	// stderrTerminal: the client's stderr is a terminal (for a client's
	// command, whose Stderr here is the stream back to it).
	stderrTerminal bool
	// outBytes bounds the lines `listen` holds for a stdout that does not
	// read (0: lineout's 1 MiB); a test fills a smaller one with fewer
	// pushes.
	outBytes int
}

// getenvOf is sio's environment, or an empty one.
func getenvOf(sio IO) func(string) string {
	if sio.Getenv != nil {
		return sio.Getenv
	}
	return func(string) string { return "" }
}

// exitError ends a command with an exit code. A nil err means the command
// has already said what went wrong (its own line, or JSON on stdout).
type exitError struct {
	code int
	err  error
}

func (e *exitError) Error() string {
	if e.err == nil {
		return fmt.Sprintf("exit %d", e.code)
	}
	return e.err.Error()
}

func (e *exitError) Unwrap() error { return e.err }

// exit turns a run function's exit code into RunE's error.
func exit(code int) error {
	if code == exitOK {
		return nil
	}
	return &exitError{code: code}
}

// Main runs paydesk with args (without the program name) and returns the
// exit code: the one place fang.Execute runs.
//
// A command whose cache another paydesk owns (the console, paydesk serve,
// paydesk listen) runs there, through the owner's socket (owner.go).
func Main(ctx context.Context, sio IO, args []string) int {
	fw := &forwarding{}
	sio.client = fw
	code := execute(ctx, sio, args)
	if fw.to != nil {
		return fw.run(ctx, sio, args)
	}
	return code
}

// execute runs the command line in this process.
func execute(ctx context.Context, sio IO, args []string) int {
	root := newRoot(sio)
	root.SetArgs(joinOptionalValues(args))
	err := fang.Execute(ctx, root, fang.WithVersion(version()), fang.WithErrorHandler(handleError))
	return exitCode(err)
}

// joinOptionalValues writes "--partial-refunds B" as "--partial-refunds=B".
// The flag alone means B (pflag's NoOptDefVal), and pflag then takes only
// the "=" form of a value: the B after a space would be an argument, which
// the console and the sandbox refuse. A next word is joined only when it
// reads as a providers list, so the flag alone before another flag or
// argument still means B.
func joinOptionalValues(args []string) []string {
	out := make([]string, 0, len(args))
	for i := 0; i < len(args); i++ {
		a := args[i]
		if a == "--" {
			return append(out, args[i:]...)
		}
		if d, ok := flagDefs[strings.TrimPrefix(a, "--")]; ok && d.kind == "providers" && strings.HasPrefix(a, "--") && i+1 < len(args) {
			next := args[i+1]
			if _, err := api.ParseProviders(next); err == nil && !strings.HasPrefix(next, "-") {
				out = append(out, a+"="+next)
				i++
				continue
			}
		}
		out = append(out, a)
	}
	return out
}

// exitCode maps Execute's error: a command's own code, else 2 (cobra and
// pflag report only usage mistakes: unknown command or flag, wrong
// arguments).
func exitCode(err error) int {
	if err == nil {
		return exitOK
	}
	var ee *exitError
	if errors.As(err, &ee) {
		return ee.code
	}
	return exitUsage
}

// handleError prints what Execute returned unless the command already did.
func handleError(w io.Writer, styles fang.Styles, err error) {
	var ee *exitError
	if errors.As(err, &ee) && ee.err == nil {
		return
	}
	fang.DefaultErrorHandler(w, styles, err)
}

// version is the module version the binary was built from: a tag or
// pseudo-version with `go install` and `go build` in a git checkout,
// "(devel)" otherwise; with the commit when the build recorded it.
func version() string {
	info, ok := debug.ReadBuildInfo()
	if !ok || info.Main.Version == "" {
		return "(devel)"
	}
	v := info.Main.Version
	for _, s := range info.Settings {
		if s.Key == "vcs.revision" && len(s.Value) >= 12 && v == "(devel)" {
			v += " " + s.Value[:12]
		}
	}
	return v
}

// flagDefs defines every flag that more than one command has, once: the
// persistent ones on the root, and the gateway settings that the console
// and the commands that talk to a gateway add with addFlags.
var flagDefs = map[string]struct{ kind, usage string }{
	"config":      {"string", "config file (default $PAYDESK_CONFIG, else $XDG_CONFIG_HOME/paydesk/config.toml)"},
	"website-key": {"string", "website key (default $PAYDESK_WEBSITE_KEY)"},
	"secret-file": {"string", "file holding the secret key (default $PAYDESK_SECRET_KEY; never a flag of its own)"},
	"push-url":    {"string", "public URL the gateway pushes to, when not the listener's own (a tunnel, a proxy)"},
	"gateway":     {"string", "gateway base URL, or \"sandbox\" for the embedded one (default $PAYDESK_GATEWAY, else sandbox)"},
	"mode":        {"string", "sandbox, test or live (default $PAYDESK_MODE, else guessed from --gateway: loopback sandbox, a host with \"test\" test, else LIVE)"},
	"db":          {"string", "cache file (default $PAYDESK_DB, else $XDG_DATA_HOME/paydesk/paydesk.db)"},
	"listen":      {"string", "address of the push listener (default 127.0.0.1 on a free port)"},
	"currency":    {"string", "currency of new test reservations and gift card payments (default EUR)"},
	"json":        {"bool", "print JSON (a stable scripting interface)"},
	// The merchant settings (api.Merchant), for the sandbox and the forms.
	"autocapture":     {"bool", "the merchant has autocapture: every approved reservation is captured in full at once"},
	"partial-refunds": {"providers", "voucher providers with partial gift card refunds configured (B; the flag alone means B)"},
	"gift-card-codes": {"string", "gift card service codes the merchant offers, comma-separated (default: the sandbox's)"},
}

// merchantFlags are the merchant settings: on the console (its embedded
// sandbox and its forms) and on paydesk sandbox.
var merchantFlags = []string{"autocapture", "partial-refunds", "gift-card-codes"}

// addFlags registers the named shared flags on fs. Their values are read
// back by name through layers, so only the flags the user set count.
func addFlags(fs *pflag.FlagSet, names ...string) {
	for _, n := range names {
		d, ok := flagDefs[n]
		if !ok {
			panic("cli: no flag " + n) // a programming error, caught by every test
		}
		switch d.kind {
		case "bool":
			fs.Bool(n, false, d.usage)
		case "providers":
			fs.String(n, "", d.usage)
			fs.Lookup(n).NoOptDefVal = "B"
		default:
			fs.String(n, "", d.usage)
		}
	}
}

// persistentFlags are on the root and so on every command.
var persistentFlags = []string{"config", "website-key", "secret-file", "push-url"}

// gatewayFlags are on the console and every command that talks to a gateway.
var gatewayFlags = []string{"gateway", "mode", "db", "listen"}

// Command groups of the root's help.
const (
	groupLook    = "look"
	groupMoney   = "money"
	groupServers = "servers"
)

func newRoot(sio IO) *cobra.Command {
	root := &cobra.Command{
		Use:   "paydesk",
		Short: "A terminal back-office console for the deferred-invoice and gift card payment services",
		Long: `A terminal back-office console for the deferred-invoice and gift card payment services.

With no command paydesk opens the console. With no gateway configured it runs an
embedded sandbox gateway and push listener on loopback; --demo fills it with about
twenty orders. Settings come from flags, then $PAYDESK_* variables, then the
config file ($XDG_CONFIG_HOME/paydesk/config.toml). The secret key comes from
$PAYDESK_SECRET_KEY or --secret-file, never from a flag.`,
		Example: `# the console on the embedded sandbox, filled with demo orders
paydesk --demo
# against a test gateway
PAYDESK_SECRET_KEY=… paydesk --gateway https://testcheckout.example.nl --website-key ABC`,
		Args: cobra.NoArgs,
	}
	root.SetIn(sio.Stdin)
	root.SetOut(sio.Stdout)
	root.SetErr(sio.Stderr)
	root.CompletionOptions.HiddenDefaultCmd = false
	addFlags(root.PersistentFlags(), persistentFlags...)
	root.AddGroup(&cobra.Group{ID: groupLook, Title: "look (read-only: the cache only)"},
		&cobra.Group{ID: groupMoney, Title: "operations"},
		&cobra.Group{ID: groupServers, Title: "servers"})
	consoleCmd(root, sio)
	for _, c := range []*cobra.Command{
		reservationsCmd(sio), showCmd(sio), transactionsCmd(sio), pushesCmd(sio), auditCmd(sio), exportsCmd(sio),
	} {
		c.GroupID = groupLook
		root.AddCommand(c)
	}
	for _, c := range []*cobra.Command{
		captureCmd(sio), cancelCmd(sio), updateCmd(sio), refundCmd(sio), giftCardCmd(sio),
		testReservationCmd(sio), resolveCmd(sio), syncCmd(sio), reconcileCmd(sio), reportCmd(sio), formCmd(sio), importCmd(sio), batchCmd(sio),
		approvalsCmd(sio), approveCmd(sio), denyCmd(sio),
		deliveriesCmd(sio), // it lists, and resends to the shop: not read-only
		forwardToCmd(sio),  // it shows, and changes the store's endpoints: not read-only
	} {
		c.GroupID = groupMoney
		root.AddCommand(c)
	}
	for _, c := range []*cobra.Command{serveCmd(sio), userCmd(sio), sandboxCmd(sio), listenCmd(sio), replayCmd(sio), dbCmd(sio)} {
		c.GroupID = groupServers
		root.AddCommand(c)
	}
	suggestCommands(root)
	return root
}

// suggestCommands makes a mistyped command an error that names the
// nearest ones ("did you mean …"), on the root and on every group of
// subcommands. Cobra suggests only for a root without Args of its own, and
// a group without a Run of its own shows its help and exits 0 on any word.
func suggestCommands(root *cobra.Command) {
	for _, c := range allCommandsOf(root) {
		if !c.HasSubCommands() {
			continue
		}
		c.Args = unknownCommand
		// Cobra applies its default distance only in its own check.
		c.SuggestionsMinimumDistance = 2
		if !c.Runnable() {
			c.RunE = func(cmd *cobra.Command, _ []string) error { return cmd.Help() }
		}
	}
}

func allCommandsOf(c *cobra.Command) []*cobra.Command {
	out := []*cobra.Command{c}
	for _, sub := range c.Commands() {
		out = append(out, allCommandsOf(sub)...)
	}
	return out
}

// unknownCommand refuses any argument of a command that takes none but
// its subcommands, naming the nearest commands.
func unknownCommand(cmd *cobra.Command, args []string) error {
	if len(args) == 0 {
		return nil
	}
	msg := fmt.Sprintf("unknown command %q for %q", args[0], cmd.CommandPath())
	if s := cmd.SuggestionsFor(args[0]); len(s) > 0 {
		for i := range s {
			s[i] = strconv.Quote(s[i])
		}
		msg += "; did you mean " + strings.Join(s, " or ")
	}
	return errors.New(msg)
}
