package cli

import (
	"context"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/shopspring/decimal"

	"paydesk/api"
	"paydesk/store"
)

// TestPushesTableLastReceiptToTheSecond: the table of `paydesk pushes`
// prints a repeated push's last receipt as it prints its other times, to
// the second in UTC, not with the receipt's nanoseconds.
func TestPushesTableLastReceiptToTheSecond(t *testing.T) {
	first := time.Date(2026, 11, 1, 9, 0, 0, 0, time.UTC)
	for _, tc := range []struct {
		name string
		last time.Time
		want string
	}{
		{"whole second", first.Add(3 * time.Minute), "×2 (last 2026-11-01T09:03:00Z)"},
		{"milliseconds", first.Add(3*time.Minute + 250*time.Millisecond), "×2 (last 2026-11-01T09:03:00Z)"},
		{"nanoseconds", first.Add(3*time.Minute + 999_999_999), "×2 (last 2026-11-01T09:03:00Z)"},
		{"another zone", first.Add(3*time.Minute + 1).In(time.FixedZone("CET", 3600)), "×2 (last 2026-11-01T09:03:00Z)"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			db, err := store.Open(filepath.Join(dir, "paydesk", "paydesk.db"), store.Options{NoSync: true})
			if err != nil {
				t.Fatal(err)
			}
			p := &api.Push{Transaction: &api.TransactionPush{Key: "0123456789ABCDEF0123456789ABCDEF", Invoice: "PINV-1",
				ServiceCode: "customgiftcard", IsTest: true, Currency: "EUR", TransactionType: api.TypeGiftCardPay,
				Status:      api.Status{Code: api.Code{Code: api.StatusSuccess}, DateTime: api.NewDateTime(first, true)},
				AmountDebit: api.NewAmount(decimal.New(1000, -2)), MutationType: api.MutationDeferred}}
			body, err := p.Encode()
			if err != nil {
				t.Fatal(err)
			}
			for _, at := range []time.Time{first, tc.last} {
				if _, err := db.ApplyPush(context.Background(), store.PushRecord{ReceivedAt: at, RemoteAddr: "192.0.2.1:1",
					Body: body, Method: "POST", URL: "/push"}, p); err != nil {
					t.Fatal(err)
				}
			}
			if err := db.Close(); err != nil {
				t.Fatal(err)
			}
			code, out, errs := runCLI(t, dir, "", "pushes", "--limit", "0")
			if code != 0 {
				t.Fatalf("exit %d %s", code, errs)
			}
			if !strings.Contains(out, tc.want) || !strings.Contains(out, "2026-11-01T09:00:00Z") {
				t.Errorf("the table does not say %q:\n%s", tc.want, out)
			}
		})
	}
}

// TestPushesShowReceiptsToTheSecond: `paydesk pushes show` prints each
// receipt to the second in UTC, as the list does; --json keeps the
// nanoseconds.
func TestPushesShowReceiptsToTheSecond(t *testing.T) {
	first := time.Date(2026, 11, 1, 9, 0, 0, 123_456_789, time.UTC)
	for _, tc := range []struct {
		name       string
		last       time.Time
		want, gone []string
	}{
		{"nanoseconds", first.Add(3 * time.Minute),
			[]string{"first   2026-11-01T09:00:00Z", "repeat  2026-11-01T09:03:00Z"}, []string{".123456789"}},
		{"another zone", first.Add(time.Hour).In(time.FixedZone("CET", 3600)),
			[]string{"2026-11-01T09:00:00Z", "2026-11-01T10:00:00Z"}, []string{".123456789", "+01:00"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			db, err := store.Open(filepath.Join(dir, "paydesk", "paydesk.db"), store.Options{NoSync: true})
			if err != nil {
				t.Fatal(err)
			}
			p := &api.Push{Transaction: &api.TransactionPush{Key: "0123456789ABCDEF0123456789ABCDEF", Invoice: "PINV-1",
				ServiceCode: "customgiftcard", IsTest: true, Currency: "EUR", TransactionType: api.TypeGiftCardPay,
				Status:      api.Status{Code: api.Code{Code: api.StatusSuccess}, DateTime: api.NewDateTime(first, true)},
				AmountDebit: api.NewAmount(decimal.New(1000, -2)), MutationType: api.MutationDeferred}}
			body, err := p.Encode()
			if err != nil {
				t.Fatal(err)
			}
			var id uint64
			for _, at := range []time.Time{first, tc.last} {
				res, err := db.ApplyPush(context.Background(), store.PushRecord{ReceivedAt: at, RemoteAddr: "192.0.2.1:1",
					Body: body, Method: "POST", URL: "/push"}, p)
				if err != nil {
					t.Fatal(err)
				}
				id = res.ID
			}
			if err := db.Close(); err != nil {
				t.Fatal(err)
			}
			code, out, errs := runCLI(t, dir, "", "pushes", "show", strconv.FormatUint(id, 10))
			if code != 0 {
				t.Fatalf("exit %d %s", code, errs)
			}
			for _, w := range tc.want {
				if !strings.Contains(out, w) {
					t.Errorf("show does not say %q:\n%s", w, out)
				}
			}
			for _, g := range tc.gone {
				if strings.Contains(out, g) {
					t.Errorf("show says %q:\n%s", g, out)
				}
			}
			code, out, errs = runCLI(t, dir, "", "pushes", "show", strconv.FormatUint(id, 10), "--json")
			if code != 0 || !strings.Contains(out, "09:00:00.123456789Z") {
				t.Errorf("--json lost the nanoseconds (exit %d %s):\n%s", code, errs, out)
			}
		})
	}
}
