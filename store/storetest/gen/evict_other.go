//go:build !linux

package main

import "errors"

func evict(string) error { return errors.New("-evict needs Linux (posix_fadvise)") }
