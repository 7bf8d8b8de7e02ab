package cli

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"sort"
	"strconv"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/shopspring/decimal"

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

// opsFlags are the flags only the operation commands have; the settings
// flags they share with the console are read by resolveSettings.
type opsFlags struct {
	json bool
	wait time.Duration
}

func (f *opsFlags) register(fs *flag.FlagSet) {
	sharedFlags(fs)
	fs.BoolVar(&f.json, "json", false, "print JSON (a stable scripting interface)")
	fs.DurationVar(&f.wait, "wait", ops.DefaultWait, "how long to wait for the push that settles the operation")
}

// settings are the command's settings, resolved as the console resolves its own.
func (c *cmdContext) settings() (settings, error) { return resolveSettings(c.fs, getenvOf(c.sio)) }

// readCommands only look: they run on a read-only configuration.
var readCommands = map[string]bool{"reservations": true, "show": true, "audit": true}

// cmdContext is one parsed operation command.
type cmdContext struct {
	name  string
	sio   IO
	flags opsFlags
	fs    *flag.FlagSet
	args  []string // positional arguments
	set   settings // resolved by open
}

// parseInterspersed parses flags that may come before, between or after
// the positional arguments (paydesk capture R1 A=1 --json).
func parseInterspersed(fs *flag.FlagSet, args []string) ([]string, error) {
	var pos []string
	for {
		if err := fs.Parse(args); err != nil {
			return nil, err
		}
		rest := fs.Args()
		if len(rest) == 0 {
			return pos, nil
		}
		if rest[0] == "--" {
			return append(pos, rest[1:]...), nil
		}
		pos = append(pos, rest[0])
		args = rest[1:]
	}
}

func newCmd(name, usage string, sio IO, minArgs, maxArgs int, args []string, extra func(fs *flag.FlagSet)) (*cmdContext, int) {
	c := &cmdContext{name: name, sio: sio}
	c.fs = flag.NewFlagSet("paydesk "+name, flag.ContinueOnError)
	c.fs.SetOutput(sio.Stderr)
	c.flags.register(c.fs)
	if extra != nil {
		extra(c.fs)
	}
	c.fs.Usage = func() {
		fmt.Fprintf(sio.Stderr, "Usage: paydesk %s %s\n\nFlags:\n", name, usage)
		c.fs.PrintDefaults()
	}
	pos, err := parseInterspersed(c.fs, args)
	if err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return nil, exitOK
		}
		return nil, exitUsage
	}
	if len(pos) < minArgs || (maxArgs >= 0 && len(pos) > maxArgs) {
		fmt.Fprintf(sio.Stderr, "paydesk %s: wrong number of arguments\n", name)
		c.fs.Usage()
		return nil, exitUsage
	}
	c.args = pos
	return c, -1
}

func (c *cmdContext) fail(err error) int {
	if c.flags.json {
		_ = writeJSON(c.sio.Stdout, map[string]any{"error": clean(err.Error())})
	}
	fmt.Fprintf(c.sio.Stderr, "paydesk %s: %s\n", c.name, clean(err.Error()))
	return exitFailed
}

// open resolves the settings exactly as the console does (flags, then the
// environment, then the config file) and starts the same runtime.
func (c *cmdContext) open(ctx context.Context) (*runtime, int) {
	getenv := getenvOf(c.sio)
	set, err := c.settings()
	if err != nil {
		return nil, c.fail(err)
	}
	if set.ReadOnly && !readCommands[c.name] {
		// Only the config file can say read-only to a command.
		return nil, c.fail(fmt.Errorf("read-only = true in %s: nothing sent", set.ConfigFile))
	}
	c.set = set
	env, err := start(ctx, set, getenv)
	if err != nil {
		return nil, c.fail(err)
	}
	return env, -1
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
}

