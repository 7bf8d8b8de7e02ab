package cli

import (
	"context"
	"fmt"
	"path/filepath"
	"strings"
	"time"

	"paydesk/internal/alert"
	"paydesk/internal/private"
)

// alertEvery is how often the console and paydesk serve look for what
// needs someone now.
const alertEvery = time.Minute

// startAlerts sends alerts (internal/alert) while the runtime runs, when
// the config names a webhook or a command: once when one appears, once when
// it is resolved; what was sent is kept in alerts.json beside the cache.
func (r *runtime) startAlerts(set settings) error {
	if set.AlertWebhook == "" && set.AlertCommand == "" {
		return nil
	}
	n := alert.Notifier{Webhook: set.AlertWebhook, Command: strings.Fields(set.AlertCommand)}
	if set.AlertSecretFile != "" {
		secret, err := private.ReadSecretFile(set.AlertSecretFile, "alert-secret-file")
		if err != nil {
			return fmt.Errorf("alerts: %w", err)
		}
		n.Secret = []byte(secret)
	}
	st, err := alert.LoadState(filepath.Join(set.DataDir(), "alerts.json"))
	if err != nil {
		return err
	}
	ctx, cancel := context.WithCancel(context.Background())
	t := time.NewTicker(alertEvery)
	done := make(chan struct{})
	go func() {
		defer close(done)
		for {
			now := time.Now()
			if r.svc != nil {
				now = r.svc.Now()
			}
			cur, err := alert.Current(r.db, now)
			if err == nil {
				var q *alert.Alert
				if q, err = alert.Quiet(r.db, now, set.AlertQuiet, set.OpeningHours); q != nil {
					cur = append(cur, *q)
				}
			}
			if err == nil {
				var ds []alert.Alert
				ds, err = alert.Deliveries(ctx, r.db, now, set.AlertDeliveryFailing)
				cur = append(cur, ds...)
			}
			if err == nil {
				var sent int
				sent, err = st.Step(ctx, now, cur, n.Send)
				if sent > 0 {
					r.logf("alerts: %d sent", sent)
				}
			}
			if err != nil && ctx.Err() == nil {
				r.logf("alerts: %s (tried again in a minute)", clean(err.Error()))
			}
			select {
			case <-ctx.Done():
				return
			case <-t.C:
			}
		}
	}()
	r.closers = append(r.closers, func() { cancel(); t.Stop(); <-done })
	return nil
}

// parseDeliveryFailing reads alert-delivery-failing: how long a shop
// endpoint may fail before it is an alert (a minute or more; "" is
// alert.DefaultDeliveryFailing; 0 or off: never).
func parseDeliveryFailing(v string) (time.Duration, error) {
	switch strings.TrimSpace(v) {
	case "":
		return alert.DefaultDeliveryFailing, nil
	case "0", "off":
		return 0, nil
	}
	d, err := time.ParseDuration(strings.TrimSpace(v))
	if err != nil || d < time.Minute {
		return 0, fmt.Errorf("alert-delivery-failing = %q: a duration of a minute or more (15m, 1h), or 0 for no such alert", v)
	}
	return d, nil
}

// defaultOpeningHours are the hours alert-quiet watches when the config
// names none.
const defaultOpeningHours = "08:00-20:00"

// parseQuiet reads alert-quiet (a duration of a minute or more; "" or 0
// for no such alert) and opening-hours.
func parseQuiet(quiet, hours string) (time.Duration, alert.Hours, error) {
	if strings.TrimSpace(hours) == "" {
		hours = defaultOpeningHours
	}
	h, err := alert.ParseHours(hours)
	if err != nil {
		return 0, alert.Hours{}, err
	}
	switch strings.TrimSpace(quiet) {
	case "", "0", "off":
		return 0, alert.Hours{}, nil // checked, and of no use without the alert
	}
	d, err := time.ParseDuration(strings.TrimSpace(quiet))
	if err != nil || d < time.Minute {
		return 0, alert.Hours{}, fmt.Errorf("alert-quiet = %q: a duration of a minute or more (30m, 2h), or 0 for no such alert", quiet)
	}
	return d, h, nil
}
