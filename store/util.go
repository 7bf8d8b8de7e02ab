package store

import (
	"fmt"
	"strconv"

	bolt "go.etcd.io/bbolt"
)

func errorf(format string, args ...any) error { return fmt.Errorf(format, args...) }

func itoa(n int) string { return strconv.Itoa(n) }

// appendOnly returns a log bucket keyed by rising sequence numbers, set to
// fill its pages: bbolt's default half-full split suits random keys and
// would write twice the pages for a log.
func appendOnly(tx *bolt.Tx, name []byte) *bolt.Bucket {
	b := tx.Bucket(name)
	b.FillPercent = 1.0
	return b
}
