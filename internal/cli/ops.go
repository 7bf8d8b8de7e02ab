package cli

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"
	"time"

	"github.com/shopspring/decimal"
	"github.com/spf13/cobra"

	"paydesk/api"
	"paydesk/internal/ops"
	"paydesk/internal/textsafe"
	"paydesk/store"
)

// Exit codes of the operation commands.
const (
	exitOK             = 0
	exitFailed         = 1 // refused, failed, or could not run
	exitUsage          = 2
	exitOutcomeUnknown = 3 // sent, no trustworthy answer: check before doing anything else
)

// opsFlags are the flags of the commands; the settings flags are read
// back by resolveSettings.
type opsFlags struct {
	json    bool
	quiet   bool // lists: only the numbers or keys, for $(…)
	wait    time.Duration
	yes     bool   // money-moving commands: do not ask (sandbox and test)
	confirm string // money-moving commands: the invoice number, typed beforehand (live)
}

// settings are the command's settings, resolved as the console resolves its
// own. For a client's command the paths it names are the client's: relative
// to its working folder.
func (c *cmdContext) settings() (settings, error) {
	fs := c.cmd.Flags()
	if c.sio.dir != "" {
		for _, name := range []string{"config", "db", "secret-file"} {
			if f := fs.Lookup(name); f != nil && f.Changed && f.Value.String() != "" && !store.IsPostgresURL(f.Value.String()) {
				if err := f.Value.Set(c.path(f.Value.String())); err != nil {
					return settings{}, err
				}
			}
		}
	}
	set, err := resolveSettings(fs, getenvOf(c.sio))
	if err == nil && !store.IsPostgresURL(set.DB) {
		set.DB = c.path(set.DB)
	}
	return set, err
}

// cmdContext is one operation command.
type cmdContext struct {
	name  string
	sio   IO
	flags opsFlags
	cmd   *cobra.Command
	args  []string // positional arguments
	set   settings // resolved by open
	// keyErr is why openCache has no audit key (auditKey), if it has none.
	keyErr error
	// stdinRead: the command has read from stdin (a manifest, a PIN), so
	// it can no longer be handed to the owner of its cache.
	stdinRead bool
}

// command builds the cobra command that runs run with this context.
func (c *cmdContext) command(use, short string, args cobra.PositionalArgs, run func(context.Context, *cmdContext) int) *cobra.Command {
	cmd := &cobra.Command{Use: use, Short: short, Args: args, RunE: func(cmd *cobra.Command, a []string) error {
		c.cmd, c.args = cmd, a
		if code, ok := c.throughOwner(cmd.Context()); ok {
			return exit(code)
		}
		return exit(run(cmd.Context(), c))
	}}
	markThroughOwner(cmd)
	c.cmd = cmd
	return cmd
}

// lookFlags are the flags of the commands that only read the cache.
func (c *cmdContext) lookFlags() {
	addFlags(c.cmd.Flags(), "db")
	c.cmd.Flags().BoolVar(&c.flags.json, "json", false, flagDefs["json"].usage)
}

// gatewayFlags are the flags of the commands that talk to a gateway.
func (c *cmdContext) gatewayFlags() {
	fs := c.cmd.Flags()
	addFlags(fs, gatewayFlags...)
	fs.BoolVar(&c.flags.json, "json", false, flagDefs["json"].usage)
	fs.DurationVar(&c.flags.wait, "wait", ops.DefaultWait, "how long to wait for the push that settles the operation")
}

// moneyFlags are the confirmation flags of the commands that move money.
func (c *cmdContext) moneyFlags() {
	c.gatewayFlags()
	fs := c.cmd.Flags()
	fs.BoolVar(&c.flags.yes, "yes", false, "do not ask (sandbox and test; scripts)")
	fs.StringVar(&c.flags.confirm, "confirm", "", "against a live gateway: the invoice number, typed beforehand instead of at the prompt")
}

func (c *cmdContext) fail(err error) int {
	if c.flags.json {
		_ = writeJSON(c.sio.Stdout, map[string]any{"error": clean(err.Error())})
	}
	fmt.Fprintf(c.sio.Stderr, "paydesk %s: %s\n", c.name, clean(err.Error()))
	return exitFailed
}

