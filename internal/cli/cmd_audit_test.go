package cli

import (
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"encoding/json"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	bolt "go.etcd.io/bbolt"
)

// TestAuditVerifyNamesAForgedEntry (issue 24): two entries appended to the
// cache file behind paydesk's back, chained exactly as paydesk chains them
// (a 490 for a capture that went through, a refund that never happened),
// are named by `audit --verify`, which exits 1; the old code said "intact".
func TestAuditVerifyNamesAForgedEntry(t *testing.T) {
	dir := t.TempDir()
	if code, out, errs := runCLI(t, dir, "", "test-reservation", "--approve", "--json"); code != 0 {
		t.Fatalf("test-reservation: %d\n%s%s", code, out, errs)
	}
	b, err := bolt.Open(filepath.Join(dir, "paydesk", "paydesk.db"), 0o600, nil)
	if err != nil {
		t.Fatal(err)
	}
	var forged []uint64
	err = b.Update(func(tx *bolt.Tx) error {
		a := tx.Bucket([]byte("audit"))
		for _, e := range []map[string]any{
			{"Operator": "alice@desk1", "Action": "capture", "Target": "RES-1", "Result": "490 Failed", "Completes": 1},
			{"Operator": "alice@desk1", "Action": "refund", "Target": "RES-1", "Amount": "999.00", "Currency": "EUR", "Result": "190 Success"},
		} {
			_, last := a.Cursor().Last()
			h := sha256.Sum256(last)
			id, _ := a.NextSequence()
			e["ID"], e["Time"], e["Prev"] = id, "2026-11-25T10:00:00Z", hex.EncodeToString(h[:])
			v, _ := json.Marshal(e)
			if err := a.Put(binary.BigEndian.AppendUint64(nil, id), v); err != nil {
				return err
			}
			forged = append(forged, id)
		}
		return nil
	})
	_ = b.Close()
	if err != nil {
		t.Fatal(err)
	}
	code, out, errs := runCLI(t, dir, "", "audit", "--verify")
	if code != 1 || !strings.Contains(out, "NOT intact") {
		t.Fatalf("verify: exit %d\n%s%s", code, out, errs)
	}
	for _, id := range forged {
		if !strings.Contains(out, "entry "+strconv.FormatUint(id, 10)+" is forged") {
			t.Errorf("entry %d is not named:\n%s", id, out)
		}
	}
	t.Log(out)
}
