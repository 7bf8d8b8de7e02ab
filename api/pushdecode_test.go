package api

import (
	"bytes"
	"encoding/json"
	"reflect"
	"strings"
	"testing"
)

// reflectDecodePush is what the hand-written decoder must equal:
// json.Unmarshal into a Push.
func reflectDecodePush(body []byte) (*Push, error) {
	var p Push
	if err := json.Unmarshal(body, &p); err != nil {
		return nil, err
	}
	return &p, nil
}

// sameAsReflection fails t unless decodePushBody and json.Unmarshal agree:
// both refuse body, or both decode it to equal values.
func sameAsReflection(t *testing.T, body []byte) {
	t.Helper()
	got, gotErr := decodePushBody(body)
	want, wantErr := reflectDecodePush(body)
	switch {
	case gotErr != nil && wantErr != nil:
	case gotErr != nil:
		t.Fatalf("decoder refused what encoding/json accepts: %v\nbody: %q", gotErr, body)
	case wantErr != nil:
		t.Fatalf("decoder accepted what encoding/json refuses (%v)\nbody: %q\ngot: %+v", wantErr, body, got)
	case !reflect.DeepEqual(got, want):
		t.Fatalf("decoders differ\nbody: %q\nhand:       %s\nreflection: %s", body, dump(got), dump(want))
	}
}

func dump(p *Push) string {
	b, _ := json.Marshal(p)
	return string(b)
}