// usage reports a mistake in the arguments: exit 2.
func (c *cmdContext) usage(format string, args ...any) int {
	fmt.Fprintf(c.sio.Stderr, "paydesk %s: %s\n", c.name, fmt.Sprintf(format, args...))
	return exitUsage
}

// open resolves the settings exactly as the console does (flags, then the
// environment, then the config file) and starts the same runtime.
func (c *cmdContext) open(ctx context.Context) (*runtime, int) {
	getenv := getenvOf(c.sio)
	set, err := c.settings()
	if err != nil {
		c.fail(err)
		return nil, exitUsage // the configuration is wrong, as the console says too
	}
	if set.ReadOnly {
		// Only the config file can say read-only to a command.
		return nil, c.fail(fmt.Errorf("read-only = true in %s: nothing sent", set.ConfigFile))
	}
	c.set = set
	if h := c.sio.host; h != nil {
		rt, err := h.runtimeFor(c.name, set, getenv)
		if err != nil {
			return nil, c.fail(err)
		}
		return rt, -1
	}
	set.upgrading = upgradeNotice(c.sio.Stderr, "paydesk "+c.name, set.DB)
	env, err := start(ctx, set, getenv)
	if err != nil {
		if errors.Is(err, store.ErrLocked) && c.forwardLate(ctx, set) {
			return nil, exitOK // Main runs it through the owner
		}
		return nil, c.fail(err)
	}
	removeStale(set.DB, getenv)
	return env, -1
}

// openCache opens the cache for the commands that only look: no sandbox,
// no listener, no log, no credentials, and no file is created. A cache
// that does not exist yet reads as empty (nil, -1).
func (c *cmdContext) openCache() (*store.DB, int) {
	set, err := c.settings()
	if err != nil {
		c.fail(err)
		return nil, exitUsage // the configuration is wrong, as the console says too
	}
	c.set = set
	if h := c.sio.host; h != nil {
		db, err := h.cacheFor(set)
		if err != nil {
			return nil, c.fail(err)
		}
		return db, -1
	}
	if _, err := os.Stat(set.DB); errors.Is(err, os.ErrNotExist) && !store.IsPostgresURL(set.DB) {
		return nil, -1
	}
	// The commands that read make no key file; a key that cannot be had
	// leaves the entries' keys unchecked, and audit --verify says why.
	key, keyErr := auditKey(set, getenvOf(c.sio), false)
	c.keyErr = keyErr
	ctx := c.cmd.Context()
	if ctx == nil {
		ctx = context.Background() // a command not run by cobra (tests)
	}
	return c.openStore(ctx, set, store.Options{LockTimeout: 500 * time.Millisecond, AuditKey: key}, func(err error) error {
		return lockedError(err, set, getenvOf(c.sio))
	})
}

// openStore opens the cache for a command that runs by itself. A cache
// another process holds goes to its owner when one serves it (exitOK and
// no cache: Main runs the command there), else it fails with locked's
// words. A socket a killed owner left behind is removed once the cache is
// open.
func (c *cmdContext) openStore(ctx context.Context, set settings, opts store.Options, locked func(error) error) (*store.DB, int) {
	if opts.Upgrading == nil {
		opts.Upgrading = upgradeNotice(c.sio.Stderr, "paydesk "+c.name, set.DB)
	}
	db, err := store.Open(set.DB, opts)
	if err != nil {
		if errors.Is(err, store.ErrLocked) {
			if c.forwardLate(ctx, set) {
				return nil, exitOK
			}
			err = locked(err)
		}
		return nil, c.fail(err)
	}
	removeStale(set.DB, getenvOf(c.sio))
	return db, -1
}

// closeCache closes a cache the command opened; an owner's stays open.
func (c *cmdContext) closeCache(db *store.DB) {
	if db != nil && (c.sio.host == nil || db != c.sio.host.db) {
		_ = db.Close()
	}
}

func writeJSON(w io.Writer, v any) error {
	enc := json.NewEncoder(w)
	enc.SetEscapeHTML(false)
	enc.SetIndent("", "  ")
	return enc.Encode(v)
}

// clean makes text from outside inert before it reaches a terminal; line
// feeds are kept (multi-line messages).
func clean(s string) string { return textsafe.CleanLines(s) }

func money(d decimal.Decimal) string { return d.StringFixed(2) }

// ---- JSON shapes (a stable scripting interface; camelCase keys) ----

