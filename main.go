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
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	code := cli.Main(ctx, cli.IO{Stdin: os.Stdin, Stdout: os.Stdout, Stderr: os.Stderr, Getenv: os.Getenv,
		Interactive: term.IsTerminal(os.Stdin.Fd())}, os.Args[1:])
	stop()
	stopProfile()
	os.Exit(code)
}
