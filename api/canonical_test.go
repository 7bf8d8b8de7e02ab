package api

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"
	"unicode/utf16"
	"unicode/utf8"
)

// canonicalCorpus are merchant strings that stress the re-serialisation
// rule: line and paragraph separators, emoji and other non-BMP characters,
// HTML-sensitive characters, slashes, every control character, quotes,
// backslashes and the text of an escape.
func canonicalCorpus() []string {
	var ctl strings.Builder
	for c := rune(0); c < 0x20; c++ {
		ctl.WriteRune(c)
	}
	return []string{
		"plain",
		"a\u2028b",
		"a\u2029b",
		"\u2028\u2029\u2028",
		"emoji 😀 👩🏽‍💻 🇳🇱",
		"<script>&amp;</script>",
		"http://shop.example/a/b?c=d&e=f",
		ctl.String(),
		"\x7f delete and \u0085 NEL and \u00a0 nbsp",
		`quote " backslash \ slash /`,
		`text \u2028 that looks like an escape`,
		`\\u2029 two backslashes`,
		"café Straße ĳ",
		"\ufeff BOM and \ufffd replacement",
		"",
	}
}

// canonicalSamples are a response and both push envelopes carrying every
// corpus string in the places a merchant's text reaches.
func canonicalSamples(t *testing.T) map[string][]byte {
	t.Helper()
	out := map[string][]byte{}
	for i, s := range canonicalCorpus() {
		nv := &NameValueList{List: []NameValue{{Name: "note", Value: FlexString(s)}}}
		resp := &Response{Key: "K", Invoice: s, ServiceCode: "deferredkp", Order: Ptr(s), CustomParameters: nv,
			AdditionalParameters: nv, AmountDebit: MustAmount("12.5"), Status: Status{Code: Code{Code: 190, Description: s},
				DateTime: NewDateTime(time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC), false)},
			RequestErrors: &RequestErrors{ParameterErrors: []ErrorItem{{Name: s, Error: s, ErrorMessage: s}}}}
		tp := &Push{Transaction: &TransactionPush{Key: "K", Invoice: s, Order: Ptr(s), CustomParameters: nv,
			AdditionalParameters: nv, AmountDebit: MustAmount("10"), TransactionType: TypeGiftCardPay,
			Services: []ResponseService{{Name: "x", Parameters: []ResponseParameter{{Name: s, Value: FlexString(s)}}}},
			Status:   Status{Code: Code{Code: 190}, DateTime: NewDateTime(time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC), true)}}}
		dp := &Push{DataRequest: &DataRequestPush{Key: "K", Invoice: s, ActionCode: ActionReserve, CustomerName: Ptr(s),
			AmountDebit: MustAmount("0")}}
		for name, v := range map[string]any{"response": resp, "transaction-push": tp, "datarequest-push": dp} {
			b, err := MarshalCanonical(v)
			if err != nil {
				t.Fatal(err)
			}
			out[fmt.Sprintf("%02d-%s", i, name)] = b
		}
	}
	return out
}

// The family's re-serialisation rule, checked in Go: JSON.parse then
// JSON.stringify gives back the canonical bytes. jsRestringify follows
// ECMA-262's JSON.stringify (QuoteJSONString, Number::toString) over the
// token stream, so member order is kept as JSON.parse keeps it.
func TestCanonicalMatchesJSONStringify(t *testing.T) {
	for name, b := range canonicalSamples(t) {
		got, err := jsRestringify(b)
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		if !bytes.Equal(got, b) {
			t.Errorf("%s: re-serialised differs\n got %q\nwant %q", name, got, b)
		}
		if bytes.Contains(b, []byte(`\u2028`)) && !bytes.Contains(b, []byte(`\\u2028`)) {
			t.Errorf("%s: U+2028 escaped: %s", name, b)
		}
	}
	// The escape walker leaves a literal backslash before "u2028" alone.
	b, _ := MarshalCanonical(`\u2028`)
	if string(b) != `"\\u2028"` {
		t.Errorf("escaped backslash: got %s", b)
	}
}

