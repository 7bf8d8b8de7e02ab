package cli

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"path/filepath"
	goruntime "runtime"
	"runtime/debug"
	"strconv"
	"strings"
	"time"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"paydesk/api"
	"paydesk/internal/gwsync"
	"paydesk/internal/lineout"
	"paydesk/internal/textsafe"
	"paydesk/pushlistener"
	"paydesk/store"
)

// listenFlags are the listen command's own flags.
type listenFlags struct {
	addr, dbPath    string
	tlsCert, tlsKey string
	maxConns        int
	asJSON          bool
}

func listenCmd(sio IO) *cobra.Command {
	var f listenFlags
	cmd := &cobra.Command{
		Use:   "listen",
		Short: "Receive, verify and store pushes, one line per push (a headless push receiver)",
		Long: `Receive pushes, verify their signature, store them durably and only then answer 200:
once the push is in the store's push inbox — on a cache file appended to CACHE.inbox.0/.1 and
fdatasync'd, applied a moment later (and by the next open after a crash); on a team's PostgreSQL
(--db postgres://…) committed to the database's push inbox, which one listener at a time applies.
Print one line (or one JSON object) per push on stdout once it is applied. The banner and
errors go to stderr. The secret key is read from $PAYDESK_SECRET_KEY or --secret-file.`,
		Example: `PAYDESK_SECRET_KEY=sandbox-secret paydesk listen --addr 127.0.0.1:8801 --website-key WEBSHOP1`,
		Args:    cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			return exit(runListen(cmd.Context(), sio, cmd.Flags(), f))
		},
	}
	fs := cmd.Flags()
	fs.StringVar(&f.addr, "addr", "127.0.0.1:8801", "address to listen on")
	fs.StringVar(&f.dbPath, "db", "", "cache file or postgres:// URL for the pushes (default $XDG_DATA_HOME/paydesk/listen.db, beside the console's)")
	fs.BoolVar(&f.asJSON, "json", false, "print one JSON object per line")
	fs.StringVar(&f.tlsCert, "tls-cert", "", "serve HTTPS with this certificate chain (PEM file; needs --tls-key)")
	fs.StringVar(&f.tlsKey, "tls-key", "", "the private key of --tls-cert (PEM file)")
	fs.IntVar(&f.maxConns, "max-conns", 8192, "connections held at once; at the cap a new one replaces the oldest that has not delivered a signed request")
	forwardFlags(fs)
	addFlags(fs, "gateway")
	fs.String("sync-every", "", "with a gateway URL: how often to ask it what no push told (paydesk sync): a duration, 0 for never (default 15m)")
	return cmd
}

