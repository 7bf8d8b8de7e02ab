package kvlayout

import (
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/shopspring/decimal"

	"paydesk/store/domain"
)

// TestPushRecordRoundTrip encodes a push record the way ApplyPush does (the
// tail first, the head put in front of it later) and decodes it, with heads
// that fit the room kept for them and one that does not.
func TestPushRecordRoundTrip(t *testing.T) {
	base := domain.PushRecord{ReceivedAt: time.Unix(1_790_000_000, 5).UTC(), RemoteAddr: "127.0.0.1:5000", Method: "POST",
		URL: "/push", Header: map[string][]string{"Authorization": {"hmac WK:sig:nonce:1"}, "Content-Type": {"application/json"}},
		Body: []byte(`{"Transaction":{"Key":"K"}}`), Envelope: "Transaction", Key: "K", Invoice: "INV-1", Service: "customgiftcard",
		Kind: "giftcard-pay", Status: domain.Status{Code: 190, SubCode: "S001", Time: time.Unix(1_790_000_000, 0).UTC()},
		Currency: "EUR", Amount: dec("12.34"), HasAmount: true, WebsiteKey: "WK", Signature: domain.SignatureValid, Hash: [32]byte{1, 2, 3}}
	tests := []struct {
		name           string
		id             uint64
		ignored, owner string
	}{
		{"small head", 1, "", ""},
		{"usual head", 1 << 40, domain.Confirms, "0123456789ABCDEF0123456789ABCDEF"},
		{"head larger than its room", 7, strings.Repeat("ignored ", 20), strings.Repeat("R", 90)},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			rec := base
			tail := EncodePushTail(&rec)
			rec.ID, rec.Applied, rec.Ignored, rec.ReservationKey = tt.id, true, tt.ignored, tt.owner
			got, err := DecodePush(EncodePushHead(&rec, tail))
			if err != nil {
				t.Fatal(err)
			}
			// Times come back in the local zone: compare the instants.
			if !got.ReceivedAt.Equal(rec.ReceivedAt) || !got.Status.Time.Equal(rec.Status.Time) {
				t.Fatalf("times changed: %v, %v", got.ReceivedAt, got.Status.Time)
			}
			got.ReceivedAt, got.Status.Time = rec.ReceivedAt, rec.Status.Time
			if !reflect.DeepEqual(*got, rec) {
				t.Fatalf("round trip changed the record\ngot  %+v\nwant %+v", *got, rec)
			}
		})
	}
}

// FuzzDecodeRecords: a damaged cache file must give an error, never a
// panic or a runaway allocation.
func FuzzDecodeRecords(f *testing.F) {
	f.Add(EncodeSummary(domain.Summary{Key: "K", Invoice: "I", Amount: dec("19.99"), State: domain.StateReserved, Created: t0}))
	f.Add(EncodePush(&domain.PushRecord{ID: 7, Key: "K", Body: []byte(`{}`), Header: map[string][]string{"A": {"b"}}, Amount: dec("-5")}))
	f.Add(EncodeTx(&domain.Transaction{Key: "T", Kind: domain.KindCapture, Amount: dec("12.50"), Created: t0}))
	f.Add(EncodeApplyResult(domain.ApplyResult{Applied: true, ReservationKey: "K", Settled: []uint64{3, 4}}))
	f.Fuzz(func(t *testing.T, b []byte) {
		_, _ = DecodeSummary(b)
		_, _ = DecodePush(b)
		_, _ = DecodeTx(b)
		_, _ = DecodeApplyResult(1, b)
	})
}

var t0 = time.Date(2026, 3, 2, 10, 0, 0, 0, time.UTC)

func dec(s string) decimal.Decimal { return decimal.RequireFromString(s) }
