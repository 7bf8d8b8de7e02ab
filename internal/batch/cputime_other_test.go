//go:build !unix

package batch

import "time"

// cpuTime is not measured here.
func cpuTime() time.Duration { return 0 }