// runListen receives, verifies and stores pushes until ctx ends, printing
// one line (or one JSON object) per push on stdout; the banner and errors go
// to stderr so stdout can be piped. The website key, secret file and push
// URL come from the flags, the environment or the config file.
func runListen(ctx context.Context, sio IO, flags *pflag.FlagSet, f listenFlags) int {
	getenv := getenvOf(sio)
	l, err := loadLayers(flags, getenv)
	if err != nil {
		fmt.Fprintf(sio.Stderr, "paydesk listen: %v\n", err)
		return 2
	}
	addr, dbPath, asJSON := &f.addr, &f.dbPath, &f.asJSON
	websiteKey, secretFile, pushURLValue := l.value("website-key"), l.value("secret-file"), l.value("push-url")
	pushURL := &pushURLValue
	if websiteKey == "" {
		fmt.Fprintln(sio.Stderr, "paydesk listen: --website-key (or $PAYDESK_WEBSITE_KEY, or website-key in the config file) is required")
		return 2
	}
	secret, err := readSecret(secretFile, getenv)
	if err != nil {
		fmt.Fprintf(sio.Stderr, "paydesk listen: %v\n", err)
		return 2
	}
	syncEvery, err := parseSyncEvery(l.value("sync-every"))
	if err != nil {
		fmt.Fprintf(sio.Stderr, "paydesk listen: %v\n", err)
		return 2
	}
	var lookups *api.Client // the gateway to sync with; nil without one
	if gw := l.value("gateway"); gw != "" && gw != "sandbox" && syncEvery > 0 {
		if lookups, err = api.NewClient(api.Config{BaseURL: gw, Credentials: api.Credentials{WebsiteKey: websiteKey, SecretKey: secret}}); err != nil {
			fmt.Fprintf(sio.Stderr, "paydesk listen: --gateway: %v\n", err)
			return 2
		}
	}
	if *dbPath == "" {
		// A team's database from the environment or the config file is
		// shared with the consoles; a file stays the listener's own, so a
		// console and a listener on one machine do not lock each other out.
		if v := l.value("db"); store.IsPostgresURL(v) {
			*dbPath = v
		} else {
			*dbPath = defaultListenDBPath(getenv)
		}
	}
	key, err := store.AuditKeyFromSecret(secret) // settling an operation completes its audit entry
	if err != nil {
		fmt.Fprintf(sio.Stderr, "paydesk listen: %v\n", err)
		return 2
	}
	forward, schedule, err := l.forwarding()
	if err != nil {
		fmt.Fprintf(sio.Stderr, "paydesk listen: %v\n", err)
		return 2
	}
	// The pushes go to the file's push inbox, answered once appended
	// (store.Options.PushInbox); on a team's database to its inbox.
	db, err := store.Open(*dbPath, store.Options{AuditKey: key, ForwardTo: forward, PushInbox: true,
		Logf:      func(format string, args ...any) { fmt.Fprintf(sio.Stderr, "paydesk listen: "+format+"\n", args...) },
		Upgrading: upgradeNotice(sio.Stderr, "paydesk listen", *dbPath)})
	if err != nil {
		fmt.Fprintf(sio.Stderr, "paydesk listen: %v\n", ownedError(ctx, err, settings{DB: *dbPath}, getenv, "a listener"))
		return 1
	}
	defer db.Close()
	// The store's endpoints are the ones pushes go to: a listener given
	// none forwards to them all the same (store/outbox_endpoints.go).
	if forward, err = db.ForwardTo(ctx); err != nil {
		fmt.Fprintf(sio.Stderr, "paydesk listen: %v\n", err)
		return 1
	}
	// The commands of this machine that read this cache (or import into
	// it) run through the listener while it holds it.
	sock, err := (&host{what: "paydesk listen", db: db, set: settings{DB: *dbPath}, getenv: getenv}).serve()
	if err != nil {
		fmt.Fprintf(sio.Stderr, "paydesk listen: commands cannot run through the listener: %v\n", err)
	}
	if sock != nil {
		defer sock.Close()
	}

	// Both outputs go through bounded buffers (internal/lineout): a
	// reader that stalls loses lines, counted, never an acknowledgement.
	errOut := lineout.New(sio.Stderr, lineout.Options{})
	defer func() { _ = errOut.Close(time.Second) }()
	format := printLine
	if *asJSON {
		format = printJSON
	}
	lines := newLinePrinter(sio.Stdout, format, errOut, *asJSON, sio.outBytes)
	defer lines.close()
	observe := lines.print
	// Every push stored records a delivery per endpoint of the store in
	// its own commit (store/outbox.go); the worker sends them and survives
	// a restart by reading them back. With no endpoints yet it waits for
	// `paydesk forward-to set` (startOutbox).
	stopWork, err := startOutbox(ctx, outboxConfig{DB: db, Credentials: api.Credentials{WebsiteKey: websiteKey, SecretKey: secret},
		Endpoints: forward, Schedule: schedule,
		Report: func(d store.Delivery, a store.Attempt, out store.AttemptOutcome) {
			lines.out.Line("forward " + deliveryLine(d, a, out) + "\n")
		},
		Logf: func(format string, args ...any) { errOut.Printf("paydesk listen: "+format, args...) }})
	if err != nil {
		fmt.Fprintf(sio.Stderr, "paydesk listen: %v\n", err)
		return 2
	}
	defer stopWork()
	if !db.Shared() && (l.value("alert-webhook") != "" || l.value("alert-command") != "") {
		// The listener's own file is read by no console: it sends the
		// alert of a failing shop endpoint itself (alerts.go).
		set, err := l.settings()
		var stopAlerts func()
		if err == nil {
			stopAlerts, err = listenAlerts(set, db, db.Path(), time.Now, func(format string, args ...any) {
				errOut.Printf("paydesk listen: "+format, args...)
			})
		}
		if err != nil {
			fmt.Fprintf(sio.Stderr, "paydesk listen: %v\n", err)
			return 2
		}
		if stopAlerts != nil {
			defer stopAlerts()
		}
	}
	srv, err := pushlistener.New(pushlistener.Config{
		DB:       db,
		Verifier: api.VerifierFor(api.Credentials{WebsiteKey: websiteKey, SecretKey: secret}),
		PushURL:  *pushURL,
		Logf: func(format string, args ...any) {
			errOut.Printf("paydesk listen: "+format, args...)
		},
		Observe: observe,
		HTTP:    pushlistener.HTTPOptions{TLSCertFile: f.tlsCert, TLSKeyFile: f.tlsKey, MaxConns: f.maxConns},
	})
	if err != nil {
		fmt.Fprintf(sio.Stderr, "paydesk listen: %v\n", err)
		return 1
	}
	// Set before the banner, which tells a watcher the listener runs.
	// The single writer applies each batch on a P of its own; with twice as
	// many Ps as the runtime's default the handlers keep preparing pushes
	// meanwhile, commits are about twice as large and the listener takes
	// 5–20 % more pushes a second (docs/store.md). GOMAXPROCS in the
	// environment wins; the old setting is back when the command returns.
	if getenv("GOMAXPROCS") == "" {
		defer goruntime.GOMAXPROCS(goruntime.GOMAXPROCS(2 * goruntime.GOMAXPROCS(0)))
	}
	// The live heap is a few MB (bbolt's pages are mapped, not on the
	// heap) while every push allocates about 9 KB, so at GOGC=100 the
	// collector would run some forty times a second under load and take a
	// tenth of the CPU; at 400 it runs a quarter as often for a few tens
	// of MB more. GOGC in the environment wins.
	if getenv("GOGC") == "" {
		defer debug.SetGCPercent(debug.SetGCPercent(400))
	}
	// GOGC=400 lets the heap grow to five times what is live; with
	// thousands of connections held (each a goroutine and its buffers)
	// that would be most of a gigabyte. A soft limit makes the collector
	// run more often instead once the heap nears it. GOMEMLIMIT wins.
	if getenv("GOMEMLIMIT") == "" {
		defer debug.SetMemoryLimit(debug.SetMemoryLimit(listenMemoryLimit))
	}
	bound, err := srv.Listen(*addr)
	if err != nil {
		fmt.Fprintf(sio.Stderr, "paydesk listen: %v\n", err)
		return 1
	}
	scheme := "http"
	if srv.TLS() {
		scheme = "https"
	}
	signedOver := *pushURL
	if signedOver == "" {
		// Not the Host header, which the sender chooses: the address the
		// connection arrived on (pushlistener.Config.PushURL).
		signedOver = scheme + "://" + bound.String() + "/<path> (the address each push arrives on; --push-url for a host name)"
	}
	intakeURL := scheme + "://" + bound.String() + pushlistener.OrdersPath
	if *pushURL != "" {
		intakeURL = pushlistener.OrdersURL(*pushURL)
	}
	socket := "none"
	if sock != nil {
		socket = sock.Path() + " (commands on this cache run through it)"
	}
	errOut.Printf("paydesk listen: listening on %s://%s\n  signature over: %s\n  order intake:   %s (the shop's Reserve envelope, signed over this URL)\n  website key:    %s\n  cache:          %s\n  socket:         %s",
		scheme, bound, signedOver, intakeURL, websiteKey, db.Path(), socket)
	if lookups != nil {
		// What the gateway did that no push told (its back office, a
		// push it gave up on): asked at start and every syncEvery.
		syncCtx, stopSync := context.WithCancel(ctx)
		tick := time.NewTicker(syncEvery)
		synced := make(chan struct{})
		go func() {
			defer close(synced)
			// A listener has no screen to draw first: it asks at once.
			autoSync(syncCtx, at(time.Time{}), tick.C, func(ctx context.Context) (gwsync.Result, error) {
				return gwsync.Run(ctx, db, lookups, gwsync.Options{Operator: "paydesk listen"})
			}, func(res gwsync.Result, err error) {
				if line := syncLine(res, err); line != "" {
					errOut.Printf("paydesk listen: %s", line)
				}
			})
		}()
		defer func() { stopSync(); tick.Stop(); <-synced }()
		errOut.Printf("paydesk listen: syncing with %s every %s", clean(lookups.BaseURL()), syncEvery)
	}
	if err := srv.Serve(ctx); err != nil {
		errOut.Printf("paydesk listen: %v", err)
		return 1
	}
	errOut.Printf("paydesk listen: stopped")
	return 0
}

