package pushlistener

import (
	"context"
	"encoding/json"
	"errors"
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

func isOrdersPath(requestURI string) bool {
	p := requestURI
	if i := strings.IndexByte(p, '?'); i >= 0 {
		p = p[:i]
	}
	return strings.HasSuffix(strings.TrimSuffix(p, "/"), OrdersPath)
}

// ordersHostPath is what an order's signature covers: the intake's URL,
// which sits beside the push URL (…/push → …/orders), or, with no push URL
// configured, the address the request arrived on.
func (s *Server) ordersHostPath(host, requestURI string) string {
	if s.cfg.PushURL == "" {
		return host + requestURI
	}
	u, err := url.Parse(s.cfg.PushURL)
	if err != nil {
		return host + requestURI
	}
	u.Path = path.Join(path.Dir(strings.TrimSuffix(u.Path, "/")), OrdersPath)
	u.RawQuery = ""
	return api.HostPath(u.String())
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

// handleOrder takes a webshop's order: the Reserve envelope exactly as the
// shop sent it to the gateway, signed with the same credentials over the
// intake URL. 200 once it is on disk (again for the same order); 401 for a
// bad signature (logged as rejected, nothing stored); 400 for an envelope
// that is not a valid Reserve; 409 when the invoice is known with other
// lines (both kept).
func (s *Server) handleOrder(ctx context.Context, r *pushRequest) (int, string) {
	rec := store.PushRecord{ReceivedAt: s.cfg.Now(), RemoteAddr: r.remoteAddr, Method: r.method,
		URL: r.requestURI, Header: r.header, Body: r.body}
	if r.bodyErr != nil {
		return s.reject(ctx, rec, http.StatusBadRequest, store.SignatureUnchecked, "order intake: reading the body: "+r.bodyErr.Error())
	}
	if r.tooLarge {
		return s.reject(ctx, rec, http.StatusRequestEntityTooLarge, store.SignatureUnchecked, "order intake: body larger than 1 MiB")
	}
	auth, verr := s.cfg.Verifier.Verify(r.header.Get("Authorization"), r.method, s.ordersHostPath(r.host, r.requestURI), r.body)
	rec.WebsiteKey = auth.WebsiteKey
	if verr != nil {
		return s.reject(ctx, rec, http.StatusUnauthorized, store.SignatureVerdict(verr), "order intake: signature: "+verr.Error())
	}
	ev := OrderEvent{Outcome: intake.ResultRefused}
	o, err := intake.OrderFromEnvelope(r.body)
	if err != nil {
		ev.Reason = err.Error()
		return s.orderAnswer(ev, http.StatusBadRequest)
	}
	o.Source = "intake " + r.remoteAddr
	ev.Invoice, ev.Lines, ev.Amount, ev.Currency, ev.Customer = o.Invoice, len(o.Articles), o.Amount(), o.Currency, o.Customer()
	res, err := s.cfg.DB.PutOrder(o)
	ev.ReservationKey = res.ReservationKey
	switch {
	case errors.Is(err, store.ErrOrderConflict):
		ev.Outcome, ev.Reason = intake.ResultConflict, res.Reason+"; both are kept for an operator to compare"
		return s.orderAnswer(ev, http.StatusConflict)
	case err != nil:
		s.cfg.Logf("order %s: %v", o.Invoice, err)
		ev.Reason = "order not stored, try again"
		return s.orderAnswer(ev, http.StatusInternalServerError)
	}
	ev.Outcome = string(res.Outcome)
	return s.orderAnswer(ev, http.StatusOK)
}

// orderAnswer tells the observer and returns the JSON answer.
func (s *Server) orderAnswer(ev OrderEvent, status int) (int, string) {
	if s.cfg.Observe != nil {
		s.cfg.Observe(Event{Record: store.PushRecord{ReceivedAt: s.cfg.Now(), Invoice: ev.Invoice, Currency: ev.Currency,
			Amount: ev.Amount, HasAmount: ev.Lines > 0, Signature: store.SignatureValid}, Order: &ev, HTTPStatus: status})
	}
	b, _ := json.Marshal(orderAnswer{Invoice: ev.Invoice, Result: ev.Outcome, Reservation: ev.ReservationKey, Reason: ev.Reason})
	return status, string(b)
}
