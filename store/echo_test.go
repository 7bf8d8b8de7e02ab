package store

import (
	"context"
	"reflect"
	"testing"

	"paydesk/api"
	"paydesk/store/kvlayout"
)

// The echoed fields round-trip, and a record written before they existed
// still decodes.
func TestTxCodecEchoFields(t *testing.T) {
	tx := &Transaction{Key: "K", Kind: KindGiftCardPay, Amount: dec("5"), Order: "ORDER_NO_1",
		Additional: []api.NameValue{{Name: "initiated_by", Value: "shop"}}, Custom: []api.NameValue{{Name: "cart", Value: "42"}}}
	got, err := kvlayout.DecodeTx(kvlayout.EncodeTx(tx))
	if err != nil {
		t.Fatal(err)
	}
	if got.Order != tx.Order || !reflect.DeepEqual(got.Additional, tx.Additional) || !reflect.DeepEqual(got.Custom, tx.Custom) {
		t.Fatalf("round trip: %+v", got)
	}
	old := kvlayout.EncodeTx(&Transaction{Key: "OLD", Amount: dec("1")})
	old = old[:len(old)-4] // the four empty fields appended later (echo fields, parcels)
	got, err = kvlayout.DecodeTx(old)
	if err != nil || got.Key != "OLD" || got.Order != "" || got.Additional != nil {
		t.Fatalf("old record: %+v %v", got, err)
	}
}

// A push's Order, AdditionalParameters and CustomParameters land on its
// transaction.
func TestApplyPushKeepsEchoedFields(t *testing.T) {
	db := openTest(t)
	g := &gw{clock: t0}
	p := &api.Push{Transaction: &api.TransactionPush{Key: g.key(), Invoice: "INV-E", ServiceCode: "voucherb",
		Status: g.status(api.StatusSuccess, api.SubCodeProcessed), IsTest: true, Currency: "EUR", AmountDebit: api.MustAmount("5"),
		TransactionType: api.TypeGiftCardPay, MutationType: api.MutationGiftCard, Order: api.Ptr("ORDER_NO_1"),
		AdditionalParameters: &api.NameValueList{List: []api.NameValue{{Name: "initiated_by", Value: "shop"}}},
		CustomParameters:     &api.NameValueList{AdditionalParameter: []api.NameValue{{Name: "cart", Value: "42"}}}}}
	body, err := p.Encode()
	if err != nil {
		t.Fatal(err)
	}
	if _, err := db.ApplyPush(context.Background(), PushRecord{Body: body, Signature: SignatureValid}, p); err != nil {
		t.Fatal(err)
	}
	tx, err := db.Transaction(t.Context(), p.Key())
	if err != nil {
		t.Fatal(err)
	}
	if tx.Order != "ORDER_NO_1" || len(tx.Additional) != 1 || tx.Additional[0].Value != "shop" || len(tx.Custom) != 1 || tx.Custom[0].Name != "cart" {
		t.Fatalf("transaction %+v", tx)
	}
}
