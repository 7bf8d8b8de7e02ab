package alert

import (
	"bytes"
	"context"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"time"

	"paydesk/internal/private"
	"paydesk/internal/query"
	"paydesk/internal/reconcile"
	"paydesk/store"
)

// Alert is one thing that needs someone now.
type Alert struct {
	ID      string    `json:"id"`   // stable while the thing lasts: kind and subject
	Kind    string    `json:"kind"` // outcome-unknown, window-closing, not-reconciled
	Subject string    `json:"subject"`
	Text    string    `json:"text"`
	Since   time.Time `json:"since"`
}

// Event is what is sent: an alert opening or resolved.
type Event struct {
	State string `json:"state"` // "open" or "resolved"
	Alert
	At time.Time `json:"at"`
}

// Source is what Current reads (*store.DB has it).
type Source interface {
	Ops(ctx context.Context, states ...store.OpState) ([]*store.PendingOp, error)
	// ReservationPage is the reservation list (store.DB.ReservationPage),
	// from which the closing windows are read.
	ReservationPage(ctx context.Context, q store.PageQuery) (store.Page, error)
	Audit(ctx context.Context, limit int) ([]store.AuditEntry, error)
}

// Current is what needs someone now: every operation whose outcome is
// unknown, every reservation with something left to ship whose 14-day
// window ends within a day, and what did not reconcile in the last week.
func Current(ctx context.Context, src Source, now time.Time) ([]Alert, error) {
	var out []Alert
	ops, err := src.Ops(ctx, store.OpOutcomeUnknown)
	if err != nil {
		return nil, fmt.Errorf("alerts: journal: %w", err)
	}
	for _, op := range ops {
		if op.State != store.OpOutcomeUnknown {
			continue
		}
		out = append(out, Alert{ID: fmt.Sprintf("outcome-unknown/%d", op.ID), Kind: "outcome-unknown", Subject: op.Target, Since: op.Updated,
			Text: fmt.Sprintf("%s %s %s %s: the outcome is unknown; ask the gateway (paydesk resolve %d --ask)", op.Action, op.Target,
				op.Amount.StringFixed(2), op.Currency, op.ID)})
	}
	sums, err := closingWindows(ctx, src, now)
	if err != nil {
		return nil, fmt.Errorf("alerts: reservations: %w", err)
	}
	for _, s := range sums {
		ref := s.ReservationNumber
		if ref == "" {
			ref = s.Key
		}
		out = append(out, Alert{ID: "window-closing/" + s.Key, Kind: "window-closing", Subject: ref, Since: s.Created.AddDate(0, 0, 13),
			Text: fmt.Sprintf("the 14-day window of %s (%s) ends in %d day(s); %s %s not shipped: capture or cancel", ref, s.Invoice,
				max(0, s.DaysLeft(now)), s.Remaining.StringFixed(2), s.Currency)})
	}
	entries, err := src.Audit(ctx, reconcile.ItemScan)
	if err != nil {
		return nil, fmt.Errorf("alerts: audit: %w", err)
	}
	for _, e := range reconcile.OpenItems(entries, now) {
		out = append(out, Alert{ID: "not-reconciled/" + e.Target, Kind: "not-reconciled", Subject: e.Target, Since: e.Time,
			Text: e.Result + ": " + e.Reason})
	}
	sort.Slice(out, func(i, j int) bool { return out[i].ID < out[j].ID })
	return out, nil
}

// closingWindows are the reservations with something left to ship
// (reserved or partly captured) whose 14-day window ends within a day
// (DaysLeft ≤ 1): those created before the local midnight that began the
// day ShipmentWindow−2 days ago. They are read a state at a time from the
// list, which finds them by its state and creation indexes, instead of
// every reservation being read each minute (a million take about 1.6 s
// on a file).
func closingWindows(ctx context.Context, src Source, now time.Time) ([]store.Summary, error) {
	y, m, d := now.Date()
	before := time.Date(y, m, d-(store.ShipmentWindow-2), 0, 0, 0, 0, now.Location())
	var out []store.Summary
	for _, st := range []store.State{store.StateReserved, store.StatePartlyCaptured} {
		q := store.PageQuery{State: st, Where: query.Query{Created: &query.TimeRange{To: before}}, Limit: 10_000}
		for {
			p, err := src.ReservationPage(ctx, q)
			if err != nil {
				return nil, err
			}
			for _, r := range p.Rows {
				if r.Summary.DaysLeft(now) <= 1 {
					out = append(out, r.Summary)
				}
			}
			if !p.More || len(p.Rows) == 0 {
				break
			}
			q.After = p.Rows[len(p.Rows)-1].Pos
		}
	}
	return out, nil
}

// Notifier sends events: to a webhook (a POST of the event as JSON,
// signed with HMAC-SHA256 of the body under Secret in
// X-Paydesk-Signature: sha256=HEX), to a command (the event as JSON on its
// stdin), or both.
type Notifier struct {
	Webhook string
	Secret  []byte
	Command []string
	HTTP    *http.Client
}