type reservationJSON struct {
	ReservationNumber string     `json:"reservationNumber"`
	Key               string     `json:"key"`
	Invoice           string     `json:"invoice"`
	State             string     `json:"state"`
	Amount            string     `json:"amount"`
	Captured          string     `json:"captured"`
	Refunded          string     `json:"refunded,omitempty"`
	Remaining         string     `json:"remaining"`
	Currency          string     `json:"currency"`
	Customer          string     `json:"customer,omitempty"`
	Country           string     `json:"country,omitempty"`
	Created           string     `json:"created,omitempty"`
	DaysLeft          int        `json:"daysLeft"`
	OutcomeUnknown    bool       `json:"outcomeUnknown"`
	IsTest            bool       `json:"isTest"`
	Lines             []lineJSON `json:"lines,omitempty"`
	Transactions      []txJSON   `json:"transactions,omitempty"`
}

func timeText(t time.Time) string {
	if t.IsZero() {
		return ""
	}
	return t.Format(time.RFC3339)
}

func reservationOut(r *store.Reservation, txs []*store.Transaction, now time.Time) reservationJSON {
	out := reservationJSON{ReservationNumber: r.ReservationNumber, Key: r.Key, Invoice: clean(r.Invoice), State: string(r.State()),
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
	return txJSON{Key: t.Key, Kind: string(t.Kind), Status: t.Status.Code, SubCode: t.Status.SubCode, Amount: money(t.Amount),
		Currency: t.Currency, InvoiceNumber: clean(t.InvoiceNumber), Original: t.Original, Refunded: money(t.Refunded),
		Refundable: money(t.Refundable()), Created: timeText(t.Created)}
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
		PushReceived: pushed, Warning: res.Warning}
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
		fmt.Fprintf(&b, "OUTCOME UNKNOWN: %s %s (operation %d) was sent but no trustworthy answer came back; it is NOT retried.\n", res.Action, res.Target, res.OpID)
		if res.Message != "" {
			fmt.Fprintf(&b, "  Why: %s\n", clean(res.Message))
		}
		fmt.Fprintf(&b, "  The gateway's push settles it; or check the gateway and run: paydesk resolve %d --note \"…\"", res.OpID)
		if pushed {
			b.WriteString("\n  Settled by its push meanwhile.")
		}
		return b.String()
	case err != nil:
		msg := strings.TrimPrefix(clean(err.Error()), res.Action+": ")
		fmt.Fprintf(&b, "FAILED: %s %s: %s", res.Action, res.Target, msg)
		for _, e := range res.Errors {
			fmt.Fprintf(&b, "\n  • %s: %s", clean(e.Name), clean(firstNonEmpty(e.ErrorMessage, e.Error)))
		}
		return b.String()
	}
	fmt.Fprintf(&b, "%s %s: %s", res.Action, res.Target, res.StatusText())
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

func firstNonEmpty(a, b string) string {
	if a != "" {
		return a
	}
	return b
}

// settle waits briefly for the push that settles the operation.
func (c *cmdContext) settle(ctx context.Context, env *runtime, res ops.Result) bool {
	if res.OpID == 0 || (res.State == store.OpFailed && res.Key == "") {
		return false
	}
	ok, _ := env.svc.Waiter().Settle(ctx, res, c.flags.wait)
	return ok
}

// ---- the commands ----