// The same rule checked by the family's own runtime: node runs
// JSON.stringify(JSON.parse(body)) over every sample. Skipped without node.
func TestCanonicalMatchesNode(t *testing.T) {
	node, err := exec.LookPath("node")
	if err != nil {
		t.Skip("node not installed")
	}
	dir := t.TempDir()
	samples := canonicalSamples(t)
	for name, b := range samples {
		if err := os.WriteFile(filepath.Join(dir, name+".json"), b, 0o600); err != nil {
			t.Fatal(err)
		}
	}
	script := `
const fs = require('fs'), path = require('path');
const dir = process.argv[process.argv.length - 1]; let bad = 0, n = 0;
for (const f of fs.readdirSync(dir).filter(f => f.endsWith('.json')).sort()) {
  const raw = fs.readFileSync(path.join(dir, f));
  const again = Buffer.from(JSON.stringify(JSON.parse(raw.toString('utf8'))), 'utf8');
  n++;
  if (!raw.equals(again)) { bad++; console.log('DIFF ' + f + ' ' + again.toString('utf8')); }
}
console.log('checked ' + n + ' bad ' + bad);
`
	cmd := exec.Command(node, "-e", script, dir)
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("node: %v\n%s", err, out)
	}
	want := fmt.Sprintf("checked %d bad 0", len(samples))
	if !strings.Contains(string(out), want) {
		t.Fatalf("node re-serialisation differs:\n%s", out)
	}
}

// jsRestringify is JSON.stringify(JSON.parse(b)) for the subset of values
// the envelopes hold.
func jsRestringify(b []byte) ([]byte, error) {
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.UseNumber()
	var out bytes.Buffer
	type frame struct {
		obj   bool
		n     int
		isKey bool
	}
	var stack []frame
	sep := func() {
		if len(stack) == 0 {
			return
		}
		f := &stack[len(stack)-1]
		if f.obj {
			if f.isKey {
				if f.n > 0 {
					out.WriteByte(',')
				}
			} else {
				out.WriteByte(':')
			}
			if !f.isKey {
				f.n++
			}
			f.isKey = !f.isKey
			return
		}
		if f.n > 0 {
			out.WriteByte(',')
		}
		f.n++
	}
	for {
		tok, err := dec.Token()
		if err == io.EOF {
			break
		}
		if err != nil {
			return nil, err
		}
		switch v := tok.(type) {
		case json.Delim:
			switch v {
			case '{', '[':
				sep()
				out.WriteByte(byte(v))
				stack = append(stack, frame{obj: v == '{', isKey: true})
			default:
				out.WriteByte(byte(v))
				stack = stack[:len(stack)-1]
			}
		case string:
			sep()
			out.WriteString(jsQuote(v))
		case json.Number:
			sep()
			f, err := v.Float64()
			if err != nil {
				return nil, err
			}
			out.WriteString(jsNumber(f))
		case bool:
			sep()
			out.WriteString(strconv.FormatBool(v))
		case nil:
			sep()
			out.WriteString("null")
		}
	}
	return out.Bytes(), nil
}

// jsQuote is ECMA-262 QuoteJSONString: the short escapes, \u00xx in lower
// case for the other controls, \uXXXX for lone surrogates, all else raw.
func jsQuote(s string) string {
	var b strings.Builder
	b.WriteByte('"')
	for _, r := range s {
		switch r {
		case '\b':
			b.WriteString(`\b`)
		case '\t':
			b.WriteString(`\t`)
		case '\n':
			b.WriteString(`\n`)
		case '\f':
			b.WriteString(`\f`)
		case '\r':
			b.WriteString(`\r`)
		case '"':
			b.WriteString(`\"`)
		case '\\':
			b.WriteString(`\\`)
		default:
			switch {
			case r < 0x20:
				fmt.Fprintf(&b, `\u%04x`, r)
			case utf16.IsSurrogate(r):
				fmt.Fprintf(&b, `\u%04x`, r)
			default:
				b.WriteRune(r)
			}
		}
	}
	b.WriteByte('"')
	return b.String()
}

// jsNumber is Number::toString for finite values: plain decimal notation
// from 1e-7 up to 1e21, the shortest digits that round-trip.
func jsNumber(f float64) string {
	if f == 0 {
		return "0"
	}
	if a := math.Abs(f); a >= 1e-7 && a < 1e21 {
		return strconv.FormatFloat(f, 'f', -1, 64)
	}
	s := strconv.FormatFloat(f, 'e', -1, 64)
	return strings.Replace(s, "e+0", "e+", 1)
}

// Any merchant string, once canonical, survives the family's
// re-serialisation byte for byte and decodes back to itself.
func FuzzCanonicalString(f *testing.F) {
	for _, s := range canonicalCorpus() {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		b, err := MarshalCanonical(struct{ Invoice string }{s})
		if err != nil {
			t.Fatal(err)
		}
		again, err := jsRestringify(b)
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(again, b) {
			t.Fatalf("re-serialised differs\n got %q\nwant %q", again, b)
		}
		var back struct{ Invoice string }
		if err := json.Unmarshal(b, &back); err != nil {
			t.Fatal(err)
		}
		if utf8.ValidString(s) && back.Invoice != s {
			t.Fatalf("decoded %q, want %q", back.Invoice, s)
		}
	})
}