func TestDecodePushMatchesReflection(t *testing.T) {
	tests := []struct {
		name, body string
	}{
		{"empty", ``},
		{"null", `null`},
		{"white space only", " \t\r\n"},
		{"not an object", `[1,2]`},
		{"string", `"x"`},
		{"trailing data", `{"Transaction":{"Key":"K"}} x`},
		{"trailing brace", `{"Transaction":{"Key":"K"}}}`},
		{"second object", `{"Transaction":{"Key":"K"}}{}`},
		{"exotic white space", "\v{\"Transaction\":{\"Key\":\"K\"}}"},
		{"keys in any case", `{"transaction":{"KEY":"k","invoice":"i","sTaTuS":{"code":{"code":190}}}}`},
		{"kelvin sign folds to k", "{\"Transaction\":{\"\u212aey\":\"K\"}}"},
		{"long s folds to s", "{\"Tran\u017faction\":{\"Key\":\"K\"}}"},
		{"escaped key", `{"Tr\u0061nsaction":{"Key":"K"}}`},
		{"escapes in values", `{"Transaction":{"Key":"a\"b\\c\/d\u00e9\ud83d\ude00\n"}}`},
		{"lone surrogate", `{"Transaction":{"Key":"\ud800x"}}`},
		{"invalid UTF-8", "{\"Transaction\":{\"Key\":\"a\xffb\"}}"},
		{"valid UTF-8", `{"Transaction":{"Key":"Müller"}}`},
		{"control character in string", "{\"Transaction\":{\"Key\":\"a\tb\"}}"},
		{"bad escape", `{"Transaction":{"Key":"\x"}}`},
		{"short unicode escape", `{"Transaction":{"Key":"\u12"}}`},
		{"unknown fields of every kind", `{"X":[1,{"a":[true,false,null]},"s",-0.5e+3],"Transaction":{"Key":"K","Y":{"z":{}}}}`},
		{"null fields", `{"Transaction":{"Key":"K","Invoice":null,"Status":null,"Order":null,"AmountDebit":null,"Services":null,"IsTest":null,"MutationType":null}}`},
		{"empty arrays stay non-nil", `{"Transaction":{"Key":"K","Services":[],"RelatedTransactions":[]}}`},
		{"duplicate envelope merges", `{"Transaction":{"Key":"K"},"Transaction":{"Invoice":"I"}}`},
		{"duplicate envelope null", `{"Transaction":{"Key":"K"},"Transaction":null}`},
		{"duplicate array merges elements", `{"Transaction":{"Key":"K","Services":[{"Name":"a","Action":"x"},{"Name":"b"}],"Services":[{"Name":"c"}],"Services":[{},{}]}}`},
		{"string where a number goes", `{"Transaction":{"Key":"K","MutationType":"1"}}`},
		{"fraction where an int goes", `{"Transaction":{"Key":"K","MutationType":1.0}}`},
		{"exponent where an int goes", `{"Transaction":{"Key":"K","MutationType":1e2}}`},
		{"int overflow", `{"Transaction":{"Key":"K","MutationType":99999999999999999999}}`},
		{"negative zero int", `{"Transaction":{"Key":"K","MutationType":-0}}`},
		{"number where a string goes", `{"Transaction":{"Key":1}}`},
		{"bool where a string goes", `{"Transaction":{"Key":true}}`},
		{"object where a string goes", `{"Transaction":{"Key":{}}}`},
		{"array where an object goes", `{"Transaction":[]}`},
		{"string where a bool goes", `{"Transaction":{"Key":"K","IsTest":"true"}}`},
		{"amount forms", `{"Transaction":{"Key":"K","AmountDebit":12.5,"AmountCredit":"3.10"}}`},
		{"amount not a number", `{"Transaction":{"Key":"K","AmountDebit":"abc"}}`},
		{"amount object", `{"Transaction":{"Key":"K","AmountDebit":{}}}`},
		{"huge amount", `{"Transaction":{"Key":"K","AmountDebit":1e400}}`},
		{"flex values", `{"Transaction":{"Key":"K","CustomParameters":{"List":[{"Name":"a","Value":1.50},{"Name":"b","Value":true},{"Name":"c","Value":null},{"Name":"d","Value":"x\ty"},{"Name":"e","Value":"é"}]}}}`},
		{"flex value object", `{"Transaction":{"Key":"K","AdditionalParameters":{"AdditionalParameter":[{"Name":"a","Value":{}}]}}}`},
		{"date time forms", `{"DataRequest":{"Key":"K","Status":{"DateTime":"2026-11-21T10:15:00"}}}`},
		{"date time with offset", `{"DataRequest":{"Key":"K","Status":{"DateTime":"2026-11-21T10:15:00+01:00"}}}`},
		{"date time empty and null", `{"DataRequest":{"Key":"K","Status":{"DateTime":"2026-11-21T10:15:00","DateTime":""}}}`},
		{"date time null", `{"DataRequest":{"Key":"K","Status":{"DateTime":null}}}`},
		{"date time escaped", `{"DataRequest":{"Key":"K","Status":{"DateTime":"2026-11-21T10:15:00\u002B01:00"}}}`},
		{"date time number", `{"DataRequest":{"Key":"K","Status":{"DateTime":5}}}`},
		{"date time garbage", `{"DataRequest":{"Key":"K","Status":{"DateTime":"yesterday"}}}`},
		{"sub code and code", `{"DataRequest":{"Key":"K","Status":{"Code":{"Code":791,"Description":"Pending"},"SubCode":{"Code":"S","Description":"d"},"SubCode":null}}}`},
		{"service details", `{"DataRequest":{"Key":"K","Services":[{"Name":"n","Action":null,"Parameters":[{"Name":"p","Value":"v"}],"VersionAsProperty":2},null]}}`},
		{"related transactions", `{"Transaction":{"Key":"K","RelatedTransactions":[{"RelationType":"refund","RelatedTransactionKey":"R"}]}}`},
		{"missing colon", `{"Transaction" {"Key":"K"}}`},
		{"trailing comma", `{"Transaction":{"Key":"K",}}`},
		{"leading comma", `{,"Transaction":{"Key":"K"}}`},
		{"array trailing comma", `{"X":[1,],"Transaction":{"Key":"K"}}`},
		{"unterminated", `{"Transaction":{"Key":"K"`},
		{"bad literal", `{"Transaction":{"Key":"K","IsTest":tru}}`},
		{"leading zero", `{"X":01,"Transaction":{"Key":"K"}}`},
		{"bare minus", `{"X":-,"Transaction":{"Key":"K"}}`},
		{"dot without digits", `{"X":1.,"Transaction":{"Key":"K"}}`},
		{"exponent without digits", `{"X":1e,"Transaction":{"Key":"K"}}`},
		{"deep but allowed", `{"X":` + strings.Repeat("[", 9998) + strings.Repeat("]", 9998) + `,"Transaction":{"Key":"K"}}`},
		{"too deep", `{"X":` + strings.Repeat("[", 10000) + strings.Repeat("]", 10000) + `,"Transaction":{"Key":"K"}}`},
		{"type error then syntax error", `{"Transaction":{"Key":1,}}`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) { sameAsReflection(t, []byte(tt.body)) })
	}
}

