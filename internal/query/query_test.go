package query

import (
	"strings"
	"testing"
	"time"

	"github.com/shopspring/decimal"
)

var now = time.Date(2026, 11, 25, 15, 30, 0, 0, time.UTC)

func day(s string) time.Time {
	t, err := time.Parse(dateLayout, s)
	if err != nil {
		panic(err)
	}
	return t
}

func dec(s string) decimal.Decimal { return decimal.RequireFromString(s) }

func TestParse(t *testing.T) {
	for _, tc := range []struct {
		in   string
		want Query
	}{
		{"", Query{}},
		{"  ", Query{}},
		{"müller", Query{Words: []string{"müller"}}},
		{`word "two words"`, Query{Words: []string{"word", "two words"}}},
		{"state:reserved", Query{State: "reserved"}},
		{"STATE:Partly-Captured", Query{State: "partly_captured"}},
		{`state:"partly captured"`, Query{State: "partly_captured"}},
		{"amount:>100", Query{Amount: &AmountRange{Min: dec("100"), HasMin: true, MinExcl: true}}},
		{"amount:>=100", Query{Amount: &AmountRange{Min: dec("100"), HasMin: true}}},
		{"amount:<12,50", Query{Amount: &AmountRange{Max: dec("12.5"), HasMax: true, MaxExcl: true}}},
		{"amount:<=12.50", Query{Amount: &AmountRange{Max: dec("12.5"), HasMax: true}}},
		{"amount:50..200", Query{Amount: &AmountRange{Min: dec("50"), Max: dec("200"), HasMin: true, HasMax: true}}},
		{"amount:50..", Query{Amount: &AmountRange{Min: dec("50"), HasMin: true}}},
		{"amount:..200", Query{Amount: &AmountRange{Max: dec("200"), HasMax: true}}},
		{"amount:99.99", Query{Amount: &AmountRange{Min: dec("99.99"), Max: dec("99.99"), HasMin: true, HasMax: true}}},
		{"created:<7d", Query{Created: &TimeRange{From: now.Add(-7 * 24 * time.Hour)}}},
		{"created:7d", Query{Created: &TimeRange{From: now.Add(-7 * 24 * time.Hour)}}},
		{"created:>2w", Query{Created: &TimeRange{To: now.Add(-14 * 24 * time.Hour)}}},
		{"created:<12h", Query{Created: &TimeRange{From: now.Add(-12 * time.Hour)}}},
		{"created:2026-11-01", Query{Created: &TimeRange{From: day("2026-11-01"), To: day("2026-11-02")}}},
		{"created:2026-11-01..2026-11-20", Query{Created: &TimeRange{From: day("2026-11-01"), To: day("2026-11-21")}}},
		{"created:2026-11-01..", Query{Created: &TimeRange{From: day("2026-11-01")}}},
		{"created:..2026-11-20", Query{Created: &TimeRange{To: day("2026-11-21")}}},
		{"created:>2026-11-01", Query{Created: &TimeRange{From: day("2026-11-02")}}},
		{"created:>=2026-11-01", Query{Created: &TimeRange{From: day("2026-11-01")}}},
		{"created:<2026-11-01", Query{Created: &TimeRange{To: day("2026-11-01")}}},
		{"created:<=2026-11-01", Query{Created: &TimeRange{To: day("2026-11-02")}}},
		{`customer:"Hans Müller" email:shop.example customer:hans`, Query{Customer: []string{"Hans Müller", "hans"}, Email: []string{"shop.example"}}},
		{"operator:alice service:deferredkp", Query{Operator: []string{"alice"}, Service: []string{"deferredkp"}}},
		// A colon after no field name is part of a word.
		{"12:30 https://x.example/a", Query{Words: []string{"12:30", "https://x.example/a"}}},
		{`""`, Query{}},
		{"state:reserved amount:>100 created:<7d customer:mü email:e operator:o service:s word",
			Query{Words: []string{"word"}, State: "reserved", Amount: &AmountRange{Min: dec("100"), HasMin: true, MinExcl: true},
				Created: &TimeRange{From: now.Add(-7 * 24 * time.Hour)}, Customer: []string{"mü"}, Email: []string{"e"},
				Operator: []string{"o"}, Service: []string{"s"}}},
	} {
		got, err := Parse(tc.in, now)
		if err != nil {
			t.Errorf("Parse(%q): %v", tc.in, err)
			continue
		}
		if got.Key() != tc.want.Key() {
			t.Errorf("Parse(%q)\n got %s\nwant %s", tc.in, got.Key(), tc.want.Key())
		}
	}
}

