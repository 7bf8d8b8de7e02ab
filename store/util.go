package store

import (
	"errors"
	"fmt"
	"strconv"
)

var errNotYet = errors.New("store: not implemented yet")

func errorf(format string, args ...any) error { return fmt.Errorf(format, args...) }

func itoa(n int) string { return strconv.Itoa(n) }
