package cli

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"strings"
)

// IO is where a command reads and writes; tests pass buffers.
type IO struct {
	Stdin  io.Reader
	Stdout io.Writer
	Stderr io.Writer
	// Getenv reads the environment; tests pass a map lookup.
	Getenv func(string) string
}

// getenvOf is sio's environment, or an empty one.
func getenvOf(sio IO) func(string) string {
	if sio.Getenv != nil {
		return sio.Getenv
	}
	return func(string) string { return "" }
}

type command struct {
	name    string
	summary string
	run     func(ctx context.Context, sio IO, args []string) int
}

// commands is the table of subcommands; the console runs when none is named.
func commands() []command {
	return []command{
		{"sandbox", "run the sandbox gateway as a standalone server", runSandbox},
		{"listen", "receive, verify and store pushes and webshop orders, one line each", runListen},
		{"import", "store webshop orders: Reserve envelopes (JSON, NDJSON) or CSV order lines", runImport},
		{"reservations", "list the cached reservations (--json for scripts)", runReservations},
		{"show", "show a reservation: lines, ledger, transactions", runShow},
		{"capture", "capture a shipment: RESERVATION [ARTICLE=QTY ...]", runCapture},
		{"cancel", "cancel a reservation, or what remains of it", runCancel},
		{"refund", "refund a capture: TRANSACTION [AMOUNT] --reason REASON", runRefund},
		{"giftcard", "gift card pay|refund", runGiftCard},
		{"test-reservation", "new test reservation (sandbox/test), --approve to finish it", runTestReservation},
		{"resolve", "close an operation whose outcome is unknown, by hand", runResolve},
		{"audit", "the audit log: who did what, when, for how much", runAudit},
		{"form", "open an operation form in the terminal (capture, refund, …)", runForm},
	}
}

// Main runs paydesk with args (without the program name) and returns the
// exit code.
func Main(ctx context.Context, sio IO, args []string) int {
	if len(args) > 0 && !strings.HasPrefix(args[0], "-") {
		for _, c := range commands() {
			if c.name == args[0] {
				return c.run(ctx, sio, args[1:])
			}
		}
		if args[0] == "help" {
			usage(sio.Stdout)
			return 0
		}
		fmt.Fprintf(sio.Stderr, "paydesk: unknown command %q\n\n", args[0])
		usage(sio.Stderr)
		return 2
	}
	return runConsole(ctx, sio, args)
}

func usage(w io.Writer) {
	fmt.Fprintln(w, "Usage: paydesk [flags]            the console (embedded sandbox when no gateway is configured)")
	fmt.Fprintln(w, "       paydesk COMMAND [flags]")
	fmt.Fprintln(w, "\nCommands:")
	for _, c := range commands() {
		fmt.Fprintf(w, "  %-14s %s\n", c.name, c.summary)
	}
	fmt.Fprintln(w, "\nRun 'paydesk COMMAND -h' for a command's flags.")
}

// parseNoArgs parses the flags of a command that takes no arguments. It
// reports whether to go on and, when not, the exit code: 0 after -h, 2 for
// a bad flag or a stray argument.
func parseNoArgs(fs *flag.FlagSet, sio IO, name string, args []string) (int, bool) {
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return 0, false
		}
		return 2, false
	}
	if fs.NArg() > 0 {
		fmt.Fprintf(sio.Stderr, "%s: unexpected argument %q (paydesk help lists the commands)\n", name, fs.Arg(0))
		return 2, false
	}
	return 0, true
}
