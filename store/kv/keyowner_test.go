package kv

import (
	"path/filepath"
	"testing"

	bolt "go.etcd.io/bbolt"

	"paydesk/store/domain"
	"paydesk/store/kvlayout"
)

// TestOwnKeyWithoutEntry: a reservation's own key (its Reserve request's)
// gets no key owner entry since layout 12, and OwnerOf still names the
// reservation; a data request's key gets one; an entry an older file has
// for the own key stays and says the same; an entry another reservation
// left under the key goes when the reservation is written again.
func TestOwnKeyWithoutEntry(t *testing.T) {
	for _, tc := range []struct {
		name  string
		entry string // the key owner entry under K before the put, "" none
		want  string // the entry under K after it
	}{
		{"new reservation", "", ""},
		{"an older file's entry", "K", "K"},
		{"taken over by another reservation", "OTHER", ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			db, err := OpenBolt(filepath.Join(t.TempDir(), "f.db"), Options{File: FileOptions{NoSync: true}}, nil)
			if err != nil {
				t.Fatal(err)
			}
			defer db.Close()
			if tc.entry != "" {
				if err := db.eng.Update(func(tx Tx) error {
					return tx.Bucket(bKeyOwner).Put([]byte("K"), []byte(tc.entry))
				}); err != nil {
					t.Fatal(err)
				}
			}
			put(t, db, []*Reservation{{Key: "K", Invoice: "INV", Requests: []domain.Request{{Key: "K"}, {Key: "D1"}}, Transactions: []string{"T1"}}}, nil)
			err = db.eng.View(func(tx Tx) error {
				owners := tx.Bucket(bKeyOwner)
				if got := string(owners.Get([]byte("K"))); got != tc.want {
					t.Errorf("entry under K = %q, want %q", got, tc.want)
				}
				for _, k := range []string{"D1", "T1"} {
					if got := string(owners.Get([]byte(k))); got != "K" {
						t.Errorf("entry under %s = %q, want K", k, got)
					}
				}
				return nil
			})
			if err != nil {
				t.Fatal(err)
			}
			err = db.Repo().View(t.Context(), func(tx RepoTx) error {
				for k, want := range map[string]string{"K": "K", "D1": "K", "T1": "K", "NONE": ""} {
					if got, err := tx.OwnerOf(k); err != nil || got != want {
						t.Errorf("OwnerOf(%s) = %q, %v; want %q", k, got, err, want)
					}
				}
				return nil
			})
			if err != nil {
				t.Fatal(err)
			}
		})
	}
}

// TestLayout7OwnersAfterUpgrade: the layout-7 fixture (store/testdata/
// layout7) upgraded to this layout answers OwnerOf for every key its key
// owner entries and its reservations' requests and transactions name as
// before, and again after every reservation was written anew (which drops
// no entry the file has under a reservation's own key, and writes none).
func TestLayout7OwnersAfterUpgrade(t *testing.T) {
	// What the layout-7 file says, read before any upgrade.
	want := map[string]string{}
	path, old := layout7Copy(t)
	err := old.View(func(tx *bolt.Tx) error {
		if err := tx.Bucket(bKeyOwner).ForEach(func(k, v []byte) error {
			want[string(k)] = string(v)
			return nil
		}); err != nil {
			return err
		}
		return tx.Bucket(bReservation).ForEach(func(k, v []byte) error {
			r, err := kvlayout.DecodeReservationOf(string(k), v)
			if err != nil {
				return err
			}
			for _, rq := range r.Requests {
				if _, ok := want[rq.Key]; !ok {
					t.Errorf("layout 7: request key %s of reservation %s has no owner entry", rq.Key, k)
				}
			}
			return nil
		})
	})
	if cerr := old.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		t.Fatal(err)
	}
	if len(want) == 0 {
		t.Fatal("the fixture has no key owner entries")
	}

	db, err := OpenBolt(path, Options{File: FileOptions{NoSync: true}}, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	check := func(when string) {
		t.Helper()
		err := db.Repo().View(t.Context(), func(tx RepoTx) error {
			for k, w := range want {
				if got, err := tx.OwnerOf(k); err != nil || got != w {
					t.Errorf("%s: OwnerOf(%s) = %q, %v; want %q", when, k, got, err, w)
				}
			}
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
	}
	check("upgraded")
	err = db.eng.View(func(tx Tx) error {
		if v := kvlayout.Be64(tx.Bucket(bMeta).Get(kSchema)); v != SchemaVersion {
			t.Errorf("schema %d after the upgrade, want %d", v, SchemaVersion)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	update(t, db, func(tx RepoTx) error {
		sums, err := tx.Summaries()
		if err != nil {
			return err
		}
		for _, s := range sums {
			r, err := tx.Reservation(s.Key)
			if err != nil {
				return err
			}
			if _, err := tx.PutReservation(r); err != nil {
				return err
			}
		}
		return nil
	})
	check("written again")
}
