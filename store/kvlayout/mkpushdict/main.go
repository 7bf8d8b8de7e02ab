// Command mkpushdict wrote store/kvlayout/pushdict1.txt, the preset
// dictionary that packs a stored push's headers and body (store/kvlayout/pushpack.go):
//
//	go run ./store/kvlayout/mkpushdict > store/kvlayout/pushdict1.txt
//
// It is run once per dictionary: records packed with a dictionary are read
// with the same bytes for good, so a new dictionary is a new file and a new
// packing byte, never a change to this one (TestPushDictionaryPinned).
//
// What it holds, the rarest first (of two equal pieces the packing takes
// the later one, so the common shapes come last): the fields of the form-encoded reply the gateway posts to a
// shop's return page, the headers as the push record lists them, then the
// push shapes of both services as the gateway sends them (compact JSON,
// api/testdata/wire): the data requests (cancel, reserve), then the
// transactions (refund, pay, gift card partial payment, gift card payment).
package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
)

func main() {
	var d bytes.Buffer
	d.WriteString("application/x-www-form-urlencoded")
	d.WriteString("brq_amount=39.98&brq_currency=EUR&brq_datarequest=&brq_invoicenumber=INV-1001&brq_ordernumber=" +
		"&brq_primary_service=deferredkp&brq_statuscode=190&brq_statuscode_detail=S001&brq_statusmessage=Success" +
		"&brq_SERVICE_deferredkp_ReservationNumber=&brq_test=true&brq_timestamp=&brq_websitekey=&brq_signature=")
	// The headers as the record lists them: a count, then each name and
	// its values, length-prefixed (pushpack.go).
	hdr := func(name, value string) {
		d.WriteByte(byte(len(name)))
		d.WriteString(name)
		d.WriteByte(1)
		d.WriteByte(byte(len(value)))
		d.WriteString(value)
	}
	d.WriteByte(4)
	hdr("User-Agent", "Go-http-client/1.1")
	hdr("Accept-Encoding", "gzip")
	hdr("Content-Length", "596")
	hdr("Content-Type", "application/json")
	d.WriteString("\x0dAuthorization\x01ehmac ")
	for _, name := range []string{"cancel", "reserve", "refund", "pay", "giftcard-partial", "giftcard-pay"} {
		raw, err := os.ReadFile("api/testdata/wire/" + name + "-push.json")
		if err != nil {
			fmt.Fprintln(os.Stderr, "mkpushdict: run it from the repository's root:", err)
			os.Exit(1)
		}
		if err := json.Compact(&d, raw); err != nil {
			fmt.Fprintln(os.Stderr, "mkpushdict:", name, err)
			os.Exit(1)
		}
	}
	os.Stdout.Write(d.Bytes())
}