type lineJSON struct {
	ArticleNumber string `json:"articleNumber"`
	Title         string `json:"title"`
	Type          string `json:"type,omitempty"`
	Price         string `json:"price"`
	Vat           string `json:"vat"`
	Reserved      int    `json:"reserved"`
	Captured      int    `json:"captured"`
	Cancelled     int    `json:"cancelled"`
	Refunded      int    `json:"refunded"`
	Remaining     int    `json:"remaining"`
}

type txJSON struct {
	Key           string `json:"key"`
	Kind          string `json:"kind"`
	Status        int    `json:"status"`
	SubCode       string `json:"subCode,omitempty"`
	Amount        string `json:"amount"`
	Currency      string `json:"currency"`
	InvoiceNumber string `json:"invoiceNumber,omitempty"`
	Original      string `json:"original,omitempty"`
	Refunded      string `json:"refunded"`
	Refundable    string `json:"refundable"`
	Created       string `json:"created,omitempty"`
	// Parcels a capture shipped, from the warehouse's manifest.
	Parcels []parcelJSON `json:"parcels,omitempty"`
}

type parcelJSON struct {
	Parcel   string `json:"parcel,omitempty"`
	Tracking string `json:"tracking,omitempty"`
}

type reservationJSON struct {
	ReservationNumber string `json:"reservationNumber"`
	Key               string `json:"key"`
	Invoice           string `json:"invoice"`
	State             string `json:"state"`
	// LinesKnown is false for a reservation seen only in its Reserve push
	// (its order never arrived): amount and remaining are then unknown.
	LinesKnown     bool       `json:"linesKnown"`
	Amount         string     `json:"amount"`
	Captured       string     `json:"captured"`
	Refunded       string     `json:"refunded,omitempty"`
	Remaining      string     `json:"remaining"`
	Currency       string     `json:"currency"`
	Customer       string     `json:"customer,omitempty"`
	Country        string     `json:"country,omitempty"`
	Created        string     `json:"created,omitempty"`
	DaysLeft       int        `json:"daysLeft"`
	OutcomeUnknown bool       `json:"outcomeUnknown"`
	IsTest         bool       `json:"isTest"`
	Lines          []lineJSON `json:"lines,omitempty"`
	Transactions   []txJSON   `json:"transactions,omitempty"`
	// OrderConflicts are orders for this invoice the intake refused (409)
	// because they had other lines.
	OrderConflicts []conflictJSON `json:"orderConflicts,omitempty"`
}

type conflictJSON struct {
	Source   string `json:"source"`
	Received string `json:"received,omitempty"`
	Lines    string `json:"lines"`
	Amount   string `json:"amount"`
}

func conflictOut(o *store.Order) conflictJSON {
	parts := make([]string, 0, len(o.Articles))
	for _, a := range o.Articles {
		parts = append(parts, fmt.Sprintf("%s ×%d at %s", clean(a.Number), a.Quantity, money(a.Price)))
	}
	return conflictJSON{Source: clean(o.Source), Received: timeText(o.Received), Lines: strings.Join(parts, ", "), Amount: money(o.Amount())}
}

func timeText(t time.Time) string {
	if t.IsZero() {
		return ""
	}
	// UTC, so every command's JSON writes a time the same way whatever
	// location the record was read in.
	return t.UTC().Format(time.RFC3339)
}

func reservationOut(r *store.Reservation, txs []*store.Transaction, now time.Time) reservationJSON {
	out := reservationJSON{ReservationNumber: r.ReservationNumber, Key: r.Key, Invoice: clean(r.Invoice), State: string(r.State()), LinesKnown: r.LinesKnown,
		Amount: money(r.Amount()), Captured: money(r.CapturedAmount), Remaining: money(r.RemainingAmount()), Currency: r.Currency,
		Customer: clean(r.CustomerName), Country: r.Country, Created: timeText(r.Created), DaysLeft: r.DaysLeft(now),
		OutcomeUnknown: r.OutcomeUnknown, IsTest: r.IsTest, Lines: []lineJSON{}}
	if r.RefundedAmount.IsPositive() {
		out.Refunded = money(r.RefundedAmount)
	}
	for _, l := range r.Lines {
		out.Lines = append(out.Lines, lineJSON{ArticleNumber: clean(l.ArticleNumber), Title: clean(l.Title), Type: l.Type,
			Price: money(l.Price), Vat: l.Vat.String(), Reserved: l.Reserved, Captured: l.Captured, Cancelled: l.Cancelled,
			Refunded: l.Refunded, Remaining: l.Remaining()})
	}
	for _, t := range txs {
		out.Transactions = append(out.Transactions, txOut(t))
	}
	return out
}