func TestDecodePushMatchesReflectionOnWireFiles(t *testing.T) {
	for _, body := range wireBodies(t, "push") {
		sameAsReflection(t, body)
	}
}

func TestDecodePushErrorsNameTheField(t *testing.T) {
	for body, want := range map[string]string{
		`{"Transaction":{"Key":"K","MutationType":"1"}}`:                   "decode push: Transaction.MutationType: want a number, got a string",
		`{"Transaction":{"Key":"K","Status":{"Code":{"Code":1.5}}}}`:       "decode push: Transaction.Status.Code.Code: want a whole number, got 1.5",
		`{"Transaction":{"Key":"K","Services":[{"Name":"a"},{"Name":1}]}}`: "decode push: Transaction.Services[1].Name: want a string, got a number",
		`{"DataRequest":{"Key":"K","Status":{"DateTime":"x"}}}`:            "decode push: DataRequest.Status.DateTime: date time \"x\": not ISO 8601",
		`{"Transaction":{"Key":"K","AmountCredit":"x"}}`:                   "decode push: Transaction.AmountCredit: amount",
		`[]`:                           "decode push: body: want an object, got an array",
		`{"Transaction":{"Key":"K",}}`: "invalid character '}' looking for beginning of object key string (offset 26)",
		`{"Transaction":{"Key":"K"`:    "unexpected end of JSON input",
	} {
		_, err := DecodePush([]byte(body))
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("DecodePush(%s) = %v, want an error containing %q", body, err, want)
		}
	}
}

// FuzzDecodePushMatchesReflection holds the hand-written decoder to
// encoding/json on any input.
func FuzzDecodePushMatchesReflection(f *testing.F) {
	for _, body := range wireBodies(f, "push") {
		f.Add(body)
	}
	f.Add([]byte(`{"Transaction":{"Key":"K","Services":[{"Name":"a"}],"Services":[{},{}]}}`))
	f.Add([]byte("{\"tr\u212ansaction\":{\"key\":\"\\u00e9\",\"AmountDebit\":\"1\"}}"))
	f.Fuzz(func(t *testing.T, body []byte) { sameAsReflection(t, body) })
}

func TestIsCompact(t *testing.T) {
	bodies := append(wireBodies(t, "push"), wireBodies(t, "response")...)
	for _, b := range bodies {
		c, err := Compact(b)
		if err != nil {
			t.Fatal(err)
		}
		bodies = append(bodies, c)
	}
	bodies = append(bodies, []byte(`{"a":"x y\"z \\"}`), []byte(`{"a":"\\\\", "b":1}`), []byte(`{}`), []byte(" {}"))
	compact := 0
	for _, b := range bodies {
		c, _ := Compact(b)
		want := bytes.Equal(c, b)
		if got := IsCompact(b); got != want {
			t.Errorf("IsCompact(%q) = %v, want %v", b, got, want)
		}
		if want {
			compact++
		}
	}
	if compact == 0 || compact == len(bodies) {
		t.Fatalf("%d of %d bodies compact: the table tests only one side", compact, len(bodies))
	}
}
