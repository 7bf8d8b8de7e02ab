package store

import (
	"reflect"
	"testing"

	"paydesk/store/kvlayout"
)

// A capture's parcels round-trip in the transaction's binary form, and a
// record written before parcels existed (ending after the echo fields)
// still decodes, with none.
func TestTxCodecParcels(t *testing.T) {
	tx := &Transaction{Key: "K", Kind: KindCapture, Amount: dec("59.95"), Order: "O-1",
		Parcels: []Parcel{{ID: "P-1", Tracking: "3SABC123"}, {ID: "P-2"}, {Tracking: "JJD000"}}}
	got, err := kvlayout.DecodeTx(kvlayout.EncodeTx(tx))
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(got.Parcels, tx.Parcels) || got.Order != "O-1" {
		t.Fatalf("round trip: %+v", got)
	}
	before := kvlayout.EncodeTx(&Transaction{Key: "OLD", Amount: dec("1"), Order: "O-2"})
	before = before[:len(before)-1] // the empty parcel count appended later
	got, err = kvlayout.DecodeTx(before)
	if err != nil || got.Key != "OLD" || got.Order != "O-2" || got.Parcels != nil {
		t.Fatalf("a record from before the parcels: %+v %v", got, err)
	}
	for p, want := range map[Parcel]string{{ID: "P-1", Tracking: "T"}: "parcel P-1 tracking T", {ID: "P-1"}: "parcel P-1", {Tracking: "T"}: "tracking T"} {
		if p.String() != want {
			t.Errorf("%+v: %q, want %q", p, p.String(), want)
		}
	}
}
