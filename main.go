// Command paydesk is a terminal back-office console for the deferred-invoice
// and gift card services behind one JSON gateway. main only wires: the
// command line lives in internal/cli.
package main

import (
	"context"
	"os"
	"os/signal"
	"syscall"

	"github.com/charmbracelet/x/term"

	"paydesk/internal/cli"
)

func main() {
	stopProfile := startProfile()
	ctx, stop := signal.NotifyContext(context.Background(), stopSignals(signal.Ignored)...)
	code := cli.Main(ctx, cli.IO{Stdin: os.Stdin, Stdout: os.Stdout, Stderr: os.Stderr, Getenv: os.Getenv,
		Interactive: term.IsTerminal(os.Stdin.Fd())}, os.Args[1:])
	stop()
	stopProfile()
	os.Exit(code)
}

// stopSignals are the signals that end paydesk in order — the context is
// cancelled, the operation in flight journaled, the cache closed with its
// clean-close mark. SIGHUP is one of them: a closed terminal window, a
// killed tmux session or a dropped SSH connection sends it, and without a
// handler the process died on the spot and the next start checked every
// page of the file (16 s on a million reservations). Unless it is
// ignored: under nohup the operator asked paydesk to outlive the terminal,
// and handling SIGHUP would undo that.
//
// ignored is signal.Ignored, a parameter so that a test does not depend on
// how its own process was started.
func stopSignals(ignored func(os.Signal) bool) []os.Signal {
	sigs := []os.Signal{os.Interrupt, syscall.SIGTERM}
	if !ignored(syscall.SIGHUP) {
		sigs = append(sigs, syscall.SIGHUP)
	}
	return sigs
}
