package demo

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/shopspring/decimal"

	"paydesk/api"
	"paydesk/internal/ops"
	"paydesk/internal/webshop"
	"paydesk/store"
)

// Config wires Fill.
type Config struct {
	// Ops sends the requests: the same operations layer the forms and the
	// command line use, so the demo journals, audits and settles like them.
	Ops *ops.Service
	// Now names the invoices of this run; nil means time.Now.
	Now func() time.Time
	// Progress, if set, hears about each finished order (one call at a
	// time; it must not block for long).
	Progress func(done, total int)
	// Workers is how many orders run at once; 0 means 4.
	Workers int
	// Shop makes the deferred-invoice orders the way a webshop does: the
	// Reserve to the gateway, the same envelope to paydesk's order intake.
	// Required: paydesk only operates on them afterwards.
	Shop *webshop.Shop
}

// Summary tells what Fill did.
type Summary struct {
	Orders   int
	Failed   []string // one line per order that went wrong
	Duration time.Duration
}

// Fill sends the demo orders: deferred-invoice reservations that end up
// reserved, awaiting the customer, declined, captured in full and in part,
// cancelled, closed and refunded; and gift card payments, one of them
// partial with its remainder paid, one refunded. It refuses a live gateway.
func Fill(ctx context.Context, cfg Config) (Summary, error) {
	start := time.Now()
	if cfg.Ops == nil {
		return Summary{}, errors.New("demo: no operations service")
	}
	if cfg.Ops.Mode().IsLive() {
		return Summary{}, fmt.Errorf("demo: %w", ops.ErrLiveRefused)
	}
	if cfg.Shop == nil || cfg.Shop.IntakeURL == "" {
		return Summary{}, errors.New("demo: no webshop to make the orders with (gateway client and intake URL)")
	}
	if cfg.Now == nil {
		cfg.Now = time.Now
	}
	if cfg.Workers <= 0 {
		cfg.Workers = 4
	}
	prefix := "D" + cfg.Now().Format("0102-1504")
	orders := plan()
	var (
		mu   sync.Mutex
		sum  = Summary{Orders: len(orders)}
		done int
		jobs = make(chan int)
		wg   sync.WaitGroup
	)
	for w := 0; w < cfg.Workers; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range jobs {
				o := orders[i]
				invoice := fmt.Sprintf("%s-%02d", prefix, i+1)
				err := o.run(ctx, actors{svc: cfg.Ops, shop: cfg.Shop}, invoice)
				mu.Lock()
				done++
				if err != nil {
					sum.Failed = append(sum.Failed, fmt.Sprintf("%s (%s): %v", invoice, o.what, err))
				}
				if cfg.Progress != nil {
					cfg.Progress(done, len(orders)) // one call at a time, in order
				}
				mu.Unlock()
			}
		}()
	}
	for i := range orders {
		select {
		case jobs <- i:
		case <-ctx.Done():
		}
		if ctx.Err() != nil {
			break
		}
	}
	close(jobs)
	wg.Wait()
	sum.Duration = time.Since(start)
	if err := ctx.Err(); err != nil {
		return sum, fmt.Errorf("demo: %w", err)
	}
	return sum, nil
}

// actors are the demo's two sides: the webshop that makes the orders and
// paydesk's operations that work on them.
type actors struct {
	svc  *ops.Service
	shop *webshop.Shop
}

// order is one demo order and what happens to it.
type order struct {
	what string
	run  func(ctx context.Context, a actors, invoice string) error
}

// wait bounds each wait for a push.
const wait = 5 * time.Second

// reserve plays the webshop: it sends the Reserve to the gateway and, unless
// the order never reaches paydesk (sendOrder false), posts the same envelope
// to the order intake. Then, unless the customer walks away, it presses the
// sandbox's approve (or decline) button and waits for the Reserve push.
func reserve(ctx context.Context, a actors, r api.Reserve, approve *bool, sendOrder bool) (*store.Reservation, error) {
	envelope, resp, err := a.shop.Reserve(ctx, r)
	if err != nil {
		return nil, err
	}
	if resp.Status.Code.Code != api.StatusPendingProcessing || resp.Key == "" {
		return nil, fmt.Errorf("reserve: %d %s", resp.Status.Code.Code, api.StatusText(resp.Status.Code.Code))
	}
	if sendOrder {
		if _, err := a.shop.PostOrder(ctx, envelope); err != nil {
			return nil, err
		}
	}
	if approve == nil {
		return nil, nil
	}
	if err := a.shop.Checkout(ctx, resp, *approve); err != nil {
		return nil, err
	}
	rv, ok, err := a.svc.Waiter().Reservation(ctx, resp.Key, wait)
	if err != nil {
		return nil, err
	}
	if !ok {
		return nil, fmt.Errorf("the Reserve push of %s did not arrive within %s", resp.Key, wait)
	}
	return rv, nil
}

func capture(ctx context.Context, s *ops.Service, r *store.Reservation, qty map[string]int) (string, error) {
	res, err := s.Capture(ctx, ops.CaptureRequest{Reservation: r.Key, Quantities: qty})
	if err != nil {
		return "", fmt.Errorf("capture: %w", err)
	}
	if !res.OK() {
		return "", fmt.Errorf("capture: %s %s", res.StatusText(), res.Message)
	}
	return res.Key, nil
}

func cancel(ctx context.Context, s *ops.Service, r *store.Reservation) error {
	res, err := s.Cancel(ctx, ops.CancelRequest{Reservation: r.Key})
	if err != nil {
		return fmt.Errorf("cancel: %w", err)
	}
	if !res.OK() {
		return fmt.Errorf("cancel: %s %s", res.StatusText(), res.Message)
	}
	return nil
}

func refund(ctx context.Context, s *ops.Service, key string, amount *decimal.Decimal, reason ops.Reason) error {
	res, err := s.Refund(ctx, ops.RefundRequest{Transaction: key, Amount: amount, Reason: reason})
	if err != nil {
		return fmt.Errorf("refund: %w", err)
	}
	if !res.OK() {
		return fmt.Errorf("refund: %s %s", res.StatusText(), res.Message)
	}
	return nil
}

func giftPay(ctx context.Context, s *ops.Service, g ops.GiftCardPayRequest) (ops.Result, error) {
	res, err := s.GiftCardPay(ctx, g)
	if err != nil {
		return res, fmt.Errorf("gift card payment: %w", err)
	}
	if !res.OK() {
		return res, fmt.Errorf("gift card payment: %s %s", res.StatusText(), res.Message)
	}
	return res, nil
}