// Send delivers one event; an error names where it failed.
func (n Notifier) Send(ctx context.Context, ev Event) error {
	body, err := json.Marshal(ev)
	if err != nil {
		return fmt.Errorf("alert %s: %w", ev.ID, err)
	}
	var errs []error
	if n.Webhook != "" {
		errs = append(errs, n.post(ctx, body))
	}
	if len(n.Command) > 0 {
		cctx, cancel := context.WithTimeout(ctx, 30*time.Second)
		cmd := exec.CommandContext(cctx, n.Command[0], n.Command[1:]...)
		cmd.Stdin = bytes.NewReader(body)
		if out, err := cmd.CombinedOutput(); err != nil {
			errs = append(errs, fmt.Errorf("alert command %s: %w: %s", n.Command[0], err, strings.TrimSpace(string(out))))
		}
		cancel()
	}
	return errors.Join(errs...)
}

// Sign is the webhook's signature header value for body.
func Sign(secret, body []byte) string {
	m := hmac.New(sha256.New, secret)
	m.Write(body)
	return "sha256=" + hex.EncodeToString(m.Sum(nil))
}

func (n Notifier) post(ctx context.Context, body []byte) error {
	client := n.HTTP
	if client == nil {
		client = &http.Client{Timeout: 10 * time.Second}
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, n.Webhook, bytes.NewReader(body))
	if err != nil {
		return fmt.Errorf("alert webhook: %w", err)
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("X-Paydesk-Signature", Sign(n.Secret, body))
	resp, err := client.Do(req)
	if err != nil {
		return fmt.Errorf("alert webhook: %w", err)
	}
	defer resp.Body.Close()
	_, _ = io.Copy(io.Discard, io.LimitReader(resp.Body, 4<<10))
	if resp.StatusCode/100 != 2 {
		return fmt.Errorf("alert webhook: HTTP %d", resp.StatusCode)
	}
	return nil
}

// State is what was sent: the open alerts, kept in a file so that a
// restart does not send them again.
type State struct {
	path string
	Open map[string]Alert `json:"open"`
}

// LoadState reads the state file; a missing one is an empty state.
func LoadState(path string) (*State, error) {
	st := &State{path: path, Open: map[string]Alert{}}
	b, err := private.ReadRegular(path, 16<<20)
	if errors.Is(err, os.ErrNotExist) {
		return st, nil
	}
	if err != nil {
		return nil, fmt.Errorf("alert state: %w", err)
	}
	if err := json.Unmarshal(b, st); err != nil {
		return nil, fmt.Errorf("alert state %s: %w", path, err)
	}
	if st.Open == nil {
		st.Open = map[string]Alert{}
	}
	return st, nil
}

func (st *State) save() error {
	b, err := json.Marshal(st)
	if err != nil {
		return err
	}
	if err := os.MkdirAll(filepath.Dir(st.path), 0o700); err != nil {
		return fmt.Errorf("alert state: %w", err)
	}
	return writeAtomic(st.path, b)
}

// writeAtomic replaces path with b (0600): a temporary file beside it,
// synced, then renamed over it, so a crash leaves the old state or the new.
func writeAtomic(path string, b []byte) error {
	f, err := os.CreateTemp(filepath.Dir(path), ".alerts-*")
	if err != nil {
		return fmt.Errorf("alert state: %w", err)
	}
	defer os.Remove(f.Name()) // after the rename there is nothing to remove
	if _, err := f.Write(b); err != nil {
		f.Close()
		return fmt.Errorf("alert state: %w", err)
	}
	if err := f.Sync(); err != nil {
		f.Close()
		return fmt.Errorf("alert state: %w", err)
	}
	if err := f.Close(); err != nil {
		return fmt.Errorf("alert state: %w", err)
	}
	if err := os.Rename(f.Name(), path); err != nil {
		return fmt.Errorf("alert state: %w", err)
	}
	return nil
}

// Step sends what changed since the last step: an open event for every
// new alert, a resolved one for every alert gone. An alert whose event
// could not be sent is tried again at the next step; the state is saved
// after every event sent.
func (st *State) Step(ctx context.Context, now time.Time, current []Alert, send func(context.Context, Event) error) (sent int, err error) {
	cur := make(map[string]Alert, len(current))
	var errs []error
	for _, a := range current {
		cur[a.ID] = a
		if _, ok := st.Open[a.ID]; ok {
			continue
		}
		if err := send(ctx, Event{State: "open", Alert: a, At: now}); err != nil {
			errs = append(errs, err)
			continue
		}
		st.Open[a.ID] = a
		sent++
		if err := st.save(); err != nil {
			return sent, err
		}
	}
	ids := make([]string, 0, len(st.Open))
	for id := range st.Open {
		ids = append(ids, id)
	}
	sort.Strings(ids)
	for _, id := range ids {
		if _, ok := cur[id]; ok {
			continue
		}
		if err := send(ctx, Event{State: "resolved", Alert: st.Open[id], At: now}); err != nil {
			errs = append(errs, err)
			continue
		}
		delete(st.Open, id)
		sent++
		if err := st.save(); err != nil {
			return sent, err
		}
	}
	return sent, errors.Join(errs...)
}