func runReservations(ctx context.Context, sio IO, args []string) int {
	var state string
	c, code := newCmd("reservations", "[--state STATE] [--json]", sio, 0, 0, args, func(fs *flag.FlagSet) {
		fs.StringVar(&state, "state", "", "only this state (reserved, partly_captured, captured, cancelled, closed, declined, awaiting_customer)")
	})
	if c == nil {
		return code
	}
	env, code := c.open(ctx)
	if env == nil {
		return code
	}
	defer env.Close()
	rows, err := env.db.LoadReservationSummaries()
	if err != nil {
		return c.fail(err)
	}
	sort.Slice(rows, func(i, j int) bool { return rows[i].Created.After(rows[j].Created) })
	now := env.svc.Now()
	var out []reservationJSON
	for _, s := range rows {
		if state != "" && string(s.State) != state {
			continue
		}
		out = append(out, reservationJSON{ReservationNumber: s.ReservationNumber, Key: s.Key, Invoice: clean(s.Invoice), State: string(s.State),
			Amount: money(s.Amount), Captured: money(s.Captured), Remaining: money(s.Remaining), Currency: s.Currency,
			Customer: clean(s.Customer), Country: s.Country, Created: timeText(s.Created), DaysLeft: s.DaysLeft(now),
			OutcomeUnknown: s.OutcomeUnknown, IsTest: s.IsTest})
	}
	if c.flags.json {
		if out == nil {
			out = []reservationJSON{}
		}
		_ = writeJSON(sio.Stdout, out)
		return exitOK
	}
	tw := tabwriter.NewWriter(sio.Stdout, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "RESERVATION\tINVOICE\tSTATE\tAMOUNT\tCAPTURED\tREMAINING\tDAYS\tCUSTOMER")
	for _, r := range out {
		st := r.State
		if r.OutcomeUnknown {
			st += " (OUTCOME UNKNOWN)"
		}
		num := r.ReservationNumber
		if num == "" {
			num = r.Key
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s %s\t%s\t%s\t%d\t%s\n", num, r.Invoice, st, r.Amount, r.Currency, r.Captured, r.Remaining, r.DaysLeft, r.Customer)
	}
	_ = tw.Flush()
	fmt.Fprintf(sio.Stdout, "%d reservations\n", len(out))
	return exitOK
}

func runShow(ctx context.Context, sio IO, args []string) int {
	c, code := newCmd("show", "RESERVATION [--json]", sio, 1, 1, args, nil)
	if c == nil {
		return code
	}
	env, code := c.open(ctx)
	if env == nil {
		return code
	}
	defer env.Close()
	r, err := env.db.Reservation(c.args[0])
	if err != nil {
		return c.fail(fmt.Errorf("reservation %s: %w", c.args[0], err))
	}
	txs, err := env.db.TransactionsFor(r.Key)
	if err != nil {
		return c.fail(err)
	}
	out := reservationOut(r, txs, env.svc.Now())
	if c.flags.json {
		_ = writeJSON(sio.Stdout, out)
		return exitOK
	}
	w := sio.Stdout
	fmt.Fprintf(w, "Reservation %s · invoice %s · %s\n", out.ReservationNumber, out.Invoice, strings.ToUpper(out.State))
	if out.OutcomeUnknown {
		fmt.Fprintln(w, "  ! an operation on it has an UNKNOWN OUTCOME (see paydesk audit; resolve with paydesk resolve)")
	}
	fmt.Fprintf(w, "Customer %s (%s) · created %s · %d days left in the shipment window\n", out.Customer, out.Country, out.Created, out.DaysLeft)
	fmt.Fprintf(w, "Amount %s %s · captured %s · remaining %s", out.Amount, out.Currency, out.Captured, out.Remaining)
	if out.Refunded != "" {
		fmt.Fprintf(w, " · refunded %s", out.Refunded)
	}
	fmt.Fprintln(w)
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "ARTICLE\tTITLE\tPRICE\tRESERVED\tCAPTURED\tCANCELLED\tREMAINING")
	for _, l := range out.Lines {
		fmt.Fprintf(tw, "%s\t%s\t%s\t%d\t%d\t%d\t%d\n", l.ArticleNumber, l.Title, l.Price, l.Reserved, l.Captured, l.Cancelled, l.Remaining)
	}
	_ = tw.Flush()
	if len(out.Transactions) > 0 {
		fmt.Fprintln(w, "Transactions:")
		tw = tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
		for _, t := range out.Transactions {
			fmt.Fprintf(tw, "  %s\t%s\t%s\t%s\t%s\trefundable %s\n", t.Key, t.Kind, store.Status{Code: t.Status, SubCode: t.SubCode}.Text(), t.Amount, t.InvoiceNumber, t.Refundable)
		}
		_ = tw.Flush()
	}
	return exitOK
}

