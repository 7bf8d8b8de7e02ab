package cli

import (
	"context"
	"errors"
	"fmt"
	"github.com/shopspring/decimal"
	"io"
	"net"
	"net/http"
	"sync"
	"text/tabwriter"
	"time"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"paydesk/api"
	"paydesk/api/sandbox"
	"paydesk/internal/private"
)

// sandboxFlags are the sandbox command's own flags.
type sandboxFlags struct {
	addr, publicURL, statePath, chaos string
	seed                              uint64
	settleDays                        int
	settleFee                         string
}

func sandboxCmd(sio IO) *cobra.Command {
	var f sandboxFlags
	cmd := &cobra.Command{
		Use:   "sandbox",
		Short: "Run the sandbox gateway as a standalone server, your webshop's test gateway",
		Long: `Run the sandbox gateway as a standalone server: the whole payment interface on your
own machine, the same endpoints, signatures, statuses and pushes as the real gateway.

The secret key is read from $PAYDESK_SECRET_KEY or --secret-file, never from a flag.`,
		Example: `PAYDESK_SECRET_KEY=sandbox-secret paydesk sandbox --website-key WEBSHOP1 --push-url http://127.0.0.1:8801/push`,
		Args:    cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			return exit(runSandbox(cmd.Context(), sio, cmd.Flags(), f))
		},
	}
	fs := cmd.Flags()
	fs.StringVar(&f.addr, "addr", "127.0.0.1:8800", "address to listen on")
	fs.StringVar(&f.publicURL, "public-url", "", "base URL for redirect links when clients reach the sandbox through another address")
	addFlags(fs, merchantFlags...)
	fs.StringVar(&f.chaos, "chaos", "", "a bad day at the gateway, seeded and repeatable: e.g. seed=7,dup=0.2,reorder=0.3,drop=0.1,delay=2s/0.5,slow=1s/0.1,5xx=0.05,492=0.05 (rates 0.2 or 20%; delay and slow DURATION/RATE; see docs/sandbox.md)")
	fs.StringVar(&f.statePath, "state", "", "bbolt file for the state and the push outbox (default: memory only)")
	fs.Uint64Var(&f.seed, "seed", 0, "make keys and numbers deterministic (0 = random)")
	fs.IntVar(&f.settleDays, "settle-days", 0, "days after its success a payment or refund is on the settlement statement (GET /sandbox/statement?date=)")
	fs.StringVar(&f.settleFee, "settle-fee", "0", "what the payout keeps of every settled transaction, e.g. 0.25")
	return cmd
}

// runSandbox serves the sandbox gateway until ctx is cancelled (SIGINT or
// SIGTERM in main): a stand-in for the real gateway that a webshop can use
// as its test gateway. The website key, secret file and push URL come from
// the flags, the environment or the config file, as the console's do.
func runSandbox(ctx context.Context, sio IO, flags *pflag.FlagSet, f sandboxFlags) int {
	getenv := getenvOf(sio)
	l, err := loadLayers(flags, getenv)
	if err != nil {
		fmt.Fprintf(sio.Stderr, "paydesk sandbox: %v\n", err)
		return 2
	}
	addr, publicURL, statePath, seed := &f.addr, &f.publicURL, &f.statePath, &f.seed
	merchant, err := api.ParseMerchant(l.value)
	if err != nil {
		fmt.Fprintf(sio.Stderr, "paydesk sandbox: %v\n", err)
		return 2
	}
	var chaos *sandbox.Chaos
	if f.chaos != "" {
		if chaos, err = sandbox.ParseChaos(f.chaos); err != nil {
			fmt.Fprintf(sio.Stderr, "paydesk sandbox: --chaos: %v\n", err)
			return 2
		}
	}
	if f.settleDays < 0 || f.settleDays > 366 {
		fmt.Fprintf(sio.Stderr, "paydesk sandbox: --settle-days %d: must be from 0 to 366\n", f.settleDays)
		return 2
	}
	fee, err := decimal.NewFromString(f.settleFee)
	if err != nil || fee.IsNegative() || fee.Exponent() < -2 {
		fmt.Fprintf(sio.Stderr, "paydesk sandbox: --settle-fee %q: an amount of 0 or more with at most two decimals\n", f.settleFee)
		return 2
	}
	websiteKey, secretFile, pushURL := l.value("website-key"), l.value("secret-file"), l.value("push-url")
	if websiteKey == "" {
		fmt.Fprintln(sio.Stderr, "paydesk sandbox: --website-key (or $PAYDESK_WEBSITE_KEY, or website-key in the config file) is required")
		return 2
	}
	secret, err := readSecret(secretFile, getenv)
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
		Credentials:   []api.Credentials{{WebsiteKey: websiteKey, SecretKey: secret}},
		PushURL:       pushURL,
		PublicBaseURL: *publicURL,
		Merchant:      merchant,
		Chaos:         chaos,
		StatePath:     *statePath,
		Seed:          *seed,
		Logf:          logf,
		SettleDays:    f.settleDays,
		SettleFee:     fee,
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
	printBanner(sio.Stdout, base, *publicURL, pushURL, websiteKey, sb.Cards())
	if f.chaos != "" {
		fmt.Fprintf(sio.Stdout, "chaos: %s — pushes are duplicated, reordered, delayed or dropped and answers fail as asked, the same way for the same seed\n\n", f.chaos)
	}

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
		if err := private.CheckSecret(s); err != nil {
			return "", fmt.Errorf("$PAYDESK_SECRET_KEY: %w", err)
		}
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
	fmt.Fprintf(w, "  lookups          GET  %s%s/Status/{key}, …/Specification/{service} (both paths; signed)\n", base, api.PathTransaction)
	fmt.Fprintf(w, "  admin            POST %s/sandbox/admin/resend/{key}, GET %s/sandbox/admin/pushes/{key} (signed)\n", base, base)
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