// listenMemoryLimit is the Go heap's soft limit while listening.
const listenMemoryLimit = 192 << 20

// linePrinter formats each event on the handler's goroutine and hands the
// line to a bounded buffer (lineout) that a goroutine of its own writes:
// when the output cannot keep up, lines are dropped and counted (on stderr
// at once, on stdout before the next line that gets through), and the
// handler goes on to answer.
type linePrinter struct {
	out    *lineout.Writer
	format func(io.Writer, pushlistener.Event)
	asJSON bool
}

func newLinePrinter(w io.Writer, format func(io.Writer, pushlistener.Event), notice *lineout.Writer, asJSON bool, maxBytes int) *linePrinter {
	opts := lineout.Options{MaxBytes: maxBytes, Notice: notice, NoticeText: func(n uint64) string {
		return fmt.Sprintf("paydesk listen: stdout is not being read: %d lines dropped so far (pushes are still stored and answered)", n)
	}}
	if asJSON {
		opts.DroppedLine = func(n uint64) string { return fmt.Sprintf(`{"droppedLines":%d}`, n) }
	}
	return &linePrinter{out: lineout.New(w, opts), format: format, asJSON: asJSON}
}

func (p *linePrinter) print(e pushlistener.Event) {
	var b strings.Builder
	if n := e.Suppressed; n > 0 {
		if p.asJSON {
			fmt.Fprintf(&b, "{\"moreRejected\":%d}\n", n)
		} else {
			fmt.Fprintf(&b, "… %d more rejected requests not shown one by one (the rejected log counts them)\n", n)
		}
	}
	if !e.Record.ReceivedAt.IsZero() {
		p.format(&b, e)
	}
	if b.Len() > 0 {
		p.out.Line(b.String())
	}
}

