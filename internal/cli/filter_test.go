package cli

import (
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	tea "charm.land/bubbletea/v2"
	"github.com/shopspring/decimal"
	"github.com/spf13/pflag"

	"paydesk/api"
	"paydesk/store"
	"paydesk/ui"
	"paydesk/views"
)

// filterCache writes reservations with known customers, amounts, states
// and days into the cache the commands of dir read.
func filterCache(t *testing.T, dir string) {
	t.Helper()
	db, err := store.Open(filepath.Join(dir, "paydesk", "paydesk.db"), store.Options{NoSync: true})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	names := []string{"Anna Müller", "Jan Straße", "Lukas Gruber", "Eva Mueller"}
	day := time.Date(2026, 11, 1, 9, 0, 0, 0, time.Local)
	var rs []*store.Reservation
	for i := range 40 {
		first, last, _ := strings.Cut(names[i%len(names)], " ")
		created := day.Add(time.Duration(i) * 13 * time.Hour)
		r := &store.Reservation{Key: fmt.Sprintf("%032X", i+1), ReservationNumber: fmt.Sprintf("R%05d", i), Invoice: fmt.Sprintf("INV-%05d", i),
			Currency: "EUR", LinesKnown: true, Created: created,
			Original: store.Update{Billing: api.Address{FirstName: first, LastName: last, Country: "DE", Email: fmt.Sprintf("c%d@shop.example", i)},
				Articles: []api.Article{{Number: "SKU-1", Title: "Wool scarf", Type: api.ArticleTypeGeneral,
					Price: decimal.New(int64(2500+i*500), -2), Quantity: 1, Vat: decimal.NewFromInt(19)}}},
			Status: store.Status{Code: api.StatusSuccess, Time: created}}
		if i%3 == 0 {
			r.Requests = append(r.Requests, store.Request{Key: fmt.Sprintf("C%031X", i), Action: api.ActionCancelReservation,
				Status: store.Status{Code: api.StatusSuccess, Time: created.Add(time.Hour)}})
		}
		rs = append(rs, r)
	}
	if err := db.PutReservations(t.Context(), rs); err != nil {
		t.Fatal(err)
	}
}

var invoiceRE = regexp.MustCompile(`INV-\d{5}`)

// TestFilterSameInConsoleAndCLI: one filter gives the same rows, in the
// same order, in `reservations --filter` and typed into the console's "/".
func TestFilterSameInConsoleAndCLI(t *testing.T) {
	dir := t.TempDir()
	filterCache(t, dir)
	for _, f := range []string{
		"mueller",
		"customer:muller",
		"strasse state:reserved",
		"amount:>100 amount:2",
		"amount:50..120 created:2026-11-05..2026-11-15",
		`state:cancelled customer:"anna m"`,
		"email:c1 created:<2026-11-10",
		`"wool scarf" amount:<=40`,
	} {
		code, out, errs := runCLI(t, dir, "", "reservations", "--filter", f)
		if f == "amount:>100 amount:2" {
			if code != exitUsage || !strings.Contains(errs, "amount: given twice") {
				t.Fatalf("%q: exit %d %q", f, code, errs)
			}
			continue
		}
		if code != 0 {
			t.Fatalf("%q: exit %d %s", f, code, errs)
		}
		cli := invoiceRE.FindAllString(out, -1)
		if len(cli) == 0 {
			t.Fatalf("%q found nothing on the command line:\n%s", f, out)
		}
		if got := consoleRows(t, dir, f); !slices.Equal(got, cli) {
			t.Errorf("%q: console %v, command line %v", f, got, cli)
		}
	}
}

