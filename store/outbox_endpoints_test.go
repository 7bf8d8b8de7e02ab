package store

import (
	"context"
	"errors"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"paydesk/api"
	"paydesk/internal/pgtest"
)

// The forward endpoints are the store's: the first process given some
// sets them; a process given none still records a delivery per stored
// endpoint for every push it stores; a process given others is refused,
// with both sets named and passwords masked; a change made with
// SetForwardTo (audited) holds for every push stored after it. Every
// engine, each store opened again and again as separate processes do.
func TestForwardToKeptInTheStore(t *testing.T) {
	pgtest.OwnEngine(t)
	const (
		a      = "http://shop.test/a"
		b      = "https://hook:s3cret-pw@shop.test/b"
		other  = "http://elsewhere.test/push"
		shownB = "https://hook:xxxxx@shop.test/b"
	)
	wheres := map[string]func(t *testing.T) (string, bool){
		"bolt":      func(t *testing.T) (string, bool) { return filepath.Join(t.TempDir(), "paydesk.db"), false },
		"pg-kv":     func(t *testing.T) (string, bool) { return pgtest.Fresh(t), false },
		"pg-native": func(t *testing.T) (string, bool) { return freshNative(t), true },
	}
	for name, where := range wheres {
		t.Run(name, func(t *testing.T) {
			path, rel := where(t)
			ctx := context.Background()
			open := func(forward ...string) (*DB, error) {
				return Open(path, Options{NoSync: true, Now: func() time.Time { return t0 }, ForwardTo: forward, kvEngine: !rel})
			}
			g := &gw{clock: t0}
			// deliveries stores a push through a process given forward and
			// returns the endpoints its deliveries go to.
			deliveries := func(forward ...string) []string {
				t.Helper()
				db, err := open(forward...)
				if err != nil {
					t.Fatal(err)
				}
				defer db.Close()
				r := applyEncoded(t, db, txPush(g.key(), "INV-1", api.ServiceDeferred, api.TypeDeferredPay, dec("10"), g.status(api.StatusSuccess, ""), nil))
				all, err := db.Deliveries(ctx, DeliveryQuery{})
				if err != nil {
					t.Fatal(err)
				}
				var eps []string
				for i := len(all) - 1; i >= 0; i-- {
					if all[i].PushID == r.ID {
						eps = append(eps, all[i].Endpoint)
					}
				}
				return eps
			}
			if got := deliveries(); len(got) != 0 {
				t.Fatalf("a store without endpoints recorded deliveries to %v", got)
			}
			if got := deliveries(a, b, a); strings.Join(got, " ") != a+" "+b {
				t.Fatalf("the first process given endpoints: deliveries to %v, want %s and %s", got, a, b)
			}
			if got := deliveries(); strings.Join(got, " ") != a+" "+b {
				t.Fatalf("a process given none: deliveries to %v, want the store's %s and %s", got, a, b)
			}
			if got := deliveries(b, a); strings.Join(got, " ") != a+" "+b {
				t.Fatalf("a process given the same in another order: deliveries to %v", got)
			}

			_, err := open(other)
			var mismatch *ForwardToMismatch
			if !errors.As(err, &mismatch) || !errors.Is(err, ErrForwardToDiffers) {
				t.Fatalf("a process given other endpoints: %v, want a ForwardToMismatch", err)
			}
			msg := err.Error()
			for _, want := range []string{other, a, shownB, "paydesk forward-to set", "paydesk forward-to clear"} {
				if !strings.Contains(msg, want) {
					t.Errorf("the refusal does not name %q: %s", want, msg)
				}
			}
			if strings.Contains(msg, "s3cret-pw") {
				t.Errorf("the refusal shows a password: %s", msg)
			}

			db, err := open()
			if err != nil {
				t.Fatal(err)
			}
			if err := db.SetForwardTo(ctx, []string{other}, "ann", "command line"); err != nil {
				t.Fatal(err)
			}
			if err := db.SetForwardTo(ctx, []string{"ftp://x"}, "ann", "command line"); err == nil {
				t.Error("an endpoint that is no http(s) URL was taken")
			}
			audit, err := db.Audit(ctx, 10)
			if err != nil {
				t.Fatal(err)
			}
			var seen []string
			for _, e := range audit {
				if e.Action == AuditForwardTo {
					seen = append(seen, e.Operator+": "+e.Result+" ("+e.Reason+")")
				}
			}
			if len(seen) != 2 || !strings.HasPrefix(seen[0], "ann: "+other) || !strings.Contains(seen[0], shownB) ||
				!strings.HasPrefix(seen[1], "paydesk: ") || strings.Contains(strings.Join(seen, " "), "s3cret-pw") {
				t.Errorf("audit entries of the endpoints, newest first: %q", seen)
			}
			db.Close()
			if got := deliveries(); strings.Join(got, " ") != other {
				t.Fatalf("after forward-to set: deliveries to %v, want %s", got, other)
			}
			if _, err := open(a, b); !errors.Is(err, ErrForwardToDiffers) {
				t.Fatalf("the old endpoints after a change: %v, want refused", err)
			}

			db, err = open()
			if err != nil {
				t.Fatal(err)
			}
			if err := db.SetForwardTo(ctx, nil, "ann", "command line"); err != nil {
				t.Fatal(err)
			}
			if eps, err := db.ForwardTo(ctx); err != nil || len(eps) != 0 {
				t.Fatalf("after clear: %v, %v", eps, err)
			}
			db.Close()
			if got := deliveries(); len(got) != 0 {
				t.Fatalf("after forward-to clear: deliveries to %v", got)
			}
		})
	}
}
