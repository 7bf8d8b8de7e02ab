package store

import (
	"bytes"
	"context"
	"testing"

	"paydesk/api"
)

// FuzzApplyPush feeds push bodies from outside through the decoder and the
// store: no panic, no error for a body that decodes, the same body a second
// time is a duplicate, and the stored record decodes back to what was kept.
func FuzzApplyPush(f *testing.F) {
	g := &gw{clock: t0}
	seeds := []*api.Push{
		dataPush(g.key(), "F-1", api.ActionReserve, g.status(api.StatusSuccess, ""), api.ResponseParameter{Name: api.PReservationNumber, Value: "R1"}),
		dataPush(g.key(), "F-1", api.ActionCancelReservation, g.status(api.StatusSuccess, api.SubCodeProcessed)),
		txPush(g.key(), "F-1", api.ServiceDeferred, api.TypeDeferredPay, dec("19.99"), g.status(api.StatusSuccess, api.SubCodeProcessed), nil,
			api.ResponseParameter{Name: api.PInvoiceNumber, Value: "INV-1"}),
		txPush(g.key(), "F-1", api.ServiceDeferred, api.TypeDeferredRefund, dec("5"), g.status(api.StatusSuccess, ""),
			[]api.RelatedTransaction{{RelationType: api.RelationRefund, RelatedTransactionKey: "00000000000000000000000000000003"}}),
		txPush(g.key(), "GC", "voucherb", api.TypeGiftCardPay, dec("10"), g.status(api.StatusSuccess, api.SubCodePartialPayment),
			[]api.RelatedTransaction{{RelationType: api.RelationPartialPayment, RelatedTransactionKey: "G1"}}),
	}
	for _, p := range seeds {
		b, err := p.Encode()
		if err != nil {
			f.Fatal(err)
		}
		f.Add(b)
	}
	f.Add([]byte(`{"transaction":{"key":"k","status":{"code":{"code":"190"},"dateTime":"2026-03-02 10:00:00"},"amountDebit":"1e3"}}`))
	f.Add([]byte(`{"DataRequest":{"Key":"\u001b]52;c;eA==\u0007","ActionCode":"Reserve","Status":{"Code":{"Code":791}}}}`))
	db := openTest(f)
	f.Fuzz(func(t *testing.T, body []byte) {
		p, err := api.DecodePush(body)
		if err != nil {
			return
		}
		ctx := context.Background()
		first, err := db.ApplyPush(ctx, PushRecord{Body: body}, p)
		if err != nil {
			t.Fatalf("ApplyPush: %v", err)
		}
		again, err := db.ApplyPush(ctx, PushRecord{Body: body}, p)
		if err != nil {
			t.Fatalf("ApplyPush again: %v", err)
		}
		if !again.Duplicate || again.ID != first.ID {
			t.Fatalf("the same push twice: first %+v, again %+v", first, again)
		}
		rec, err := db.Push(ctx, first.ID)
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(rec.Body, body) || rec.Key != p.Key() {
			t.Fatalf("stored push differs: key %q", rec.Key)
		}
	})
}
