package domain

import (
	"fmt"
	"strconv"
)

func errorf(format string, args ...any) error { return fmt.Errorf(format, args...) }

func itoa(n int) string { return strconv.Itoa(n) }