// close writes what is queued, waiting at most a second for a reader that
// stalled.
func (p *linePrinter) close() { _ = p.out.Close(time.Second) }

// defaultListenDBPath keeps the listener's pushes beside the console's cache
// but in a file of their own, so both can run at once.
func defaultListenDBPath(getenv func(string) string) string {
	return filepath.Join(dataHome(getenv), "paydesk", "listen.db")
}

// printLine writes one human line: time, outcome, envelope, key, invoice,
// service, kind, status, amount, signature verdict. Every field that came
// from outside is cleaned of control and escape sequences.
func printLine(w io.Writer, e pushlistener.Event) {
	_, _ = w.Write(appendPushLine(make([]byte, 0, 256), e))
}

// appendPushLine appends printLine's line to dst. The listener prints one
// for every push it answers, so the line is appended field by field into
// one buffer (fmt and a builder per line were most of its cost).
func appendPushLine(b []byte, e pushlistener.Event) []byte {
	r := e.Record
	c := textsafe.Clean
	b = r.ReceivedAt.AppendFormat(b, "2006-01-02T15:04:05.000Z07:00")
	if o := e.Order; o != nil {
		b = append(b, "  ORDER "...)
		b = strconv.AppendInt(b, int64(e.HTTPStatus), 10)
		b = append(append(append(append(b, "  invoice "...), dash(c(o.Invoice))...), "  "...), o.Outcome...)
		if o.Lines > 0 {
			b = append(b, "  "...)
			b = strconv.AppendInt(b, int64(o.Lines), 10)
			b = append(append(append(b, " lines  amount "...), o.Amount.StringFixed(2)...), ' ')
			b = append(append(append(b, c(o.Currency)...), "  customer "...), dash(c(o.Customer))...)
		}
		if o.ReservationKey != "" {
			b = append(append(b, "  reservation "...), c(o.ReservationKey)...)
		} else if o.Outcome == "imported" {
			b = append(b, "  (waiting for its Reserve push)"...)
		}
		if o.Reason != "" {
			b = append(append(b, "  reason "...), c(o.Reason)...)
		}
		return append(b, '\n')
	}
	if r.Rejected {
		b = append(b, "  REJECTED "...)
		b = strconv.AppendInt(b, int64(e.HTTPStatus), 10)
	} else {
		b = append(b, "  #"...)
		b = strconv.AppendUint(b, r.ID, 10)
	}
	field := func(b []byte, name, v string) []byte {
		b = append(b, "  "...)
		if name != "" {
			b = append(append(b, name...), ' ')
		}
		if v == "" {
			return append(b, '-')
		}
		return append(b, c(v)...)
	}
	b = field(b, "", r.Envelope)
	b = field(b, "key", r.Key)
	b = field(b, "invoice", r.Invoice)
	b = field(b, "service", r.Service)
	b = field(b, "", r.Kind)
	if r.Status.Code != 0 {
		b = append(b, "  status "...)
		b = strconv.AppendInt(b, int64(r.Status.Code), 10)
		if r.Status.SubCode != "" {
			b = append(append(b, '/'), c(r.Status.SubCode)...)
		}
	} else {
		b = append(b, "  status -"...)
	}
	switch {
	case r.AmountShown():
		b = field(b, "amount", strings.TrimSpace(money(r.Amount)+" "+r.Currency))
	case r.Envelope != api.EnvelopeDataRequest: // a data request's AmountDebit 0 is no amount
		b = field(b, "amount", "")
	}
	b = field(b, "signature", r.Signature)
	if r.Rejected {
		return append(field(b, "reason", r.Reason), '\n')
	}
	// The push log's words: applied, confirmed, duplicate, ignored (why).
	word, detail := e.Result.Outcome()
	b = field(b, "", word)
	if detail != "" {
		b = append(append(append(b, " ("...), c(detail)...), ')')
	}
	return append(b, '\n')
}

