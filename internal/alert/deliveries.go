package alert

import (
	"context"
	"fmt"
	"time"

	"paydesk/store"
)

// DeliverySource is what Deliveries reads (*store.DB has it).
type DeliverySource interface {
	RecentDeliveries(ctx context.Context, limit int) ([]*store.Delivery, error)
}

// deliveryLook is how many of the newest deliveries Deliveries judges the
// endpoints by: enough for a day of a busy shop's pushes, read in one go.
const deliveryLook = 2000

// DefaultDeliveryFailing is how long a shop endpoint may fail before it
// is an alert when the config names no time: the outbox's first retries
// (10 s, 30 s, 1 m, 5 m) have passed and failed by then.
const DefaultDeliveryFailing = 15 * time.Minute

// Deliveries is one alert per shop endpoint that has been failing
// (store.FailingEndpoints) for after or longer — one per endpoint, not
// one per push: its ID is the endpoint's, so the alert is sent once while
// the endpoint fails, and resolved once it answers 200 again (or its
// failed deliveries leave the newest deliveryLook). None when after is 0.
func Deliveries(ctx context.Context, src DeliverySource, now time.Time, after time.Duration) ([]Alert, error) {
	if after <= 0 {
		return nil, nil
	}
	ds, err := src.RecentDeliveries(ctx, deliveryLook)
	if err != nil {
		return nil, fmt.Errorf("alerts: deliveries: %w", err)
	}
	var out []Alert
	for _, e := range store.FailingEndpoints(ds) {
		if now.Sub(e.Since) < after {
			continue
		}
		ep := store.EndpointShown(e.Endpoint)
		last := fmt.Sprintf("HTTP %d", e.Last.Status)
		if e.Last.Error != "" {
			last = "no answer: " + e.Last.Error
		}
		text := fmt.Sprintf("the shop endpoint %s has failed to take pushes for %s (last: %s; %d given up, %d retrying): mend it, then resend (paydesk deliveries resend --failed, or the console's Deliveries page)",
			ep, minutes(now.Sub(e.Since)), last, e.GivenUp, e.Failing)
		out = append(out, Alert{ID: "delivery-failing/" + ep, Kind: "delivery-failing", Subject: ep, Since: e.Since, Text: text})
	}
	return out, nil
}
