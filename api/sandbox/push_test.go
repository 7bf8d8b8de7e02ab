package sandbox

import (
	"context"
	"errors"
	"path/filepath"
	"testing"
	"time"

	"paydesk/api"
)

// waitFor waits for cond; the deadline only ends a stuck test.
func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(stuck)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(2 * time.Millisecond)
	}
}

// A push that is not acknowledged is retried with backoff until it is.
func TestPushRetriedUntilAcknowledged(t *testing.T) {
	e := newEnv(t, nil)
	e.rc.mu.Lock()
	e.rc.failNext = 3
	e.rc.mu.Unlock()
	resp, err := e.giftPay("voucherb", testCard("500"), "5")
	if err != nil {
		t.Fatal(err)
	}
	p := e.rc.nextFor(resp.Key)
	if got := e.rc.attemptCount(); got != 4 {
		t.Fatalf("%d attempts, want 3 failures and 1 success", got)
	}
	wantTxPush(t, p, resp.Key, api.TypeGiftCardPay, api.MutationGiftCard, api.StatusSuccess, api.SubCodeProcessed)
	waitFor(t, "an empty outbox", func() bool { return e.sb.PendingPushes() == 0 })
}

// A push survives a restart of the sandbox: the receiver is down, the
// sandbox stops with the push in its outbox, starts again from the state
// file, and delivers it once the receiver is back.
func TestPushSurvivesRestart(t *testing.T) {
	path := filepath.Join(t.TempDir(), "sandbox.db")
	e := newEnv(t, func(c *Config) { c.StatePath = path; c.RetryBase = time.Millisecond })
	e.rc.setDown(true)
	_, number := func() (string, string) {
		e.rc.setDown(false)
		defer e.rc.setDown(true)
		return e.reserved("INV-RS")
	}()
	resp, err := e.giftPay("voucherb", cardB50, "20")
	if err != nil {
		t.Fatal(err)
	}
	waitFor(t, "a few failed attempts", func() bool { return e.rc.attemptCount() >= 3 })
	if n := e.sb.PendingPushes(); n != 1 {
		t.Fatalf("%d pending pushes before the restart", n)
	}
	e.stop()

	e.rc.setDown(false)
	e.start(e.cfg)
	p := e.rc.nextFor(resp.Key)
	wantTxPush(t, p, resp.Key, api.TypeGiftCardPay, api.MutationGiftCard, api.StatusSuccess, api.SubCodeProcessed)
	waitFor(t, "an empty outbox", func() bool { return e.sb.PendingPushes() == 0 })
	// The rest of the state came back too: the card's balance and the
	// reservation, which can be captured today.
	if got := e.balance(cardB50); got != "30.00" {
		t.Fatalf("balance after restart %s", got)
	}
	capResp, err := e.capture(number, "30.45")
	if err != nil {
		t.Fatalf("capture after restart: %v", err)
	}
	e.rc.nextFor(capResp.Key)
	// No key is handed out twice across the restart.
	e.sb.mu.Lock()
	n := len(e.sb.txs)
	e.sb.mu.Unlock()
	if n != 3 {
		t.Fatalf("%d transactions after restart, want 3 (reserve, gift card, capture)", n)
	}
}

// After maxTries failures a push waits for Resend; Resend sends it again
// and it is acknowledged. Resend also repeats delivered pushes on demand.
func TestResend(t *testing.T) {
	e := newEnv(t, func(c *Config) { c.RetryBase = 100 * time.Microsecond })
	e.rc.setDown(true)
	resp, err := e.giftPay("voucherb", testCard("500"), "5")
	if err != nil {
		t.Fatal(err)
	}
	waitFor(t, "the push to give up", func() bool {
		e.sb.mu.Lock()
		defer e.sb.mu.Unlock()
		return len(e.sb.dead) == 1
	})
	if got := e.rc.attemptCount(); got != maxTries {
		t.Fatalf("%d attempts, want %d", got, maxTries)
	}
	e.rc.setDown(false)
	e.rc.none(20 * time.Millisecond)
	if err := e.sb.Resend(resp.Key); err != nil {
		t.Fatal(err)
	}
	first := e.rc.nextFor(resp.Key)
	waitFor(t, "an empty outbox", func() bool { return e.sb.PendingPushes() == 0 })
	if err := e.sb.Resend(resp.Key); err != nil {
		t.Fatal(err)
	}
	again := e.rc.nextFor(resp.Key)
	if string(first.body) != string(again.body) {
		t.Fatalf("a resent push differs:\n%s\n%s", first.body, again.body)
	}
	if err := e.sb.Resend("0123456789ABCDEF0123456789ABCDEF"); !errors.Is(err, ErrUnknownKey) {
		t.Fatalf("Resend of an unknown key: %v", err)
	}
}

