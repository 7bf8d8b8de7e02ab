package kv

import (
	"fmt"

	"paydesk/internal/fold"
	"paydesk/store/kvlayout"
)

// A list's search texts are folded when written (AppendSearchText); a
// file whose texts an older folding made (fold.Version, kept in meta)
// would not find what the new one finds ("mueller" for Müller). So Open
// folds them again once: a fill (pagefill.go) that rewrites each row's
// text and adds its trigrams, chunk by chunk, resumed where it stopped
// when cut short, and then records the version. The sort indexes and
// row IDs do not change. docs/store.md says so.

// kFoldVersion is meta's key of the folding of the file's search texts
// (absent: version 1).
var kFoldVersion = []byte("fold-version")

const refoldFillName = "refold"

// refoldFill is the fill that folds both lists' texts again.
func refoldFill() []fillStep {
	return []fillStep{
		{name: "reservation texts", run: func(tx Tx, after []byte, n int, _ any) ([]byte, error) {
			rows, tb := tx.Bucket(bSumRow), tx.Bucket(bSumText)
			var f fold.Folder
			var text []byte
			return walkFrom(tx.Bucket(bReservation), after, n, func(k, v []byte) error {
				s, err := kvlayout.SummaryOf(string(k), v)
				if err != nil {
					return fmt.Errorf("reservation %s: %w", k, err)
				}
				id, _ := recordRow(rows, k, v)
				if id == noRow {
					return nil
				}
				text = append(AppendSearchText(text[:0], &s, &f), '\n')
				return setRowText(tb, id, k, text)
			})
		}},
		{name: "transaction texts", run: func(tx Tx, after []byte, n int, _ any) ([]byte, error) {
			rows, tb := tx.Bucket(bTxRow), tx.Bucket(bTxText)
			var f fold.Folder
			var text []byte
			return walkFrom(tx.Bucket(bTransaction), after, n, func(k, v []byte) error {
				if kvlayout.IsPushIndexKey(k) {
					return nil
				}
				t, err := kvlayout.DecodeTx(v)
				if err != nil {
					return fmt.Errorf("transaction %s: %w", k, err)
				}
				id, _, err := rowID(rows, k, false, nil)
				if err != nil || id == noRow {
					return err
				}
				text = append(AppendTxSearchText(text[:0], t, &f), '\n')
				return setListRowText(tb, bTxGram, id, k, text, nil)
			})
		}},
	}
}

// refold folds the file's search texts again when an older folding made
// them (a fill, resumed when cut short), then records the version.
func (db *DB) refold() error {
	var due, empty bool
	if err := db.eng.View(func(tx Tx) error {
		m := tx.Bucket(bMeta)
		v := m.Get(kFoldVersion)
		due = (len(v) != 1 || int(v[0]) < fold.Version) || m.Get(fillKey(refoldFillName)) != nil
		empty = firstKey(tx, bReservation) == nil && firstKey(tx, bTransaction) == nil
		return nil
	}); err != nil || !due {
		return err
	}
	if !empty {
		if err := db.eng.Update(func(tx Tx) error {
			if tx.Bucket(bMeta).Get(fillKey(refoldFillName)) != nil {
				return nil // cut short before: runFill goes on
			}
			return startFill(tx, refoldFillName)
		}); err != nil {
			return err
		}
		if err := db.runFill(refoldFillName, refoldFill()); err != nil {
			return err
		}
	}
	return db.eng.Update(func(tx Tx) error { return tx.Bucket(bMeta).Put(kFoldVersion, []byte{fold.Version}) })
}

func firstKey(tx Tx, name []byte) []byte {
	b := tx.Bucket(name)
	if b == nil {
		return nil
	}
	k, _ := b.Cursor().First()
	return k
}
