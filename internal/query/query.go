package query

import (
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"
	"unicode"
	"unicode/utf8"

	"github.com/shopspring/decimal"
)

// Field is a field of the language (the part before the colon).
type Field string

// The fields. A word without a field is searched for in a row's whole
// search text.
const (
	State    Field = "state"
	Amount   Field = "amount"
	Created  Field = "created"
	Customer Field = "customer"
	Email    Field = "email"
	Operator Field = "operator"
	Service  Field = "service"
)

// AllFields are the fields in the order the help and errors name them.
var AllFields = []Field{State, Amount, Created, Customer, Email, Operator, Service}

// maxLen bounds a query's text: a filter is typed, not pasted from a file.
const maxLen = 1000

// Query is a parsed filter. The zero Query keeps every row. Words and the
// text fields' values are kept as typed; the list folds them as it folds
// its search text.
type Query struct {
	// Words are the free words and quoted phrases: each must occur.
	Words []string
	// State keeps one state ("" all), in lower case with "_" for spaces.
	State string
	// Amount and Created are ranges; nil is no condition.
	Amount  *AmountRange
	Created *TimeRange
	// Customer, Email, Operator, Service: each value must occur in that
	// field.
	Customer, Email, Operator, Service []string
}

// AmountRange is a range of amounts; a bound that is not set is open.
type AmountRange struct {
	Min, Max       decimal.Decimal
	HasMin, HasMax bool
	// MinExcl, MaxExcl: the bound itself is outside (">" and "<").
	MinExcl, MaxExcl bool
}

// Contains reports whether d is in the range.
func (r AmountRange) Contains(d decimal.Decimal) bool {
	if r.HasMin {
		if c := d.Cmp(r.Min); c < 0 || c == 0 && r.MinExcl {
			return false
		}
	}
	if r.HasMax {
		if c := d.Cmp(r.Max); c > 0 || c == 0 && r.MaxExcl {
			return false
		}
	}
	return true
}

// TimeRange is a range of times: From included, To excluded; a zero bound
// is open.
type TimeRange struct {
	From, To time.Time
}

// Contains reports whether t is in the range. An unknown time (zero) is in
// no range.
func (r TimeRange) Contains(t time.Time) bool {
	if t.IsZero() {
		return false
	}
	return (r.From.IsZero() || !t.Before(r.From)) && (r.To.IsZero() || t.Before(r.To))
}

// Empty reports whether q keeps every row.
func (q *Query) Empty() bool {
	return len(q.Words) == 0 && q.State == "" && q.Amount == nil && q.Created == nil &&
		len(q.Customer) == 0 && len(q.Email) == 0 && len(q.Operator) == 0 && len(q.Service) == 0
}

// Fields are the fields q uses, in AllFields' order.
func (q *Query) Fields() []Field {
	var out []Field
	use := map[Field]bool{State: q.State != "", Amount: q.Amount != nil, Created: q.Created != nil,
		Customer: len(q.Customer) > 0, Email: len(q.Email) > 0, Operator: len(q.Operator) > 0, Service: len(q.Service) > 0}
	for _, f := range AllFields {
		if use[f] {
			out = append(out, f)
		}
	}
	return out
}

// List is what a list accepts: its name, its fields and its states.
type List struct {
	Name   string
	Fields []Field
	// States are the values state: takes on this list (lower case).
	States []string
}

// Check refuses a field that does not apply to the list, and a state it
// does not know, naming what it takes instead.
func (q *Query) Check(l List) error {
	for _, f := range q.Fields() {
		if !slices.Contains(l.Fields, f) {
			return fmt.Errorf("%s: not a field of the %s list (its fields: %s)", f, l.Name, fieldNames(l.Fields))
		}
	}
	if q.State != "" && !slices.Contains(l.States, q.State) {
		return fmt.Errorf("state: %q is not a state of the %s list (one of %s)", q.State, l.Name, strings.Join(l.States, ", "))
	}
	return nil
}

func fieldNames(fs []Field) string {
	s := make([]string, len(fs))
	for i, f := range fs {
		s[i] = string(f)
	}
	return strings.Join(s, ", ")
}

// Parse parses a filter. now is the moment relative times count from
// ("created:<7d": less than seven days before now) and its location the
// one dates are days of.
func Parse(text string, now time.Time) (Query, error) {
	var q Query
	if len(text) > maxLen {
		return q, fmt.Errorf("filter: %d characters, more than %d", len(text), maxLen)
	}
	if !utf8.ValidString(text) {
		return q, errors.New("filter: not UTF-8 text")
	}
	toks, err := tokens(text)
	if err != nil {
		return q, err
	}
	for _, t := range toks {
		if t.field == "" {
			if t.value != "" {
				q.Words = append(q.Words, t.value)
			}
			continue
		}
		if err := q.set(Field(strings.ToLower(t.field)), t.value, now); err != nil {
			return Query{}, err
		}
	}
	return q, nil
}