func txOut(t *store.Transaction) txJSON {
	out := txJSON{Key: t.Key, Kind: string(t.Kind), Status: t.Status.Code, SubCode: t.Status.SubCode, Amount: money(t.Amount),
		Currency: t.Currency, InvoiceNumber: clean(t.InvoiceNumber), Original: t.Original, Refunded: money(t.Refunded),
		Refundable: money(t.Refundable()), Created: timeText(t.Created)}
	for _, p := range t.Parcels {
		out.Parcels = append(out.Parcels, parcelJSON{Parcel: clean(p.ID), Tracking: clean(p.Tracking)})
	}
	return out
}

type errorItemJSON struct {
	List    string `json:"name"`
	Error   string `json:"error"`
	Message string `json:"message"`
}

type resultJSON struct {
	OK               bool            `json:"ok"`
	OpID             uint64          `json:"opId,omitempty"`
	Action           string          `json:"action"`
	Target           string          `json:"target"`
	State            string          `json:"state"`
	Key              string          `json:"key,omitempty"`
	Status           int             `json:"status,omitempty"`
	SubCode          string          `json:"subCode,omitempty"`
	StatusText       string          `json:"statusText,omitempty"`
	InvoiceNumber    string          `json:"invoiceNumber,omitempty"`
	Invoice          string          `json:"invoice,omitempty"`
	Amount           string          `json:"amount,omitempty"`
	Currency         string          `json:"currency,omitempty"`
	RedirectURL      string          `json:"redirectUrl,omitempty"`
	Remainder        string          `json:"remainder,omitempty"`
	GroupTransaction string          `json:"groupTransaction,omitempty"`
	PushReceived     bool            `json:"pushReceived"`
	Error            string          `json:"error,omitempty"`
	FieldErrors      []fieldErrJSON  `json:"fieldErrors,omitempty"`
	GatewayErrors    []errorItemJSON `json:"gatewayErrors,omitempty"`
	Warning          string          `json:"warning,omitempty"`
	// Approval is the approval request the operation became (state
	// awaiting_approval: nothing sent) or carried out.
	Approval uint64 `json:"approval,omitempty"`
	Message  string `json:"message,omitempty"`
}

type fieldErrJSON struct {
	Field string `json:"field"`
	Group string `json:"group,omitempty"`
	Rule  string `json:"rule"`
}

// report prints an operation's outcome (a line, or JSON) and returns the
// exit code: 0 done, 3 outcome unknown, 1 anything else.
func (c *cmdContext) report(res ops.Result, err error, pushed bool) int {
	out := resultJSON{OK: err == nil && res.OK(), OpID: res.OpID, Action: res.Action, Target: res.Target, State: string(res.State),
		Key: res.Key, Status: res.Status, SubCode: res.SubCode, StatusText: res.StatusText(), InvoiceNumber: clean(res.InvoiceNumber),
		Invoice: clean(res.Invoice), Currency: res.Currency, RedirectURL: clean(res.RedirectURL), GroupTransaction: res.GroupTransaction,
		PushReceived: pushed, Warning: res.Warning, Approval: res.Approval}
	if res.AwaitsApproval() {
		out.State, out.Message = "awaiting_approval", clean(res.Message)
	}
	if !res.Amount.IsZero() {
		out.Amount = money(res.Amount)
	}
	if res.Remainder.IsPositive() {
		out.Remainder = money(res.Remainder)
	}
	if out.State == "" {
		out.State = "refused"
	}
	if err != nil {
		out.Error = clean(err.Error())
		var ve *api.ValidationError
		if errors.As(err, &ve) {
			for _, f := range ve.Fields {
				out.FieldErrors = append(out.FieldErrors, fieldErrJSON{Field: f.Field, Group: f.Group, Rule: f.Rule})
			}
		}
	}
	for _, e := range res.Errors {
		out.GatewayErrors = append(out.GatewayErrors, errorItemJSON{List: clean(e.Name), Error: clean(e.Error), Message: clean(e.ErrorMessage)})
	}
	code := exitOK
	switch {
	case res.OutcomeUnknown():
		code = exitOutcomeUnknown
	case !out.OK:
		code = exitFailed
	}
	if c.flags.json {
		_ = writeJSON(c.sio.Stdout, out)
		return code
	}
	w := c.sio.Stdout
	if code != exitOK {
		w = c.sio.Stderr
	}
	fmt.Fprintln(w, humanResult(res, err, pushed))
	return code
}

