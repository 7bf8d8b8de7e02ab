package alert

import (
	"context"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"paydesk/store"
)

type deliveriesSrc []*store.Delivery

func (d deliveriesSrc) RecentDeliveries(context.Context, int) ([]*store.Delivery, error) {
	return d, nil
}

// A shop endpoint failing for longer than the configured time is one
// alert, however many pushes wait for it; not before that time; none when
// the time is 0; its password never shows.
func TestDeliveriesOneAlertPerEndpoint(t *testing.T) {
	const down = "https://hook:s3cret@shop.test/push"
	failed := func(id uint64, min int) *store.Delivery {
		return &store.Delivery{ID: id, Endpoint: down, State: store.DeliveryPending,
			Attempts: []store.Attempt{{At: t0.Add(time.Duration(min) * time.Minute), Status: 502}}}
	}
	var many deliveriesSrc
	for i := range 50 {
		many = append(many, failed(uint64(i+1), i/10))
	}
	many = append(many, &store.Delivery{ID: 99, Endpoint: "https://ok.test/", State: store.DeliveryDelivered,
		Attempts: []store.Attempt{{At: t0, Status: 200}}})
	cases := []struct {
		name  string
		src   deliveriesSrc
		now   time.Time
		after time.Duration
		want  int
	}{
		{"fifty pushes waiting, one alert", many, t0.Add(20 * time.Minute), 15 * time.Minute, 1},
		{"not failing long enough", many, t0.Add(10 * time.Minute), 15 * time.Minute, 0},
		{"off", many, t0.Add(time.Hour), 0, 0},
		{"two failures are a retry", deliveriesSrc{failed(1, 0), failed(2, 1)}, t0.Add(time.Hour), time.Minute, 0},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			got, err := Deliveries(context.Background(), c.src, c.now, c.after)
			if err != nil || len(got) != c.want {
				t.Fatalf("got %+v, %v; want %d", got, err, c.want)
			}
			for _, a := range got {
				if a.ID != "delivery-failing/https://hook:xxxxx@shop.test/push" || strings.Contains(a.Text+a.Subject, "s3cret") ||
					!a.Since.Equal(t0) || !strings.Contains(a.Text, "paydesk deliveries resend --failed") {
					t.Fatalf("alert %+v", a)
				}
			}
		})
	}
	// Through Step: sent once while it lasts, resolved once when the
	// endpoint answers 200 again.
	st, err := LoadState(filepath.Join(t.TempDir(), "alerts.json"))
	if err != nil {
		t.Fatal(err)
	}
	var sent []string
	send := func(_ context.Context, ev Event) error { sent = append(sent, ev.State+" "+ev.Kind); return nil }
	for i := range 3 {
		now := t0.Add(time.Duration(20+i) * time.Minute)
		cur, _ := Deliveries(context.Background(), many, now, 15*time.Minute)
		if _, err := st.Step(context.Background(), now, cur, send); err != nil {
			t.Fatal(err)
		}
	}
	mended := append(deliveriesSrc{{ID: 100, Endpoint: down, State: store.DeliveryDelivered,
		Attempts: []store.Attempt{{At: t0.Add(30 * time.Minute), Status: 200}}}}, many...)
	cur, _ := Deliveries(context.Background(), mended, t0.Add(31*time.Minute), 15*time.Minute)
	if _, err := st.Step(context.Background(), t0.Add(31*time.Minute), cur, send); err != nil {
		t.Fatal(err)
	}
	if got := strings.Join(sent, ","); got != "open delivery-failing,resolved delivery-failing" {
		t.Fatalf("sent %s", got)
	}
}
