package forms

import (
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/shopspring/decimal"

	"paydesk/api"
	"paydesk/internal/ops"
	"paydesk/store"
)

// captureSpec: one quantity per line. It opens with nothing chosen: the
// operator chooses the units (typed, scanned, or all that remains on one
// key), so a form sent without a look never ships the most.
type captureSpec struct {
	res *store.Reservation
	now func() time.Time
	qty []string // per line, as typed
	fs  []*field
}

// CaptureOption adjusts the capture form.
type CaptureOption func(*kit)

// ScanAffixes are what the barcode scanner adds before and after each
// code (its setup); scan mode takes them off before matching.
func ScanAffixes(prefix, suffix string) CaptureOption {
	return func(k *kit) {
		if k.scan != nil {
			k.scan.prefix, k.scan.suffix = prefix, suffix
		}
	}
}

// NewCapture is the capture-shipment form for a reservation.
func NewCapture(r *store.Reservation, mode ops.Mode, now func() time.Time, opts ...CaptureOption) Form {
	if now == nil {
		now = time.Now
	}
	s := &captureSpec{res: r, now: now, qty: make([]string, len(r.Lines))}
	left := r.Capturable()
	for i, l := range r.Lines {
		s.qty[i] = "0"
		if left[i] == 0 {
			continue // fully captured or cancelled: nothing to type (the table above shows it)
		}
		s.fs = append(s.fs, &field{
			key:   api.PArticleQuantity + "/" + l.ArticleNumber,
			title: fmt.Sprintf("%s · %s", Clean(l.ArticleNumber), trunc(Clean(l.Title), 40)),
			hint:  fmt.Sprintf("units to ship: 0–%d (0 skips the line) at %s", left[i], l.Price.StringFixed(2)),
			value: &s.qty[i], units: true, maxUnits: left[i],
		})
	}
	k := newKit("capture", s, mode)
	for _, o := range opts {
		o(k)
	}
	return k
}

// fillAll chooses all that remains of every line.
func (s *captureSpec) fillAll() int {
	n := 0
	for i, left := range s.res.Capturable() {
		s.qty[i] = strconv.Itoa(left)
		n += left
	}
	return n
}

// chosen is the units chosen now.
func (s *captureSpec) chosen() int {
	n := 0
	for _, q := range s.qty {
		if v, err := strconv.Atoi(strings.TrimSpace(q)); err == nil && v > 0 {
			n += v
		}
	}
	return n
}

func (s *captureSpec) title() string {
	return "Capture shipment · reservation " + Clean(s.res.ReservationNumber) + " · invoice " + Clean(s.res.Invoice)
}

func (s *captureSpec) header() string {
	d := s.res.DaysLeft(s.now())
	win := fmt.Sprintf("%d days left in the 14-day shipment window", d)
	if d < 0 {
		win = fmt.Sprintf("%d days PAST the 14-day shipment window", -d)
	}
	return lineTable(s.res) + "\n" + mutedStyle.Render(win)
}

func (s *captureSpec) fields() []*field { return s.fs }

func (s *captureSpec) check() check {
	c := check{errs: map[string]string{}}
	qty := map[string]int{}
	for i, l := range s.res.Lines {
		key := api.PArticleQuantity + "/" + l.ArticleNumber
		v := strings.TrimSpace(s.qty[i])
		n, err := strconv.Atoi(v)
		switch {
		case v == "":
			c.errs[key] = "required: a number of units (0 skips the line)"
		case err != nil:
			c.errs[key] = "must be a whole number of units"
		default:
			qty[l.ArticleNumber] = n
		}
	}
	if len(c.errs) == 0 && s.chosen() == 0 {
		// Not an error: the form opens with nothing chosen.
		c.summary = []string{"Nothing chosen yet: type units, scan (" + scanToggle + ") or press " + fillKey + " for all that remains."}
		return c
	}
	plan, err := ops.PlanCapture(s.res, qty, s.now())
	if err != nil {
		addErr(&c, err)
	}
	if len(c.errs) > 0 || len(c.general) > 0 {
		if plan.Amount.IsPositive() {
			c.summary = append(c.summary, "Amount so far: "+plan.Amount.StringFixed(2)+" "+s.res.Currency)
		}
		return c
	}
	kind := "PARTIAL capture (article groups are sent)"
	if plan.Full {
		kind = "FULL capture of everything remaining (no article groups)"
	}
	c.summary = []string{titleStyle.Render(fmt.Sprintf("Amount to capture: %s %s", plan.Amount.StringFixed(2), s.res.Currency)) + " · " + kind}
	r := s.res
	left := r.Capturable()
	c.plain = []string{
		fmt.Sprintf("Capture %s %s from %s for invoice %s (reservation %s).", plan.Amount.StringFixed(2), r.Currency, who(r.CustomerName), Clean(r.Invoice), Clean(r.ReservationNumber)),
		"Ships: " + units(r.Lines, func(i int) int { return qty[r.Lines[i].ArticleNumber] }) + ".",
	}
	open := units(r.Lines, func(i int) int { return left[i] - qty[r.Lines[i].ArticleNumber] })
	if open == "" {
		c.plain = append(c.plain, "Nothing stays open: everything reserved is then captured.")
	} else {
		rest := plan.Amount.Neg().Add(r.RemainingAmount())
		c.plain = append(c.plain, fmt.Sprintf("Stays open (%s %s, can still be captured or cancelled): %s.", rest.StringFixed(2), r.Currency, open))
	}
	op := plan.Op(s.res.Currency)
	c.sending = sendingText(op.Request(), plan.Full)
	req := ops.CaptureRequest{Reservation: s.res.ReservationNumber, Quantities: qty, LateConfirmed: plan.PastWindow}
	if plan.PastWindow {
		c.extra = []string{fmt.Sprintf("Capture %d days past the 14-day shipment window? The provider may revoke the payout.", -plan.DaysLeft)}
	}
	c.intent = req
	return c
}