// pushLine is the --json form: a stable scripting interface, camelCase keys.
type pushLine struct {
	Time       time.Time `json:"time"`
	ID         uint64    `json:"id,omitempty"`
	HTTPStatus int       `json:"httpStatus"`
	Envelope   string    `json:"envelope,omitempty"`
	Key        string    `json:"key,omitempty"`
	Invoice    string    `json:"invoice,omitempty"`
	Service    string    `json:"service,omitempty"`
	Kind       string    `json:"kind,omitempty"`
	Status     int       `json:"status,omitempty"`
	SubCode    string    `json:"subCode,omitempty"`
	StatusTime string    `json:"statusTime,omitempty"`
	Amount     string    `json:"amount,omitempty"`
	Currency   string    `json:"currency,omitempty"`
	Signature  string    `json:"signature"`
	Rejected   bool      `json:"rejected"`
	Reason     string    `json:"reason,omitempty"`
	Duplicate  bool      `json:"duplicate,omitempty"`
	Applied    bool      `json:"applied"`
	Ignored    string    `json:"ignored,omitempty"`
}

// printJSON writes one JSON object per line. Untrusted fields are cleaned
// as for the human line: encoding/json escapes C0 controls but passes C1
// ones through, and people do read JSON lines in a terminal.
func printJSON(w io.Writer, e pushlistener.Event) {
	r := e.Record
	c := textsafe.Clean
	if o := e.Order; o != nil {
		b, err := json.Marshal(orderLine{Time: r.ReceivedAt.UTC(), HTTPStatus: e.HTTPStatus, Order: true, Invoice: c(o.Invoice), Result: o.Outcome,
			Lines: o.Lines, Amount: o.Amount.StringFixed(2), Currency: c(o.Currency), Customer: c(o.Customer), Reservation: o.ReservationKey, Reason: c(o.Reason)})
		if err == nil {
			_, _ = w.Write(append(b, '\n'))
		}
		return
	}
	l := pushLine{Time: r.ReceivedAt.UTC(), ID: r.ID, HTTPStatus: e.HTTPStatus, Envelope: r.Envelope, Key: c(r.Key), Invoice: c(r.Invoice),
		Service: c(r.Service), Kind: c(r.Kind), Status: r.Status.Code, SubCode: c(r.Status.SubCode), Currency: c(r.Currency),
		Signature: r.Signature, Rejected: r.Rejected, Reason: c(r.Reason), Duplicate: e.Result.Duplicate,
		Applied: e.Result.Applied, Ignored: r.Ignored}
	if r.Rejected {
		l.ID = 0 // the rejected log numbers its own entries
	}
	if !r.Status.Time.IsZero() {
		l.StatusTime = r.Status.Time.UTC().Format(time.RFC3339)
	}
	if r.AmountShown() {
		l.Amount = money(r.Amount)
	}
	b, err := json.Marshal(l)
	if err != nil {
		return
	}
	_, _ = w.Write(append(b, '\n'))
}

