package store

import (
	"paydesk/internal/pgtest"
	"paydesk/store/kvlayout"

	"bytes"
	"encoding/json"
	"errors"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	bolt "go.etcd.io/bbolt"

	"paydesk/api"
)

func deliveryCases() map[string]*Delivery {
	at := t0.Add(3 * time.Second)
	many := make([]Attempt, MaxAttemptsKept)
	for i := range many {
		many[i] = Attempt{At: at.Add(time.Duration(i) * time.Minute), Status: 500, Latency: time.Duration(i) * time.Millisecond, Excerpt: "boom"}
	}
	return map[string]*Delivery{
		"pending, no attempt": {ID: 1, PushID: 7, Key: "K1", Endpoint: "http://shop.test/push", Created: t0, State: DeliveryPending, NextAt: t0},
		"delivered": {ID: 2, PushID: 8, Key: "K2", Endpoint: "https://shop.test/a", Created: t0, State: DeliveryDelivered, DeliveredAt: at,
			Attempts: []Attempt{{At: at, Status: 200, Latency: 1500 * time.Microsecond}}, Tries: 1},
		"failed, resent, text of every kind": {ID: 1 << 40, PushID: 1 << 33, Key: "ключ\u202e", Endpoint: "http://[::1]:8/x?y=z", Created: t0,
			State: DeliveryFailed, Resent: 3, Tries: 11,
			Attempts: []Attempt{{At: at, Error: "dial tcp: connection refused"}, {At: at, Status: 503, Excerpt: "\uFFFD<html>…"}}},
		"attempts kept to the bound": {ID: 9, PushID: 9, Key: "K9", Endpoint: "http://shop.test/", Created: t0, State: DeliveryPending,
			NextAt: at.Add(time.Hour), Attempts: many, Tries: MaxAttemptsKept},
		"zero": {},
	}
}

// A delivery reads back as it was written, times in UTC as the JSON form
// read them; and records an earlier paydesk wrote as JSON still read.
func TestDeliveryCodec(t *testing.T) {
	for name, d := range deliveryCases() {
		t.Run(name, func(t *testing.T) {
			b := kvlayout.EncodeDelivery(d)
			if b[0] == '{' {
				t.Fatal("stored as JSON")
			}
			got, err := kvlayout.DecodeDelivery(d.ID, b)
			if err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(got, d) {
				t.Fatalf("read back\n%+v\nwant\n%+v", got, d)
			}
			old, err := json.Marshal(d)
			if err != nil {
				t.Fatal(err)
			}
			fromJSON, err := kvlayout.DecodeDelivery(d.ID, old)
			if err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(fromJSON, d) {
				t.Fatalf("JSON record read back\n%+v\nwant\n%+v", fromJSON, d)
			}
		})
	}
}

// A damaged record is an error naming the delivery, never a panic.
func TestDeliveryCodecDamaged(t *testing.T) {
	good := kvlayout.EncodeDelivery(deliveryCases()["delivered"])
	for name, b := range map[string][]byte{
		"empty":               nil,
		"other format":        append([]byte{9}, good[1:]...),
		"cut short":           good[:len(good)-3],
		"trailing bytes":      append(append([]byte(nil), good...), 0),
		"attempts count huge": append(kvlayout.EncodeDelivery(&Delivery{})[:len(kvlayout.EncodeDelivery(&Delivery{}))-1], 0xff, 0xff, 0xff, 0xff, 0x0f),
		"bad JSON":            []byte(`{"id":`),
	} {
		t.Run(name, func(t *testing.T) {
			_, err := kvlayout.DecodeDelivery(42, b)
			if err == nil || !strings.Contains(err.Error(), "delivery 42") {
				t.Fatalf("err = %v, want one naming delivery 42", err)
			}
			if name != "bad JSON" && !errors.Is(err, kvlayout.ErrCorrupt) {
				t.Fatalf("err = %v, want kvlayout.ErrCorrupt", err)
			}
		})
	}
}

