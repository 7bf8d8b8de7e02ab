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
	n, err := notifierOf(set)
	if err != nil {
		return err
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
		alertLoop(ctx, t.C, st, n.Send, func(ctx context.Context) (time.Time, []alert.Alert, error) {
			now := time.Now()
			if r.svc != nil {
				now = r.svc.Now()
			}
			cur, err := alert.Current(ctx, r.db, now)
			if err != nil {
				return now, nil, err
			}
			q, err := alert.Quiet(ctx, r.db, now, set.AlertQuiet, set.OpeningHours)
			if err != nil {
				return now, nil, err
			}
			if q != nil {
				cur = append(cur, *q)
			}
			ds, err := alert.Deliveries(ctx, r.db, now, set.AlertDeliveryFailing)
			return now, append(cur, ds...), err
		}, r.logf)
	}()
	r.closers = append(r.closers, func() { cancel(); t.Stop(); <-done })
	return nil
}

// notifierOf is where the config sends alerts.
func notifierOf(set settings) (alert.Notifier, error) {
	n := alert.Notifier{Webhook: set.AlertWebhook, Command: strings.Fields(set.AlertCommand)}
	if set.AlertSecretFile != "" {
		secret, err := private.ReadSecretFile(set.AlertSecretFile, "alert-secret-file")
		if err != nil {
			return alert.Notifier{}, fmt.Errorf("alerts: %w", err)
		}
		n.Secret = []byte(secret)
	}
	return n, nil
}

// alertLoop sends what current says needs someone (st.Step: once when it
// appears, once when it is gone) at once and at every tick, until ctx
// ends; a failure is logged and tried again at the next tick.
func alertLoop(ctx context.Context, tick <-chan time.Time, st *alert.State, send func(context.Context, alert.Event) error,
	current func(context.Context) (time.Time, []alert.Alert, error), logf func(string, ...any)) {
	for {
		now, cur, err := current(ctx)
		if err == nil {
			var sent int
			sent, err = st.Step(ctx, now, cur, send)
			if sent > 0 {
				logf("alerts: %d sent", sent)
			}
		}
		if err != nil && ctx.Err() == nil {
			logf("alerts: %s (tried again in a minute)", clean(err.Error()))
		}
		select {
		case <-ctx.Done():
			return
		case <-tick:
		}
	}
}

// listenAlerts sends the delivery alerts of a paydesk listen whose cache
// is its own file (listen.db): no console reads it, so the listener
// itself says when a shop endpoint keeps failing. A team's database is
// watched by the consoles and paydesk serve instead, which send every
// alert. Its state is listen-alerts.json beside the cache, apart from the
// console's alerts.json. It returns the stop; nil when there is nothing
// to send to.
func listenAlerts(set settings, db alert.DeliverySource, dbPath string, now func() time.Time, logf func(string, ...any)) (func(), error) {
	if set.AlertWebhook == "" && set.AlertCommand == "" || set.AlertDeliveryFailing <= 0 {
		return nil, nil
	}
	n, err := notifierOf(set)
	if err != nil {
		return nil, err
	}
	st, err := alert.LoadState(filepath.Join(filepath.Dir(dbPath), "listen-alerts.json"))
	if err != nil {
		return nil, err
	}
	ctx, cancel := context.WithCancel(context.Background())
	t := time.NewTicker(alertEvery)
	done := make(chan struct{})
	go func() {
		defer close(done)
		alertLoop(ctx, t.C, st, n.Send, func(ctx context.Context) (time.Time, []alert.Alert, error) {
			at := now()
			cur, err := alert.Deliveries(ctx, db, at, set.AlertDeliveryFailing)
			return at, cur, err
		}, logf)
	}()
	return func() { cancel(); t.Stop(); <-done }, nil
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
