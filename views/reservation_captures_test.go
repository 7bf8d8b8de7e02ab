package views

import (
	"strings"
	"testing"
	"time"

	tea "charm.land/bubbletea/v2"
	"github.com/charmbracelet/x/ansi"
	"github.com/shopspring/decimal"

	"paydesk/api"
	"paydesk/store"
)

// The reservation page lists its captures oldest first whatever order they
// come in, and under each the lines it shipped and its parcels.
func TestReservationPageCapturesInTimeWithLines(t *testing.T) {
	now := time.Date(2026, 11, 25, 12, 0, 0, 0, time.UTC)
	ctx := NewContext(func() time.Time { return now })
	d := decimal.RequireFromString
	r := &store.Reservation{Key: "KRES", ReservationNumber: "R-1", Invoice: "INV-1", Currency: "EUR", LinesKnown: true,
		Status: store.Status{Code: api.StatusSuccess}, Created: now.Add(-48 * time.Hour),
		Lines: []store.Line{{ArticleNumber: "SHOE-42", Title: "Shoe", Price: d("59.95"), Reserved: 3, Captured: 2},
			{ArticleNumber: "SOCK-3P", Title: "Socks", Price: d("14.50"), Reserved: 2, Captured: 2}}}
	later := &store.Transaction{Key: "AAAA0000000000000000000000000002", Kind: store.KindCapture, Amount: d("59.95"), Currency: "EUR",
		Status: store.Status{Code: api.StatusSuccess}, Created: now.Add(-2 * time.Hour), InvoiceNumber: "PRV-2",
		Lines: []api.CaptureLine{{ArticleNumber: "SHOE-42", Quantity: 1}}, Parcels: []store.Parcel{{ID: "P-2", Tracking: "3SLATER"}}}
	earlier := &store.Transaction{Key: "ZZZZ0000000000000000000000000001", Kind: store.KindCapture, Amount: d("88.95"), Currency: "EUR",
		Status: store.Status{Code: api.StatusSuccess}, Created: now.Add(-30 * time.Hour), InvoiceNumber: "PRV-1",
		Lines: []api.CaptureLine{{ArticleNumber: "SHOE-42", Quantity: 1}, {ArticleNumber: "SOCK-3P", Quantity: 2}}}
	p := NewReservationDetail(ctx, ReservationDetailMsg{Ref: "R-1", Reservation: r, Transactions: []*store.Transaction{later, earlier}})
	p.SetSize(140, 60)
	view := ansi.Strip(p.View())
	first, second := strings.Index(view, "PRV-1"), strings.Index(view, "PRV-2")
	if first < 0 || second < 0 || first > second {
		t.Fatalf("captures not oldest first:\n%s", view)
	}
	for _, want := range []string{"SHOE-42 ×1, SOCK-3P ×2", "SHOE-42 ×1 · parcel P-2 tracking 3SLATER"} {
		if !strings.Contains(view, want) {
			t.Errorf("the page lacks %q:\n%s", want, view)
		}
	}
	if i := strings.Index(view, "SOCK-3P ×2"); i < first || i > second {
		t.Errorf("the first capture's lines are not under it:\n%s", view)
	}
}

// n on a reservation page makes a new test reservation, as on the list,
// and the page lists it among its keys.
func TestReservationPageNewReservation(t *testing.T) {
	ctx := NewContext(func() time.Time { return time.Date(2026, 11, 25, 12, 0, 0, 0, time.UTC) })
	r := &store.Reservation{Key: "KRES", ReservationNumber: "R-1", Invoice: "INV-1", Currency: "EUR", Status: store.Status{Code: api.StatusSuccess}}
	p := NewReservationDetail(ctx, ReservationDetailMsg{Ref: "R-1", Reservation: r})
	p.SetSize(100, 30)
	cmd := p.Update(tea.KeyPressMsg{Code: 'n', Text: "n"})
	if cmd == nil {
		t.Fatal("n does nothing on a reservation page")
	}
	if _, ok := cmd().(NewReservationIntent); !ok {
		t.Fatalf("n sends %T", cmd())
	}
	listed := false
	for _, a := range p.Actions() {
		listed = listed || a.Key.Help().Key == "n"
	}
	if !listed {
		t.Fatal("the page's keys do not list n")
	}
}