func runCapture(ctx context.Context, sio IO, args []string) int {
	var late bool
	c, code := newCmd("capture", "RESERVATION [ARTICLE=QTY ...] [--late] [--json]   (no pairs: everything remaining)", sio, 1, -1, args,
		func(fs *flag.FlagSet) {
			fs.BoolVar(&late, "late", false, "confirm a capture past the 14-day shipment window")
		})
	if c == nil {
		return code
	}
	qty, err := ops.ParseQuantities(c.args[1:])
	if err != nil {
		fmt.Fprintf(sio.Stderr, "paydesk capture: %v\n", err)
		return exitUsage
	}
	env, code := c.open(ctx)
	if env == nil {
		return code
	}
	defer env.Close()
	res, err := env.svc.Capture(ctx, ops.CaptureRequest{Reservation: c.args[0], Quantities: qty, LateConfirmed: late})
	if errors.Is(err, ops.ErrConfirmRequired) {
		err = fmt.Errorf("%w (pass --late to confirm)", err)
	}
	return c.report(res, err, c.settle(ctx, env, res))
}

func runCancel(ctx context.Context, sio IO, args []string) int {
	var confirm string
	var yes bool
	c, code := newCmd("cancel", "RESERVATION [--yes | --confirm INVOICE] [--json]", sio, 1, 1, args, func(fs *flag.FlagSet) {
		fs.StringVar(&confirm, "confirm", "", "against a live gateway: the reservation's invoice number, typed to confirm")
		fs.BoolVar(&yes, "yes", false, "do not ask (sandbox and test)")
	})
	if c == nil {
		return code
	}
	env, code := c.open(ctx)
	if env == nil {
		return code
	}
	defer env.Close()
	r, err := env.db.Reservation(c.args[0])
	if err != nil {
		return c.fail(fmt.Errorf("reservation %s: %w", c.args[0], err))
	}
	amount, err := ops.PlanCancel(r)
	if err != nil {
		return c.report(ops.Result{Action: api.ActionCancelReservation, Target: c.args[0]}, err, false)
	}
	if !c.confirm(env, fmt.Sprintf("Cancel %s of reservation %s (%s %s)?", cancelWhat(r), r.ReservationNumber, money(amount), r.Currency), r.Invoice, &confirm, yes) {
		return exitFailed
	}
	res, err := env.svc.Cancel(ctx, ops.CancelRequest{Reservation: c.args[0], Confirm: confirm})
	return c.report(res, err, c.settle(ctx, env, res))
}

func cancelWhat(r *store.Reservation) string {
	if r.CapturedAmount.IsPositive() {
		return "the remainder"
	}
	return "the whole"
}

// confirm asks y/N in sandbox and test, or for the typed invoice number
// against a live gateway (unless given with --confirm). With --json or
// --yes it does not ask in sandbox and test.
func (c *cmdContext) confirm(env *runtime, question, invoice string, typed *string, yes bool) bool {
	live := env.svc.Mode().IsLive()
	if !live && (yes || c.flags.json) {
		return true
	}
	if live && *typed != "" {
		return true // the operation checks it
	}
	if c.sio.Stdin == nil {
		fmt.Fprintln(c.sio.Stderr, "paydesk: confirmation needed: pass --yes (sandbox/test) or --confirm INVOICE (live)")
		return false
	}
	in := bufio.NewReader(c.sio.Stdin)
	if live {
		fmt.Fprintf(c.sio.Stderr, "%s\nLIVE gateway: type the invoice number %s to confirm: ", question, invoice)
		line, _ := in.ReadString('\n')
		*typed = strings.TrimSpace(line)
		return true
	}
	fmt.Fprintf(c.sio.Stderr, "%s [y/N] ", question)
	line, _ := in.ReadString('\n')
	switch strings.ToLower(strings.TrimSpace(line)) {
	case "y", "yes":
		return true
	}
	fmt.Fprintln(c.sio.Stderr, "not confirmed; nothing sent")
	return false
}

func parseAmountArg(s string) (*decimal.Decimal, error) {
	if s == "" {
		return nil, nil
	}
	d, err := decimal.NewFromString(strings.ReplaceAll(s, ",", "."))
	if err != nil {
		return nil, fmt.Errorf("amount %q: not a decimal number", s)
	}
	return &d, nil
}

