//go:build !race

package ui

import "time"

// pumpWait is how long pump waits for a command before it takes it for a
// waiter (a command that blocks until the next cache change).
const pumpWait = 100 * time.Millisecond
