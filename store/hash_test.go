package store

import (
	"crypto/sha256"
	"fmt"
	"os"
	"path/filepath"
	"testing"

	"paydesk/api"
)

// TestPushHashIsStable pins the content hash to the form caches were written
// with (fmt over the summary, then the compacted body): a push stored by an
// older paydesk and delivered again must still be found as a duplicate.
func TestPushHashIsStable(t *testing.T) {
	files, _ := filepath.Glob(filepath.Join("..", "api", "testdata", "wire", "*-push.json"))
	if len(files) == 0 {
		t.Fatal("no captured pushes")
	}
	for _, name := range files {
		pretty, err := os.ReadFile(name)
		if err != nil {
			t.Fatal(err)
		}
		compact, err := api.Compact(pretty)
		if err != nil {
			t.Fatal(err)
		}
		p, err := api.DecodePush(pretty)
		if err != nil {
			t.Fatal(err)
		}
		st := p.Status()
		h := sha256.New()
		fmt.Fprintf(h, "%s\x00%s\x00%d\x00%s\x00%s\x00", p.Envelope(), p.Key(), st.Code.Code, st.SubCodeString(), st.DateTime.String())
		h.Write(compact)
		var want [32]byte
		h.Sum(want[:0])
		for _, body := range [][]byte{pretty, compact} {
			if got := pushHash(p, body); got != want {
				t.Errorf("%s: pushHash = %x, want %x", filepath.Base(name), got, want)
			}
		}
	}
}
