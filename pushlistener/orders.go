package pushlistener

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"path"
	"strings"

	"github.com/shopspring/decimal"

	"paydesk/api"
	"paydesk/internal/intake"
	"paydesk/store"
)

// OrdersPath is where a webshop posts the Reserve envelope it sent the
// gateway, so paydesk learns the order's lines and customer. A path that
// ends in it (behind a proxy: /paydesk/orders) is the intake too.
const OrdersPath = "/orders"

// OrderEvent is an order as the intake handled it.
type OrderEvent struct {
	Invoice        string
	Lines          int
	Amount         decimal.Decimal
	Currency       string
	Customer       string
	Outcome        string // imported, already known, conflict, refused
	ReservationKey string
	Reason         string
}

// orderAnswer is the intake's JSON answer: what the shop's log should say.
type orderAnswer struct {
	Invoice     string `json:"invoice,omitempty"`
	Result      string `json:"result"`
	Reservation string `json:"reservation,omitempty"`
	Reason      string `json:"reason,omitempty"`
}

func isOrdersPath(path string) bool {
	return strings.HasSuffix(strings.TrimSuffix(path, "/"), OrdersPath)
}

// ordersHostPath is what an order's signature covers: the intake's URL,
// which sits beside the push URL (…/push → …/orders), or, with no push URL
// configured, the address the request arrived on (its connection's local
// host:port and the request's path; never the Host header).
func (s *Server) ordersHostPath(r *http.Request) string {
	if s.cfg.PushURL != "" {
		if u := OrdersURL(s.cfg.PushURL); u != "" {
			return api.HostPath(u)
		}
	}
	return localHost(r) + r.URL.RequestURI()
}

// OrdersURL is the intake URL that belongs to a push URL.
func OrdersURL(pushURL string) string {
	u, err := url.Parse(pushURL)
	if err != nil || u.Host == "" {
		return ""
	}
	u.Path = path.Join(path.Dir(strings.TrimSuffix(u.Path, "/")), OrdersPath)
	u.RawQuery = ""
	return u.String()
}

// serveOrder takes a webshop's order: the Reserve envelope exactly as the
// shop sent it to the gateway, signed with the same credentials over the
// intake URL. It passes Admit like a push (signature before anything is
// read into the store; bounded evidence of a refusal). 200 once it is on
// disk (again for the same order); 401 for a bad signature; 400 for an
// envelope that is not a valid Reserve; 409 when the invoice is known with
// other lines (both kept). The answer is a small JSON object.
func (s *Server) serveOrder(w http.ResponseWriter, r *http.Request) {
	if !posted(w, r, "orders") {
		return
	}
	in, ok := s.Admit(w, r, s.ordersHostPath(r))
	if !ok {
		return
	}
	ev := OrderEvent{Outcome: intake.ResultRefused}
	o, err := intake.OrderFromEnvelope(in.Record.Body)
	if err == nil && len(o.Invoice) > MaxPushKey {
		// The cache keeps orders by invoice: one it cannot hold is
		// refused (400), not failed (500, which invites a retry).
		err = fmt.Errorf("the invoice is %d bytes, at most %d", len(o.Invoice), MaxPushKey)
	}
	if err != nil {
		ev.Reason = err.Error()
		s.orderAnswer(w, ev, http.StatusBadRequest)
		return
	}
	o.Source = "intake " + r.RemoteAddr
	ev.Invoice, ev.Lines, ev.Amount, ev.Currency, ev.Customer = o.Invoice, len(o.Articles), o.Amount(), o.Currency, o.Customer()
	// Like a push, an order received whole is stored even when the shop
	// hangs up before the answer: not with the request's context, which
	// ends then (the shop's retry finds it stored).
	res, err := s.cfg.DB.PutOrder(context.WithoutCancel(r.Context()), o)
	ev.ReservationKey = res.ReservationKey
	switch {
	case errors.Is(err, store.ErrOrderConflict):
		ev.Outcome, ev.Reason = intake.ResultConflict, res.Reason+"; both are kept for an operator to compare"
		s.orderAnswer(w, ev, http.StatusConflict)
		return
	case err != nil:
		s.cfg.Logf("order %s: %v", o.Invoice, err)
		ev.Reason = notStored("order", err)
		s.orderAnswer(w, ev, http.StatusInternalServerError)
		return
	}
	ev.Outcome = string(res.Outcome)
	s.orderAnswer(w, ev, http.StatusOK)
}

// orderAnswer writes the JSON answer, then tells the observer.
func (s *Server) orderAnswer(w http.ResponseWriter, ev OrderEvent, status int) {
	b, _ := json.Marshal(orderAnswer{Invoice: ev.Invoice, Result: ev.Outcome, Reservation: ev.ReservationKey, Reason: ev.Reason})
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_, _ = w.Write(append(b, '\n'))
	if s.cfg.Observe != nil {
		s.observe(Event{Record: store.PushRecord{ReceivedAt: s.cfg.Now(), Invoice: ev.Invoice, Currency: ev.Currency,
			Amount: ev.Amount, HasAmount: ev.Lines > 0, Signature: store.SignatureValid}, Order: &ev, HTTPStatus: status})
	}
}