// orderLine is the --json form of a request to the order intake.
type orderLine struct {
	Time        time.Time `json:"time"`
	HTTPStatus  int       `json:"httpStatus"`
	Order       bool      `json:"order"`
	Invoice     string    `json:"invoice,omitempty"`
	Result      string    `json:"result"`
	Lines       int       `json:"lines,omitempty"`
	Amount      string    `json:"amount,omitempty"`
	Currency    string    `json:"currency,omitempty"`
	Customer    string    `json:"customer,omitempty"`
	Reservation string    `json:"reservation,omitempty"`
	Reason      string    `json:"reason,omitempty"`
}

// splitEndpoints reads the config's forward-to, a list kept as text with
// commas between its URLs: a comma inside a URL (a query such as
// ?tags=a,b) stays in it, since only a part that begins with a scheme
// starts the next URL.
func splitEndpoints(v string) []string {
	var out []string
	for _, part := range strings.Split(v, ",") {
		switch {
		case strings.Contains(part, "://"):
			out = append(out, strings.TrimSpace(part))
		case len(out) > 0:
			out[len(out)-1] += "," + part
		case strings.TrimSpace(part) != "":
			out = append(out, strings.TrimSpace(part)) // no URL: CheckEndpoint says so
		}
	}
	for i := range out {
		out[i] = strings.TrimSpace(out[i])
	}
	return out
}

// forwardFlags are the outbox's flags: on listen, serve and the console,
// every process that owns a store and receives pushes.
func forwardFlags(fs *pflag.FlagSet) {
	fs.StringArray("forward-to", nil, "deliver every verified push, re-signed for this URL, to your shop from a durable outbox, retried until it answers 200 (repeatable; default forward-to in the config file)")
	fs.String("forward-retries", "", "the waits before each retry of a delivery, e.g. 10s,30s,1m (default the gateway family's: 10s … 24h, about 3 days)")
}

// forwarding is the shop endpoints (--forward-to, repeatable, else
// forward-to in the config file, a list) and the retry schedule
// (--forward-retries or forward-retries; nil: the family's).
func (l layers) forwarding() ([]string, []time.Duration, error) {
	var flag *pflag.Flag
	if l.flags != nil {
		flag = l.flags.Lookup("forward-to")
	}
	var forward []string
	if flag != nil && flag.Changed && flag.Value.Type() == "stringArray" {
		forward, _ = l.flags.GetStringArray("forward-to") // each flag one URL, commas and all
	} else {
		forward = splitEndpoints(l.value("forward-to"))
	}
	seen := map[string]bool{}
	for _, ep := range forward {
		if err := store.CheckEndpoint(ep); err != nil {
			return nil, nil, err
		}
		if seen[ep] {
			return nil, nil, fmt.Errorf("forward-to %q: given twice", ep)
		}
		seen[ep] = true
	}
	retries := l.value("forward-retries")
	if retries == "" {
		return forward, nil, nil
	}
	var schedule []time.Duration
	for i, v := range strings.Split(retries, ",") {
		d, err := time.ParseDuration(strings.TrimSpace(v))
		if err != nil || d <= 0 {
			return nil, nil, fmt.Errorf("forward-retries: step %d %q: want a positive duration such as 30s or 2h", i+1, v)
		}
		schedule = append(schedule, d)
	}
	return forward, schedule, nil
}

// deliveryLine is the line printed per attempt; what came from the shop
// is inert already (the worker cleans it).
func deliveryLine(d store.Delivery, a store.Attempt, out store.AttemptOutcome) string {
	s := fmt.Sprintf("#%d %s -> %s", d.ID, textsafe.Clean(d.Key), textsafe.Clean(d.Endpoint))
	if a.Error != "" {
		s += ": no answer after " + a.Latency.Round(time.Millisecond).String() + ": " + a.Error
	} else {
		s += fmt.Sprintf(": %d %s in %s", a.Status, http.StatusText(a.Status), a.Latency.Round(time.Millisecond))
		if a.Excerpt != "" && a.Status != http.StatusOK {
			s += ": " + a.Excerpt
		}
	}
	switch {
	case out.Delivered:
		s += " (delivered)"
	case out.GaveUp:
		s += " (given up: paydesk deliveries resend " + fmt.Sprint(d.ID) + ")"
	case !out.NextAt.IsZero():
		s += " (next try " + out.NextAt.UTC().Format(time.RFC3339) + ")"
	}
	return s
}
