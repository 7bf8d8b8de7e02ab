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