// What a forwarded push adds to its own commit is small: the delivery
// record of a pending delivery is its fields, not a JSON document three
// times their size.
func TestDeliveryStoredSmall(t *testing.T) {
	pgtest.OwnEngine(t)
	path := filepath.Join(t.TempDir(), "paydesk.db")
	ep := "http://shop.example.test/paydesk/push"
	db, err := Open(path, Options{NoSync: true, Now: func() time.Time { return t0 }, ForwardTo: []string{ep}})
	if err != nil {
		t.Fatal(err)
	}
	g := &gw{clock: t0}
	k := g.key()
	applyEncoded(t, db, txPush(k, "INV-1", api.ServiceDeferred, api.TypeDeferredPay, dec("10"), g.status(api.StatusSuccess, ""), nil))
	if err := db.Close(); err != nil {
		t.Fatal(err)
	}
	bdb, err := bolt.Open(path, 0o600, &bolt.Options{ReadOnly: true})
	if err != nil {
		t.Fatal(err)
	}
	defer bdb.Close()
	err = bdb.View(func(tx *bolt.Tx) error {
		b := tx.Bucket(bDelivery)
		if b == nil {
			return errors.New("no deliveries bucket")
		}
		v := b.Get(u64(1))
		if v == nil {
			return errors.New("no delivery 1")
		}
		// Fields: key and endpoint, two IDs, two times and the state.
		if limit := len(k) + len(ep) + 40; len(v) > limit || bytes.HasPrefix(v, []byte("{")) {
			t.Errorf("delivery stored in %d bytes (%q), want at most %d", len(v), v, limit)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}

// FuzzDecodeDelivery: a damaged delivery record (a file is outside
// input) is refused or read, never a panic or a runaway allocation, and
// what is read writes back the same.
func FuzzDecodeDelivery(f *testing.F) {
	for _, d := range deliveryCases() {
		f.Add(kvlayout.EncodeDelivery(d))
	}
	f.Add([]byte(`{"id":1,"attempts":[{"status":200}]}`))
	f.Fuzz(func(t *testing.T, b []byte) {
		d, err := kvlayout.DecodeDelivery(1, b)
		if err != nil || (len(b) > 0 && b[0] == '{') {
			return
		}
		again, err := kvlayout.DecodeDelivery(1, kvlayout.EncodeDelivery(d))
		if err != nil || !reflect.DeepEqual(again, d) {
			t.Fatalf("%+v written back reads %+v, %v", d, again, err)
		}
	})
}

// The worker reads a push's body alone: the same bytes the whole record
// gives, for records with and without headers, and an empty body as none.
func TestPushBody(t *testing.T) {
	for name, p := range map[string]*PushRecord{
		"headers and body": {ID: 7, Applied: true, Ignored: "dup", ReservationKey: "R", ReceivedAt: t0, RemoteAddr: "127.0.0.1:1", Method: "POST",
			URL: "/push", Header: map[string][]string{"Authorization": {"hmac x"}, "X-Two": {"a", "b"}}, Body: []byte(`{"Transaction":{}}`), Key: "K"},
		"no headers":    {ID: 8, Body: []byte("x")},
		"no body":       {ID: 9, Header: map[string][]string{"A": {"b"}}},
		"rejected push": {ID: 10, Rejected: true, Body: []byte("bad"), Count: 3, LastSeen: t0},
	} {
		t.Run(name, func(t *testing.T) {
			enc := kvlayout.EncodePush(p)
			whole, err := kvlayout.DecodePush(enc)
			if err != nil {
				t.Fatal(err)
			}
			got, err := kvlayout.PushBody(enc)
			if err != nil || !bytes.Equal(got, whole.Body) || (len(p.Body) == 0) != (got == nil) {
				t.Fatalf("pushBody = %q, %v; want %q", got, err, whole.Body)
			}
		})
	}
	if _, err := kvlayout.PushBody([]byte{1, 1}); !errors.Is(err, kvlayout.ErrCorrupt) {
		t.Fatalf("a record cut short: %v", err)
	}
}

// FuzzPushBody: never a panic; where the whole record reads, the body
// read alone is the same.
func FuzzPushBody(f *testing.F) {
	f.Add(kvlayout.EncodePush(&PushRecord{ID: 7, Key: "K", Body: []byte(`{}`), Header: map[string][]string{"A": {"b"}}, Amount: dec("-5")}))
	f.Add([]byte{1, 1, 0, 0, 0, 0, 0, 0, 0, 200})
	f.Fuzz(func(t *testing.T, b []byte) {
		body, err := kvlayout.PushBody(b)
		if p, perr := kvlayout.DecodePush(b); perr == nil && (err != nil || !bytes.Equal(body, p.Body)) {
			t.Fatalf("pushBody = %q, %v; the whole record's body %q", body, err, p.Body)
		}
	})
}