func runRefund(ctx context.Context, sio IO, args []string) int {
	return refundCommand(ctx, sio, "refund", args)
}

func runGiftCardRefund(ctx context.Context, sio IO, args []string) int {
	return refundCommand(ctx, sio, "giftcard refund", args)
}

// refundCommand is `paydesk refund` and `paydesk giftcard refund`: the
// transaction's kind decides whether it is a deferred-invoice or a gift
// card refund, so either name works for either.
func refundCommand(ctx context.Context, sio IO, name string, args []string) int {
	var reason, lastName, email, confirm string
	var yes bool
	c, code := newCmd(name, "TRANSACTION [AMOUNT] --reason REASON [--last-name N --email E] [--yes | --confirm INVOICE] [--json]", sio, 1, 2, args, func(fs *flag.FlagSet) {
		fs.StringVar(&reason, "reason", "", "return, defect, goodwill, duplicate or other, optionally with a text: \"other: price match\"")
		fs.StringVar(&lastName, "last-name", "", "gift cards: the customer's last name (a partial refund needs it when the payment lacked it)")
		fs.StringVar(&email, "email", "", "gift cards: the customer's e-mail (likewise)")
		fs.StringVar(&confirm, "confirm", "", "against a live gateway: the payment's invoice, typed to confirm")
		fs.BoolVar(&yes, "yes", false, "do not ask (sandbox and test)")
	})
	if c == nil {
		return code
	}
	var amount *decimal.Decimal
	if len(c.args) == 2 {
		var err error
		if amount, err = parseAmountArg(c.args[1]); err != nil {
			fmt.Fprintf(sio.Stderr, "paydesk %s: %v\n", name, err)
			return exitUsage
		}
	}
	env, code := c.open(ctx)
	if env == nil {
		return code
	}
	defer env.Close()
	t, err := env.db.Transaction(c.args[0])
	if err != nil {
		return c.fail(fmt.Errorf("transaction %s: %w", c.args[0], err))
	}
	isGift := t.Kind == store.KindGiftCardPay || t.Kind == store.KindGiftCardRemainder
	show := money(t.Refundable())
	if amount != nil {
		show = money(*amount)
	}
	var question string
	ch := ops.GiftCardRefundChange{Amount: amount, LastName: lastName, Email: email, Reason: ops.ParseReason(reason)}
	if isGift {
		if _, err := ops.PlanGiftCardRefund(t, ch, false); err != nil {
			var ve *api.ValidationError
			if !errors.As(err, &ve) { // field rules are checked again by the operation with the merchant setting
				return c.report(ops.Result{Action: api.ActionRefund, Target: t.Key}, err, false)
			}
		}
		question = fmt.Sprintf("Refund %s %s of gift card payment %s?", show, t.Currency, t.Key)
	} else {
		if lastName != "" || email != "" {
			fmt.Fprintf(sio.Stderr, "paydesk %s: --last-name and --email are for gift card refunds; %s is a %s\n", name, t.Key, t.Kind)
			return exitUsage
		}
		if _, err := ops.PlanRefund(t, amount, ch.Reason); err != nil {
			return c.report(ops.Result{Action: api.ActionRefund, Target: t.Key}, err, false)
		}
		question = fmt.Sprintf("Refund %s %s of %s (reason %s)?", show, t.Currency, t.Key, ch.Reason)
	}
	if !c.confirm(env, question, t.Invoice, &confirm, yes) {
		return exitFailed
	}
	var res ops.Result
	if isGift {
		res, err = env.svc.GiftCardRefund(ctx, ops.GiftCardRefundRequest{Transaction: t.Key, Change: ch, Confirm: confirm})
	} else {
		res, err = env.svc.Refund(ctx, ops.RefundRequest{Transaction: t.Key, Amount: amount, Reason: ch.Reason, Confirm: confirm})
	}
	return c.report(res, err, c.settle(ctx, env, res))
}

