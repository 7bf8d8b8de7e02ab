//go:build !unix

package pushlistener

import "time"

// processCPU is not measured here; the benchmark reports 0 CPU per push.
func processCPU() time.Duration { return 0 }