func TestParseRefuses(t *testing.T) {
	for _, tc := range []struct{ in, want string }{
		{"amount:>abc", "amount: >abc is not an amount"},
		{"amount:1e9", "amount: 1e9 is not an amount"},
		{"amount:-5", "amount: -5 is not an amount"},
		{"amount:..", "amount: .. is a range without ends"},
		{"amount:200..50", "amount: 200..50 starts above its end"},
		{"amount:1 amount:2", "amount: given twice"},
		{"amount:", "amount: needs a value"},
		{"created:yesterday", "created: yesterday is not a date or an age"},
		{"created:2026-13-01", "created: 2026-13-01 is not a date or an age"},
		{"created:<7y", "created: <7y is not a date or an age"},
		{"created:2026-11-20..2026-11-01", "starts after its end"},
		{"created:1d created:2d", "created: given twice"},
		{"created:0001-01-01..", "not a date between 1900 and 2200"},
		{"state:reserved state:captured", "state: given twice"},
		{"staet:reserved", "staet: not a field"},
		{`customer:"Hans`, "a quote (\") is not closed"},
		{"\xff", "not UTF-8"},
		{strings.Repeat("a", 1001), "more than 1000"},
	} {
		_, err := Parse(tc.in, now)
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("Parse(%q) = %v, want an error with %q", tc.in, err, tc.want)
		}
	}
}

func TestCheck(t *testing.T) {
	l := List{Name: "reservation", Fields: []Field{State, Amount, Created, Customer, Email}, States: []string{"reserved", "captured"}}
	for _, tc := range []struct{ in, want string }{
		{"state:reserved amount:>1 created:<1d customer:x email:y word", ""},
		{"operator:alice", "operator: not a field of the reservation list (its fields: state, amount, created, customer, email)"},
		{"service:kp", "service: not a field of the reservation list"},
		{"state:gone", `state: "gone" is not a state of the reservation list (one of reserved, captured)`},
	} {
		q, err := Parse(tc.in, now)
		if err != nil {
			t.Fatal(err)
		}
		err = q.Check(l)
		if tc.want == "" && err != nil || tc.want != "" && (err == nil || !strings.Contains(err.Error(), tc.want)) {
			t.Errorf("Check(%q) = %v, want %q", tc.in, err, tc.want)
		}
	}
}

func TestRanges(t *testing.T) {
	r := AmountRange{Min: dec("50"), Max: dec("200"), HasMin: true, HasMax: true, MaxExcl: true}
	for _, tc := range []struct {
		v    string
		want bool
	}{{"49.99", false}, {"50", true}, {"50.00", true}, {"199.99", true}, {"200", false}} {
		if got := r.Contains(dec(tc.v)); got != tc.want {
			t.Errorf("%v.Contains(%s) = %v", r, tc.v, got)
		}
	}
	tr := TimeRange{From: day("2026-11-01"), To: day("2026-11-02")}
	for _, tc := range []struct {
		at   time.Time
		want bool
	}{{day("2026-11-01"), true}, {day("2026-11-02").Add(-1), true}, {day("2026-11-02"), false}, {time.Time{}, false}} {
		if got := tr.Contains(tc.at); got != tc.want {
			t.Errorf("Contains(%v) = %v", tc.at, got)
		}
	}
}

// FuzzParse: no input panics; what parses, parses again from its words
// alone the same way (words never turn into fields), and a range is never
// inverted.
func FuzzParse(f *testing.F) {
	for _, s := range []string{"state:reserved amount:>100 created:<7d", "amount:50..200", `customer:"a b" "x y"`,
		"created:2026-11-01..2026-11-20", "12:30", "amount:..", `"`, "created:>=2026-02-29"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		q, err := Parse(s, now)
		if err != nil {
			if err.Error() == "" {
				t.Fatal("an empty error")
			}
			return
		}
		if a := q.Amount; a != nil && a.HasMin && a.HasMax && a.Min.GreaterThan(a.Max) {
			t.Fatalf("%q: amount range inverted", s)
		}
		if c := q.Created; c != nil && !c.From.IsZero() && !c.To.IsZero() && c.To.Before(c.From) {
			t.Fatalf("%q: created range inverted", s)
		}
		for _, w := range q.Words {
			if w == "" {
				t.Fatalf("%q: an empty word", s)
			}
		}
		_ = q.Key()
	})
}