// addErr sorts an ops error into field errors and general ones.
func addErr(c *check, err error) {
	if ve, ok := asValidation(err); ok {
		for _, fe := range ve.Fields {
			k := fieldKey(fe)
			if fe.Group == "" && fe.Field == api.PArticleQuantity {
				c.general = append(c.general, fe.Rule)
				continue
			}
			if _, dup := c.errs[k]; !dup {
				c.errs[k] = fe.Rule
			}
		}
		return
	}
	c.general = append(c.general, err.Error())
}

// sendingText is the confirm step's "exactly what will be sent": endpoint,
// action, envelope amounts and every parameter, article groups together.
// PINs are masked.
func sendingText(req *api.Request, fullCapture bool) string {
	var b strings.Builder
	svc := req.Service()
	fmt.Fprintf(&b, "POST %s  %s %s\n", req.Path(), svc.Name, svc.Action)
	fmt.Fprintf(&b, "Invoice %s · Currency %s", Clean(req.Invoice), req.Currency)
	if req.AmountDebit != nil {
		fmt.Fprintf(&b, " · AmountDebit %s", api.WireString(req.AmountDebit.Dec()))
	}
	if req.AmountCredit != nil {
		fmt.Fprintf(&b, " · AmountCredit %s", api.WireString(req.AmountCredit.Dec()))
	}
	if req.OriginalTransactionKey != "" {
		fmt.Fprintf(&b, "\nOriginalTransactionKey %s", req.OriginalTransactionKey)
	}
	var groups []string
	byGroup := map[string][]string{}
	for _, p := range svc.Parameters {
		v := Clean(string(p.Value))
		if isSecretParam(p.Name) {
			v = "••••"
		}
		if p.GroupType == "" {
			fmt.Fprintf(&b, "\n%s = %s", p.Name, v)
			continue
		}
		g := string(p.GroupID)
		if _, seen := byGroup[g]; !seen {
			groups = append(groups, g)
		}
		byGroup[g] = append(byGroup[g], p.Name+" "+v)
	}
	for _, g := range groups {
		fmt.Fprintf(&b, "\nArticle group %s: %s", g, strings.Join(byGroup[g], ", "))
	}
	if fullCapture {
		b.WriteString("\n(no article groups: a full capture of everything remaining)")
	}
	return b.String()
}

// isSecretParam reports a card PIN parameter (VoucherBPIN, Pin,
// VoucherCValidationCode): its value is masked on screen. It matches the
// end of the name, so ShippingSameAsBilling or ShippingPhoneNumber, which
// merely contain "pin", are shown as sent.
func isSecretParam(name string) bool {
	l := strings.ToLower(name)
	return strings.HasSuffix(l, "pin") || strings.HasSuffix(l, "validationcode")
}

// lineFor finds the line a scanned code names: its article number (case
// and surrounding blanks ignored), or a numeric code equal to it but for
// leading zeros (an EAN-13 read as a 14-digit GTIN).
func (s *captureSpec) lineFor(code string) int {
	for i, l := range s.res.Lines {
		if strings.EqualFold(strings.TrimSpace(l.ArticleNumber), code) {
			return i
		}
	}
	if isDigits(code) {
		for i, l := range s.res.Lines {
			if a := strings.TrimSpace(l.ArticleNumber); isDigits(a) && strings.TrimLeft(a, "0") == strings.TrimLeft(code, "0") {
				return i
			}
		}
	}
	return -1
}

func isDigits(s string) bool {
	if s == "" {
		return false
	}
	for _, r := range s {
		if r < '0' || r > '9' {
			return false
		}
	}
	return true
}

func (s *captureSpec) scan(code string) (string, verdict) {
	code = Clean(code)
	i := s.lineFor(code)
	if i < 0 {
		return fmt.Sprintf("%s is not an article of this reservation", code), verdictUnknown
	}
	l := s.res.Lines[i]
	left := s.res.Capturable()[i]
	n, err := strconv.Atoi(strings.TrimSpace(s.qty[i]))
	if err != nil || n < 0 {
		n = 0
	}
	name := Clean(l.ArticleNumber) + " · " + trunc(Clean(l.Title), 32)
	if n >= left {
		return fmt.Sprintf("%s: all %d already counted: nothing counted", Clean(l.ArticleNumber), left), verdictOver
	}
	n++
	s.qty[i] = strconv.Itoa(n)
	return fmt.Sprintf("%s: %d of %d", name, n, left), verdictCounted
}

func (s *captureSpec) scanLines() []string {
	left := s.res.Capturable()
	var out []string
	units := 0
	total := decimal.Zero
	for i, l := range s.res.Lines {
		n, _ := strconv.Atoi(strings.TrimSpace(s.qty[i]))
		mark := " "
		switch {
		case left[i] == 0:
			mark = "-"
		case n == left[i]:
			mark = "✓"
		}
		out = append(out, fmt.Sprintf("%s %-10s %-32s %3d of %d", mark, trunc(Clean(l.ArticleNumber), 10), trunc(Clean(l.Title), 32), n, left[i]))
		units += n
		total = total.Add(l.Price.Mul(decimal.NewFromInt(int64(n))))
	}
	out = append(out, titleStyle.Render(fmt.Sprintf("Counted %d unit(s) · %s %s", units, total.StringFixed(2), s.res.Currency)))
	return out
}