func runGiftCard(ctx context.Context, sio IO, args []string) int {
	if len(args) == 0 || (args[0] != "pay" && args[0] != "refund") {
		fmt.Fprintln(sio.Stderr, "Usage: paydesk giftcard pay --service CODE --card NUMBER --pin PIN|- AMOUNT [--invoice INV] [--last-name N --email E] [--group KEY]")
		fmt.Fprintln(sio.Stderr, "       paydesk giftcard refund TRANSACTION [AMOUNT] --reason REASON [--last-name N --email E]")
		return exitUsage
	}
	if args[0] == "pay" {
		return runGiftCardPay(ctx, sio, args[1:])
	}
	return runGiftCardRefund(ctx, sio, args[1:])
}

func providerFor(code, flagValue string) (api.Provider, error) {
	switch strings.ToLower(flagValue) {
	case "a":
		return api.ProviderA, nil
	case "b":
		return api.ProviderB, nil
	case "c":
		return api.ProviderC, nil
	case "custom":
		return api.ProviderCustom, nil
	case "":
	default:
		return "", fmt.Errorf("--provider %q: must be A, B, C or custom", flagValue)
	}
	switch strings.ToLower(code) {
	case "vouchera":
		return api.ProviderA, nil
	case "voucherb":
		return api.ProviderB, nil
	case "voucherc":
		return api.ProviderC, nil
	}
	if api.IsCustomCardCode(code) {
		return api.ProviderCustom, nil
	}
	return "", fmt.Errorf("service %q: say which provider processes the card with --provider A|B|C", code)
}

func runGiftCardPay(ctx context.Context, sio IO, args []string) int {
	var service, card, pin, invoice, lastName, email, group, provider string
	c, code := newCmd("giftcard pay", "AMOUNT --service CODE --card NUMBER --pin PIN|- [--provider A|B|C|custom] [--invoice INV] [--group KEY]", sio, 1, 1, args,
		func(fs *flag.FlagSet) {
			fs.StringVar(&service, "service", "", "gift card service code (vouchera, voucherb, voucherc, customgiftcard, …)")
			fs.StringVar(&provider, "provider", "", "the provider that processes the card (default: from the service code)")
			fs.StringVar(&card, "card", "", "card number")
			fs.StringVar(&pin, "pin", "", "card PIN (provider C: validation code); \"-\" reads it from standard input")
			fs.StringVar(&invoice, "invoice", "", "invoice (default: made up)")
			fs.StringVar(&lastName, "last-name", "", "customer's last name (with --email allows partial refunds later)")
			fs.StringVar(&email, "email", "", "customer's e-mail")
			fs.StringVar(&group, "group", "", "pay the remainder of this partial payment group (PayRemainder)")
		})
	if c == nil {
		return code
	}
	amount, err := parseAmountArg(c.args[0])
	if err != nil || amount == nil {
		fmt.Fprintf(sio.Stderr, "paydesk giftcard pay: amount %q: not a decimal number\n", c.args[0])
		return exitUsage
	}
	prov, err := providerFor(service, provider)
	if err != nil {
		fmt.Fprintf(sio.Stderr, "paydesk giftcard pay: %v\n", err)
		return exitUsage
	}
	if pin == "-" && sio.Stdin != nil {
		line, _ := bufio.NewReader(sio.Stdin).ReadString('\n')
		pin = strings.TrimSpace(line)
	}
	env, code := c.open(ctx)
	if env == nil {
		return code
	}
	defer env.Close()
	res, err := env.svc.GiftCardPay(ctx, ops.GiftCardPayRequest{ServiceCode: service, Card: api.Card{Provider: prov, Number: card, PIN: pin},
		Amount: *amount, Invoice: invoice, LastName: lastName, Email: email, GroupTransaction: group})
	return c.report(res, err, c.settle(ctx, env, res))
}

