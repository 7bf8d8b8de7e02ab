package hub

import (
	"bytes"
	"encoding/json"
	"testing"
)

// FuzzDecodeRequest: a client's request never panics the owner, and what
// it accepts is a command line to run.
func FuzzDecodeRequest(f *testing.F) {
	f.Add([]byte(`{"args":["reservations","--json"],"env":{"USER":"alice"},"dir":"/home/alice","stdin":true,"interactive":true}`))
	f.Add([]byte(`{"args":[],"dir":"/"}`))
	f.Add([]byte(`{"args":["x\u0000"],"dir":"/"}`))
	f.Fuzz(func(t *testing.T, b []byte) {
		req, err := decodeRequest(bytes.NewReader(b))
		if err != nil {
			return
		}
		if len(req.Args) == 0 || req.Dir == "" || req.Dir[0] != '/' {
			t.Fatalf("accepted %+v", req)
		}
	})
}

// FuzzDecodeFrame: an owner's answer never panics the client.
func FuzzDecodeFrame(f *testing.F) {
	f.Add([]byte(`{"o":"aGVsbG8K"}` + "\n" + `{"exit":0}`))
	f.Add([]byte(`{"stdin":"abc"}`))
	f.Add([]byte(`{"e":"!!"}`))
	f.Fuzz(func(t *testing.T, b []byte) {
		dec := json.NewDecoder(bytes.NewReader(b))
		for i := 0; i < 100; i++ {
			if _, err := decodeFrame(dec); err != nil {
				return
			}
		}
	})
}