// A request's PushURL overrides the configured one; without any push URL
// pushes wait in the outbox until SetPushURL names one.
func TestPushURLOverrideAndLateTarget(t *testing.T) {
	e := newEnv(t, func(c *Config) { c.PushURL = "" })
	other := newReceiver(t)
	resp, err := e.client.Send(context.Background(), api.GiftCardPay{ServiceCode: "voucherb", Currency: "EUR", Invoice: "INV-O",
		Amount: dec("1"), Card: testCard("100"), PushURL: other.url()})
	if err != nil {
		t.Fatal(err)
	}
	other.nextFor(resp.Key)
	parked, err := e.giftPay("voucherb", testCard("100"), "1")
	if err != nil {
		t.Fatal(err)
	}
	e.rc.none(30 * time.Millisecond)
	// The first push counts as pending until its sender has read the 200
	// the other receiver answered, a moment after that receiver has it.
	waitFor(t, "the parked push alone pending", func() bool { return e.sb.PendingPushes() == 1 })
	e.sb.SetPushURL(e.rc.url())
	e.rc.nextFor(parked.Key)
}

// Pushes of one key go in order: a resend of a key with a push still
// failing queues behind it.
func TestPushesOfAKeyInOrder(t *testing.T) {
	e := newEnv(t, nil)
	resp, err := e.client.Send(context.Background(), reserveOp("INV-O", "Jansen"))
	if err != nil {
		t.Fatal(err)
	}
	e.rc.setDown(true)
	if err := e.sb.Approve(context.Background(), resp.Key); err != nil {
		t.Fatal(err)
	}
	waitFor(t, "a failed attempt", func() bool { return e.rc.attemptCount() >= 1 })
	e.sb.mu.Lock()
	e.sb.txs[resp.Key].Pushes = append(e.sb.txs[resp.Key].Pushes, []byte(`{"DataRequest":{"Key":"`+resp.Key+`","ActionCode":"Second"}}`))
	e.sb.enqueue(e.sb.txs[resp.Key], e.sb.txs[resp.Key].Pushes[1])
	e.sb.mu.Unlock()
	e.rc.setDown(false)
	if p := e.rc.next(); p.push.DataRequest.ActionCode != api.ActionReserve {
		t.Fatalf("first push %s", p.body)
	}
	if p := e.rc.next(); p.push.DataRequest.ActionCode != "Second" {
		t.Fatalf("second push %s", p.body)
	}
}

// The same seed gives the same keys, reservation and invoice numbers.
func TestSameSeedSameKeys(t *testing.T) {
	run := func(seed uint64) []string {
		e := newEnv(t, func(c *Config) { c.Seed = seed })
		reserveKey, number := e.reserved("INV-S")
		capResp, err := e.capture(number, "30.45")
		if err != nil {
			t.Fatal(err)
		}
		gift, err := e.giftPay("voucherb", testCard("100"), "5")
		if err != nil {
			t.Fatal(err)
		}
		e.stop()
		return []string{reserveKey, number, capResp.Key, capResp.Param(api.PInvoiceNumber), *capResp.PaymentKey, gift.Key, gift.Related("")}
	}
	a, b, c := run(42), run(42), run(43)
	for i := range a {
		if a[i] != b[i] {
			t.Fatalf("seed 42 gave %v then %v", a, b)
		}
		if a[i] != "" && a[i] == c[i] {
			t.Fatalf("seeds 42 and 43 share %s", a[i])
		}
	}
	wantKey(t, a[0])
	if !reservationForm.MatchString(a[1]) {
		t.Fatalf("reservation number %q", a[1])
	}
}