// consoleRows types filter into the reservations tab over the cache of
// dir and returns the invoices it shows.
func consoleRows(t *testing.T, dir, filter string) []string {
	t.Helper()
	db, err := store.Open(filepath.Join(dir, "paydesk", "paydesk.db"), store.Options{NoSync: true})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	ctx := views.NewContext(time.Now)
	ctx.Tick = func(time.Duration, func(time.Time) tea.Msg) tea.Cmd { return nil }
	s := views.NewReservations(ctx)
	s.SetSize(140, 60)
	var run func(cmd tea.Cmd)
	run = func(cmd tea.Cmd) {
		for cmd != nil {
			msg := cmd()
			if b, ok := msg.(tea.BatchMsg); ok {
				for _, c := range b {
					run(c)
				}
				return
			}
			cmd = s.Update(msg)
		}
	}
	run(s.Update(views.ReservationSourceMsg{Source: db}))
	for _, r := range "/" + filter {
		run(s.Update(tea.KeyPressMsg{Code: r, Text: string(r)}))
	}
	return invoiceRE.FindAllString(s.View(), -1)
}

// TestFilterFlagRefuses: a field a list does not have, and a value a field
// does not take, are usage errors naming the field and the rule.
func TestFilterFlagRefuses(t *testing.T) {
	dir := t.TempDir()
	filterCache(t, dir)
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"reservations", "--filter", "operator:alice"}, "--filter: operator: not a field of the reservation list"},
		{[]string{"reservations", "--filter", "amount:>abc"}, "--filter: amount: >abc is not an amount"},
		{[]string{"transactions", "--filter", "state:reserved"}, "--filter: state: not a field of the transaction list"},
		{[]string{"pushes", "--filter", "customer:x"}, "--filter: customer: not a field of the push list"},
		{[]string{"audit", "--filter", "service:kp"}, "--filter: service: not a field of the audit list"},
		{[]string{"audit", "--filter", "created:soon"}, "created: soon is not a date or an age"},
	} {
		code, _, errs := runCLI(t, dir, "", tc.args...)
		if code != exitUsage || !strings.Contains(errs, tc.want) {
			t.Errorf("%v: exit %d %q, want %q", tc.args, code, errs, tc.want)
		}
	}
	for _, args := range [][]string{{"transactions", "--filter", "amount:>1 service:kp"}, {"pushes", "--filter", "created:<7d"},
		{"audit", "--filter", "operator:clitest"}} {
		if code, _, errs := runCLI(t, dir, "", args...); code != 0 {
			t.Errorf("%v: exit %d %s", args, code, errs)
		}
	}
}

// TestSavedViewsConfig: [views] in the config file become the console's
// saved views, by name; a view whose filter does not parse, or names a
// field the reservations lack, stops every command with the view named.
func TestSavedViewsConfig(t *testing.T) {
	dir := t.TempDir()
	cfg := filepath.Join(dir, "paydesk", "config.toml")
	write := func(s string) {
		t.Helper()
		if err := os.MkdirAll(filepath.Dir(cfg), 0o700); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(cfg, []byte(s), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	write("[views]\nopen = \"state:reserved created:<3d\"\n\"big ones\" = \"amount:>100\"\n")
	env := map[string]string{"XDG_DATA_HOME": dir, "XDG_CONFIG_HOME": dir, "HOME": dir}
	set, err := resolveSettings(pflag.NewFlagSet("x", pflag.ContinueOnError), func(k string) string { return env[k] })
	if err != nil {
		t.Fatal(err)
	}
	want := []ui.SavedView{{Name: "big ones", Filter: "amount:>100"}, {Name: "open", Filter: "state:reserved created:<3d"}}
	if !slices.Equal(set.Views, want) {
		t.Fatalf("views %v, want %v", set.Views, want)
	}
	for _, tc := range []struct{ file, want string }{
		{"[views]\nopen = \"amount:>abc\"\n", `[views] open = "amount:>abc": amount: >abc is not an amount`},
		{"[views]\nmine = \"operator:alice\"\n", `[views] mine = "operator:alice": operator: not a field of the reservation list`},
	} {
		write(tc.file)
		code, _, errs := runCLI(t, dir, "", "reservations")
		if code == 0 || !strings.Contains(errs, tc.want) {
			t.Errorf("%q: exit %d %q, want %q", tc.file, code, errs, tc.want)
		}
	}
}