func runTestReservation(ctx context.Context, sio IO, args []string) int {
	var approve, decline bool
	var lastName string
	c, code := newCmd("test-reservation", "[--approve | --decline] [--last-name NAME] [--json]", sio, 0, 0, args, func(fs *flag.FlagSet) {
		fs.BoolVar(&approve, "approve", false, "then approve the customer step in the sandbox")
		fs.BoolVar(&decline, "decline", false, "then decline the customer step in the sandbox")
		fs.StringVar(&lastName, "last-name", "", "billing last name (\"Decline\" is declined by the sandbox's risk check)")
	})
	if c == nil {
		return code
	}
	env, code := c.open(ctx)
	if env == nil {
		return code
	}
	defer env.Close()
	r := ops.TestReservation(env.svc.Now(), c.set.Currency)
	if lastName != "" {
		r.Billing.LastName = lastName
	}
	res, err := env.svc.Reserve(ctx, r)
	if err != nil || (!approve && !decline) {
		return c.report(res, err, false)
	}
	step, err := ops.CustomerStepRequest{Reservation: res.Key, Approve: approve}.Run(ctx, env.svc)
	step.Action = "customer step"
	return c.report(step, err, step.State == store.OpSettled || step.State == store.OpFailed)
}

type auditJSON struct {
	ID       uint64 `json:"id"`
	Time     string `json:"time"`
	Operator string `json:"operator"`
	Action   string `json:"action"`
	Target   string `json:"target"`
	Amount   string `json:"amount,omitempty"`
	Currency string `json:"currency,omitempty"`
	Result   string `json:"result"`
	Reason   string `json:"reason,omitempty"`
	OpID     uint64 `json:"opId,omitempty"`
}

func runAudit(ctx context.Context, sio IO, args []string) int {
	var limit int
	c, code := newCmd("audit", "[--limit N] [--json]", sio, 0, 0, args, func(fs *flag.FlagSet) {
		fs.IntVar(&limit, "limit", 50, "newest N entries (0: all)")
	})
	if c == nil {
		return code
	}
	env, code := c.open(ctx)
	if env == nil {
		return code
	}
	defer env.Close()
	entries, err := env.db.Audit(limit)
	if err != nil {
		return c.fail(err)
	}
	out := make([]auditJSON, 0, len(entries))
	for _, e := range entries {
		a := auditJSON{ID: e.ID, Time: timeText(e.Time), Operator: clean(e.Operator), Action: e.Action, Target: clean(e.Target),
			Currency: e.Currency, Result: clean(e.Result), Reason: clean(e.Reason), OpID: e.OpID}
		if !e.Amount.IsZero() {
			a.Amount = money(e.Amount)
		}
		out = append(out, a)
	}
	if c.flags.json {
		_ = writeJSON(sio.Stdout, out)
		return exitOK
	}
	tw := tabwriter.NewWriter(sio.Stdout, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "TIME\tOPERATOR\tACTION\tTARGET\tAMOUNT\tRESULT\tREASON")
	for _, a := range out {
		amt := ""
		if a.Amount != "" {
			amt = a.Amount + " " + a.Currency
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\t%s\n", a.Time, a.Operator, a.Action, a.Target, amt, a.Result, a.Reason)
	}
	_ = tw.Flush()
	return exitOK
}

func runResolve(ctx context.Context, sio IO, args []string) int {
	var note string
	c, code := newCmd("resolve", "OPERATION --note TEXT", sio, 1, 1, args, func(fs *flag.FlagSet) {
		fs.StringVar(&note, "note", "", "what the gateway's back office showed (required)")
	})
	if c == nil {
		return code
	}
	id, err := strconv.ParseUint(c.args[0], 10, 64)
	if err != nil {
		fmt.Fprintf(sio.Stderr, "paydesk resolve: operation %q: not a number\n", c.args[0])
		return exitUsage
	}
	env, code := c.open(ctx)
	if env == nil {
		return code
	}
	defer env.Close()
	res, err := ops.ResolveRequest{OpID: id, Note: note}.Run(ctx, env.svc)
	if err != nil {
		return c.fail(err)
	}
	res.Target = c.args[0]
	return c.report(res, nil, false)
}
