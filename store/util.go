package store

import (
	"fmt"
	"strconv"
)

func errorf(format string, args ...any) error { return fmt.Errorf(format, args...) }

func itoa(n int) string { return strconv.Itoa(n) }

// appendOnly returns a log bucket keyed by rising sequence numbers, set to
// fill its pages: bbolt's default half-full split suits random keys and
// would write twice the pages for a log.
func appendOnly(tx Tx, name []byte) Bucket {
	b := tx.Bucket(name)
	fillPages(b)
	return b
}