func (q *Query) set(f Field, v string, now time.Time) error {
	if strings.TrimSpace(v) == "" {
		return fmt.Errorf("%s: needs a value (%s)", f, example(f))
	}
	switch f {
	case State:
		if q.State != "" {
			return fmt.Errorf("state: given twice (a row has one state)")
		}
		q.State = strings.NewReplacer(" ", "_", "-", "_").Replace(strings.ToLower(strings.TrimSpace(v)))
	case Amount:
		if q.Amount != nil {
			return fmt.Errorf("amount: given twice (a range says both ends: amount:50..200)")
		}
		r, err := parseAmount(v)
		if err != nil {
			return err
		}
		q.Amount = &r
	case Created:
		if q.Created != nil {
			return fmt.Errorf("created: given twice (a range says both ends: created:2026-11-01..2026-11-20)")
		}
		r, err := parseCreated(v, now)
		if err != nil {
			return err
		}
		q.Created = &r
	case Customer:
		q.Customer = append(q.Customer, v)
	case Email:
		q.Email = append(q.Email, v)
	case Operator:
		q.Operator = append(q.Operator, v)
	case Service:
		q.Service = append(q.Service, v)
	default:
		return fmt.Errorf("%s: not a field (the fields: %s)", f, fieldNames(AllFields))
	}
	return nil
}

func example(f Field) string {
	switch f {
	case State:
		return "state:reserved"
	case Amount:
		return "amount:>100, amount:50..200"
	case Created:
		return "created:<7d, created:2026-11-01..2026-11-20"
	}
	return string(f) + ":text"
}

type token struct{ field, value string }

// tokens splits the text at spaces outside double quotes; a word whose
// letters before a colon name a field (or look like one) is a field's
// value. A quote inside a word starts a quoted part: customer:"Hans Müller".
func tokens(s string) ([]token, error) {
	var out []token
	i := 0
	for {
		for i < len(s) && isSpace(s[i]) {
			i++
		}
		if i == len(s) {
			return out, nil
		}
		var b strings.Builder
		quoted := false
		for i < len(s) && (quoted || !isSpace(s[i])) {
			if s[i] == '"' {
				quoted = !quoted
				i++
				continue
			}
			b.WriteByte(s[i])
			i++
		}
		if quoted {
			return nil, errors.New("filter: a quote (\") is not closed")
		}
		w := b.String()
		if f, v, ok := strings.Cut(w, ":"); ok && isFieldName(f) && !strings.HasPrefix(v, "//") {
			out = append(out, token{f, v})
			continue
		}
		out = append(out, token{"", w})
	}
}

func isSpace(c byte) bool { return c == ' ' || c == '\t' || c == '\n' || c == '\r' }

// isFieldName: letters only. "12:30" and "https://…" stay words; a
// mistyped field ("staet:reserved") is refused, not searched for.
func isFieldName(s string) bool {
	if s == "" || len(s) > 20 {
		return false
	}
	for _, r := range s {
		if r > unicode.MaxASCII || !unicode.IsLetter(r) {
			return false
		}
	}
	return true
}

// parseAmount: 100, >100, >=100, <100, <=100, 50..200, 50.., ..200; a
// decimal comma is taken as a point.
func parseAmount(v string) (AmountRange, error) {
	var r AmountRange
	num := func(s string) (decimal.Decimal, error) {
		t := strings.ReplaceAll(s, ",", ".")
		if !plainNumber(t) {
			return decimal.Decimal{}, fmt.Errorf("amount: %s is not an amount (amount:>100, amount:50..200, amount:12.50)", v)
		}
		d, err := decimal.NewFromString(t)
		if err != nil {
			return decimal.Decimal{}, fmt.Errorf("amount: %s is not an amount: %w", v, err)
		}
		return d, nil
	}
	if lo, hi, ok := strings.Cut(v, ".."); ok {
		if lo == "" && hi == "" {
			return r, fmt.Errorf("amount: %s is a range without ends (amount:50..200)", v)
		}
		var err error
		if lo != "" {
			if r.Min, err = num(lo); err != nil {
				return r, err
			}
			r.HasMin = true
		}
		if hi != "" {
			if r.Max, err = num(hi); err != nil {
				return r, err
			}
			r.HasMax = true
		}
		if r.HasMin && r.HasMax && r.Min.GreaterThan(r.Max) {
			return r, fmt.Errorf("amount: %s starts above its end", v)
		}
		return r, nil
	}
	op, rest := cutOp(v)
	d, err := num(rest)
	if err != nil {
		return r, err
	}
	switch op {
	case ">", ">=":
		r.Min, r.HasMin, r.MinExcl = d, true, op == ">"
	case "<", "<=":
		r.Max, r.HasMax, r.MaxExcl = d, true, op == "<"
	default:
		r.Min, r.Max, r.HasMin, r.HasMax = d, d, true, true
	}
	return r, nil
}

