package cli

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"net"
	"net/http"
	"sync"
	"text/tabwriter"
	"time"

	"paydesk/api"
	"paydesk/api/sandbox"
	"paydesk/internal/private"
)

// runSandbox serves the sandbox gateway until ctx is cancelled (SIGINT or
// SIGTERM in main): a stand-in for the real gateway that a webshop can use
// as its test gateway.
func runSandbox(ctx context.Context, sio IO, args []string) int {
	fs := flag.NewFlagSet("paydesk sandbox", flag.ContinueOnError)
	fs.SetOutput(sio.Stderr)
	addr := fs.String("addr", "127.0.0.1:8800", "address to listen on")
	websiteKey := fs.String("website-key", "", "the accepted website key (default $PAYDESK_WEBSITE_KEY)")
	secretFile := fs.String("secret-file", "", "file holding the secret key (default: $PAYDESK_SECRET_KEY)")
	pushURL := fs.String("push-url", "", "where pushes go; a request's PushURL overrides it")
	publicURL := fs.String("public-url", "", "base URL for redirect links when clients reach the sandbox through another address")
	autocapture := fs.Bool("autocapture", false, "capture every approved reservation in full at once")
	partialRefunds := fs.Bool("partial-refunds", false, "provider B has the merchant's cards configured for partial refunds")
	statePath := fs.String("state", "", "bbolt file for the state and the push outbox (default: memory only)")
	seed := fs.Uint64("seed", 0, "make keys and numbers deterministic (0 = random)")
	fs.Usage = func() {
		fmt.Fprintln(sio.Stderr, "Usage: paydesk sandbox [flags]\n\nThe secret key is read from $PAYDESK_SECRET_KEY or --secret-file, never from a flag.\n\nFlags:")
		fs.PrintDefaults()
	}
	if code, ok := parseNoArgs(fs, sio, "paydesk sandbox", args); !ok {
		return code
	}
	getenv := sio.Getenv
	if getenv == nil {
		getenv = func(string) string { return "" }
	}
	if *websiteKey == "" {
		*websiteKey = getenv("PAYDESK_WEBSITE_KEY")
	}
	if *websiteKey == "" {
		fmt.Fprintln(sio.Stderr, "paydesk sandbox: --website-key (or $PAYDESK_WEBSITE_KEY) is required")
		return 2
	}
	secret, err := readSecret(*secretFile, getenv)
	if err != nil {
		fmt.Fprintf(sio.Stderr, "paydesk sandbox: %v\n", err)
		return 2
	}

	var logMu sync.Mutex
	logf := func(format string, args ...any) {
		logMu.Lock()
		defer logMu.Unlock()
		fmt.Fprintf(sio.Stderr, format+"\n", args...)
	}
	sb, err := sandbox.New(sandbox.Config{
		Credentials:    []api.Credentials{{WebsiteKey: *websiteKey, SecretKey: secret}},
		PushURL:        *pushURL,
		PublicBaseURL:  *publicURL,
		Autocapture:    *autocapture,
		PartialRefunds: *partialRefunds,
		StatePath:      *statePath,
		Seed:           *seed,
		Logf:           logf,
	})
	if err != nil {
		fmt.Fprintf(sio.Stderr, "paydesk sandbox: %v\n", err)
		return 1
	}
	ln, err := net.Listen("tcp", *addr)
	if err != nil {
		sb.Close()
		fmt.Fprintf(sio.Stderr, "paydesk sandbox: %v\n", err)
		return 1
	}
	base := "http://" + ln.Addr().String()
	printBanner(sio.Stdout, base, *publicURL, *pushURL, *websiteKey, sb.Cards())

	srv := &http.Server{Handler: sb, ReadHeaderTimeout: 10 * time.Second, ReadTimeout: 30 * time.Second,
		WriteTimeout: 30 * time.Second, IdleTimeout: 2 * time.Minute}
	serveErr := make(chan error, 1)
	go func() { serveErr <- srv.Serve(ln) }()
	runCtx, stopRun := context.WithCancel(context.Background())
	runDone := make(chan error, 1)
	go func() { runDone <- sb.Run(runCtx) }()

	code := 0
	select {
	case <-ctx.Done():
	case err := <-serveErr:
		logf("paydesk sandbox: serve: %v", err)
		code = 1
	}
	shutdownCtx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if err := srv.Shutdown(shutdownCtx); err != nil {
		logf("paydesk sandbox: shutdown: %v", err)
	}
	stopRun() // pushes in flight finish; the rest stay in the outbox
	if err := <-runDone; err != nil {
		logf("paydesk sandbox: push sender: %v", err)
	}
	if n := sb.PendingPushes(); n > 0 {
		where := "lost: the state is in memory only (use --state)"
		if *statePath != "" {
			where = "kept in " + *statePath
		}
		logf("paydesk sandbox: %d push(es) not acknowledged, %s", n, where)
	}
	if err := sb.Close(); err != nil {
		logf("paydesk sandbox: %v", err)
		code = 1
	}
	logf("paydesk sandbox: stopped")
	return code
}

// readSecret reads the secret from --secret-file or $PAYDESK_SECRET_KEY.
func readSecret(path string, getenv func(string) string) (string, error) {
	if path != "" {
		return private.ReadSecretFile(path, "--secret-file (or secret-file in the config)")
	}
	if s := getenv("PAYDESK_SECRET_KEY"); s != "" {
		return s, nil
	}
	return "", errors.New("no secret key: set PAYDESK_SECRET_KEY or pass --secret-file")
}

func printBanner(w io.Writer, base, publicURL, pushURL, websiteKey string, cards []sandbox.CardInfo) {
	fmt.Fprintf(w, "paydesk sandbox listening on %s\n", base)
	if publicURL != "" {
		fmt.Fprintf(w, "  public base URL  %s\n", publicURL)
	}
	fmt.Fprintf(w, "  endpoints        POST %s%s, POST %s%s\n", base, api.PathTransaction, base, api.PathDataRequest)
	fmt.Fprintf(w, "  website key      %s\n", websiteKey)
	if pushURL == "" {
		pushURL = "(none: only a request's PushURL)"
	}
	fmt.Fprintf(w, "  push URL         %s\n\nGift cards:\n", pushURL)
	tw := tabwriter.NewWriter(w, 2, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "  SERVICE\tPROVIDER\tCARD NUMBER\tPIN\tBALANCE")
	fmt.Fprintln(tw, "  any\tany\t"+api.TestCardNumber+"\tcents\tthe PIN in cents, never used up")
	for _, c := range cards {
		fmt.Fprintf(tw, "  %s\t%s\t%s\t%s\t%s %s\n", c.ServiceCode, c.Provider, c.Number, c.PIN, c.Balance.StringFixed(2), c.Currency)
	}
	tw.Flush()
	fmt.Fprintln(w)
}
