package ops

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"io"
	"net/http"
	"strings"
	"time"

	"github.com/shopspring/decimal"

	"paydesk/api"
	"paydesk/internal/access"
	"paydesk/store"
)

// TestReservation is a realistic Reserve for sandbox and test mode: three
// lines (3 shoes, 2 packs of socks, shipping), a Dutch customer, and an
// invoice named after now with a random suffix, so two made in the same
// second are still two invoices. Forms prefill it; the operator may change
// anything before sending.
func TestReservation(now time.Time, currency string) api.Reserve {
	var b [3]byte
	_, _ = rand.Read(b[:]) // crypto/rand.Read never fails on supported platforms
	return TestReservationWith(now, currency, hex.EncodeToString(b[:]))
}

// TestReservationWith is TestReservation with the invoice's suffix given
// (for screens that must look the same on every run).
func TestReservationWith(now time.Time, currency, suffix string) api.Reserve {
	if currency == "" {
		currency = "EUR"
	}
	d := decimal.RequireFromString
	return api.Reserve{
		Currency: currency,
		Invoice:  "T-" + now.UTC().Format("20060102-150405") + "-" + suffix,
		ClientIP: api.ClientIP{Type: api.IPv4, Address: "127.0.0.1"},
		Articles: []api.Article{
			{Number: "SHOE-42", Title: "Trail running shoe, size 42", Type: api.ArticleTypeGeneral, Price: d("59.95"), Quantity: 3, Vat: d("21")},
			{Number: "SOCK-3P", Title: "Merino socks, 3 pairs", Type: api.ArticleTypeGeneral, Price: d("14.50"), Quantity: 2, Vat: d("21")},
			{Number: "SHIP", Title: "Shipping", Type: api.ArticleTypeShipment, Price: d("4.95"), Quantity: 1, Vat: d("21")},
		},
		Billing: api.Address{FirstName: "Jan", LastName: "Jansen", Street: "Prinsengracht", HouseNumber: "263",
			PostalCode: "1016 GV", City: "Amsterdam", Country: "NL", Email: "jan.jansen@example.com", PhoneNumber: "0201234567"},
		ShippingSameAsBilling: true,
		Customer:              api.Customer{Gender: 1, OperatingCountry: "NL", Pno: "01011980"},
	}
}

// Reserve sends a new test reservation. It is refused against a live
// gateway: the console never creates real reservations.
func (s *Service) Reserve(ctx context.Context, r api.Reserve) (Result, error) {
	if err := s.Check(ctx, access.Payment); err != nil {
		return Result{Action: api.ActionReserve, Target: r.Invoice}, fmt.Errorf("new test reservation: %w", err)
	}
	if s.cfg.Mode.IsLive() {
		return Result{Action: api.ActionReserve, Target: r.Invoice}, fmt.Errorf("new test reservation: %w", ErrLiveRefused)
	}
	if s.cfg.PushURL != "" && r.PushURL == "" {
		r.PushURL = s.cfg.PushURL
	}
	return s.submit(ctx, submission{op: r, audit: "reserve", target: r.Invoice, amount: api.ArticlesTotal(r.Articles),
		currency: r.Currency, reason: "test reservation"})
}

// CustomerStep approves or declines the customer redirect of a pending
// reservation in the sandbox, standing in for the customer. Refused against
// a live gateway.
func (s *Service) CustomerStep(ctx context.Context, ref string, approve bool) error {
	verb := "decline"
	if approve {
		verb = "approve"
	}
	if s.cfg.Mode.IsLive() {
		return fmt.Errorf("customer %s: %w", verb, ErrLiveRefused)
	}
	if err := s.Check(ctx, access.Payment); err != nil {
		return fmt.Errorf("customer %s: %w", verb, err)
	}
	r, err := s.reservation(ctx, ref)
	if err != nil {
		return fmt.Errorf("customer %s: %w", verb, err)
	}
	if r.State() != store.StateAwaitingCustomer {
		return fmt.Errorf("customer %s %s: %w: the reservation is %s", verb, r.Key, ErrNotPossible, r.State())
	}
	step := s.cfg.CustomerStep
	if step == nil {
		step = s.postCustomerStep
	}
	err = step(ctx, r.Key, r.RedirectURL, approve)
	result := "done"
	if err != nil {
		result = "failed: " + oneLine(err.Error())
	}
	// The step was tried: its trace is written even when ctx ended.
	aerr := s.audit(context.WithoutCancel(ctx), store.AuditEntry{Action: "customer-" + verb, Target: r.Key, Amount: r.Amount(), Currency: r.Currency,
		Result: result, Reason: "sandbox customer step"})
	if err != nil {
		return fmt.Errorf("customer %s %s: %w", verb, r.Key, err)
	}
	return aerr
}

// postCustomerStep presses the sandbox checkout page's button: POST
// {RedirectURL}/approve (or /decline).
func (s *Service) postCustomerStep(ctx context.Context, key, redirectURL string, approve bool) error {
	if redirectURL == "" {
		return fmt.Errorf("no redirect URL stored for %s", key)
	}
	verb := "decline"
	if approve {
		verb = "approve"
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, strings.TrimSuffix(redirectURL, "/")+"/"+verb, nil)
	if err != nil {
		return err
	}
	req.Header.Set("Accept", "application/json")
	resp, err := s.cfg.HTTP.Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(io.LimitReader(resp.Body, 4096))
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("sandbox answered HTTP %d: %s", resp.StatusCode, oneLine(string(body)))
	}
	return nil
}