func humanResult(res ops.Result, err error, pushed bool) string {
	var b strings.Builder
	switch {
	case res.OutcomeUnknown():
		fmt.Fprintf(&b, "OUTCOME UNKNOWN: %s %s (operation %d) was sent but no trustworthy answer came back; it is NOT retried.\n", actionWord(res), res.Target, res.OpID)
		if res.Message != "" {
			fmt.Fprintf(&b, "  Why: %s\n", clean(res.Message))
		}
		fmt.Fprintf(&b, "  The gateway's push settles it; or check the gateway and run: paydesk resolve %d --note \"…\"", res.OpID)
		if pushed {
			b.WriteString("\n  Settled by its push meanwhile.")
		}
		return b.String()
	case err == nil && res.AwaitsApproval():
		fmt.Fprintf(&b, "AWAITING APPROVAL: %s %s · %s %s: %s", actionWord(res), res.Target, money(res.Amount), res.Currency, clean(res.Message))
		return b.String()
	case err != nil:
		msg := strings.TrimPrefix(clean(err.Error()), res.Action+" "+res.Target+": ")
		msg = strings.TrimPrefix(msg, res.Action+": ")
		fmt.Fprintf(&b, "FAILED: %s %s: %s", actionWord(res), res.Target, msg)
		for _, e := range res.Errors {
			fmt.Fprintf(&b, "\n  • %s", clean(e.Text()))
		}
		return b.String()
	}
	fmt.Fprintf(&b, "%s %s: %s", actionWord(res), res.Target, res.StatusText())
	if !res.Amount.IsZero() {
		fmt.Fprintf(&b, " · %s %s", money(res.Amount), res.Currency)
	}
	if res.InvoiceNumber != "" {
		fmt.Fprintf(&b, " · invoice number %s", clean(res.InvoiceNumber))
	}
	if res.Key != "" {
		fmt.Fprintf(&b, " · key %s", res.Key)
	}
	if res.Remainder.IsPositive() {
		fmt.Fprintf(&b, "\n  PARTIAL: %s %s still to pay · group %s", money(res.Remainder), res.Currency, res.GroupTransaction)
	}
	if res.RedirectURL != "" {
		fmt.Fprintf(&b, "\n  redirect: %s", clean(res.RedirectURL))
	}
	if res.Message != "" {
		fmt.Fprintf(&b, "\n  %s", clean(res.Message))
	}
	if !pushed && res.Key != "" {
		b.WriteString("\n  (the push has not arrived yet; it settles by itself)")
	}
	if res.Warning != "" {
		fmt.Fprintf(&b, "\n  warning: %s", clean(res.Warning))
	}
	return b.String()
}

// actionWord names an operation as the operator knows it: the deferred
// service's Pay is a capture, its CancelReservation a cancel. The JSON
// keeps the gateway's action names.
func actionWord(res ops.Result) string {
	switch {
	case res.Action == api.ActionPay && res.Service == api.ServiceDeferred:
		return "Capture"
	case res.Action == api.ActionCancelReservation:
		return "Cancel"
	case res.Action == api.ActionUpdateReservation:
		return "Update"
	}
	return res.Action
}

// settle waits briefly for the push that settles the operation.
func (c *cmdContext) settle(ctx context.Context, env *runtime, res ops.Result) bool {
	if res.OpID == 0 || (res.State == store.OpFailed && res.Key == "") {
		return false
	}
	ok, _ := env.svc.Waiter().Settle(ctx, res, c.flags.wait)
	return ok
}

// now is the cache's clock, or the wall clock when there is no cache yet.
func (c *cmdContext) now(db *store.DB) time.Time {
	if db != nil {
		return db.Now()
	}
	return time.Now()
}