// plainNumber: digits with at most one point between digits (no sign, no
// exponent: "1e9" is a typo, not a billion).
func plainNumber(s string) bool {
	if len(s) > 20 {
		return false
	}
	whole, frac, dot := strings.Cut(s, ".")
	digits := func(t string) bool {
		if t == "" {
			return false
		}
		for i := 0; i < len(t); i++ {
			if t[i] < '0' || t[i] > '9' {
				return false
			}
		}
		return true
	}
	return digits(whole) && (!dot || digits(frac))
}

func cutOp(v string) (string, string) {
	for _, op := range []string{">=", "<=", ">", "<", "="} {
		if rest, ok := strings.CutPrefix(v, op); ok {
			return op, rest
		}
	}
	return "", v
}

const dateLayout = "2006-01-02"

// parseCreated: <7d (less than 7 days ago), >7d (more than), 7d (as <7d),
// with units h, d and w; a date (that day), >date, >=date, <date, <=date,
// date..date (both days included), date.., ..date.
func parseCreated(v string, now time.Time) (TimeRange, error) {
	var r TimeRange
	loc := now.Location()
	day := func(s string) (time.Time, error) {
		t, err := time.ParseInLocation(dateLayout, s, loc)
		// Years a store can hold as Unix nanoseconds, with room.
		if err == nil && (t.Year() < 1900 || t.Year() > 2200) {
			return time.Time{}, fmt.Errorf("created: %s is not a date between 1900 and 2200", v)
		}
		if err != nil {
			return time.Time{}, fmt.Errorf("created: %s is not a date or an age (created:2026-11-01, created:<7d, created:2026-11-01..2026-11-20)", v)
		}
		return t, nil
	}
	if lo, hi, ok := strings.Cut(v, ".."); ok {
		if lo == "" && hi == "" {
			return r, fmt.Errorf("created: %s is a range without ends (created:2026-11-01..2026-11-20)", v)
		}
		if lo != "" {
			t, err := day(lo)
			if err != nil {
				return r, err
			}
			r.From = t
		}
		if hi != "" {
			t, err := day(hi)
			if err != nil {
				return r, err
			}
			r.To = t.AddDate(0, 0, 1)
		}
		if !r.From.IsZero() && !r.To.IsZero() && !r.From.Before(r.To) {
			return r, fmt.Errorf("created: %s starts after its end", v)
		}
		return r, nil
	}
	op, rest := cutOp(v)
	if d, ok := age(rest); ok {
		at := now.Add(-d)
		switch op {
		case ">", ">=":
			r.To = at // older than
		default:
			r.From = at
		}
		return r, nil
	}
	t, err := day(rest)
	if err != nil {
		return r, err
	}
	switch op {
	case ">":
		r.From = t.AddDate(0, 0, 1)
	case ">=":
		r.From = t
	case "<":
		r.To = t
	case "<=":
		r.To = t.AddDate(0, 0, 1)
	default:
		r.From, r.To = t, t.AddDate(0, 0, 1)
	}
	return r, nil
}

// age reads 7d, 12h, 2w (up to ten years).
func age(s string) (time.Duration, bool) {
	if len(s) < 2 {
		return 0, false
	}
	n, err := strconv.Atoi(s[:len(s)-1])
	if err != nil || n < 0 || n > 3660 || s[0] == '+' {
		return 0, false
	}
	switch s[len(s)-1] {
	case 'h':
		return time.Duration(n) * time.Hour, true
	case 'd':
		return time.Duration(n) * 24 * time.Hour, true
	case 'w':
		return time.Duration(n) * 7 * 24 * time.Hour, true
	}
	return 0, false
}

// Key is the query as a string that is equal for equal queries (a cache's
// key).
func (q *Query) Key() string {
	var b strings.Builder
	fmt.Fprintf(&b, "w%q s%q c%q e%q o%q v%q", q.Words, q.State, q.Customer, q.Email, q.Operator, q.Service)
	if a := q.Amount; a != nil {
		fmt.Fprintf(&b, " a%v%s%v%v%s%v", a.HasMin, a.Min, a.MinExcl, a.HasMax, a.Max, a.MaxExcl)
	}
	if c := q.Created; c != nil {
		fmt.Fprintf(&b, " t%d,%d", c.From.UnixNano(), c.To.UnixNano())
	}
	return b.String()
}
