package main

import (
	"fmt"
	"os"
	"runtime/pprof"
)

// startProfile writes a CPU profile of the whole run to the file named by
// $PAYDESK_CPUPROFILE, when set: the cost of a push is measured on the
// real binary under load from another process (internal/pushload), which
// a benchmark in the test binary does not show. The returned function
// ends the profile; it must run before os.Exit.
func startProfile() func() {
	path := os.Getenv("PAYDESK_CPUPROFILE")
	if path == "" {
		return func() {}
	}
	// Every process started with the variable (pushload starts several
	// targets) writes a file of its own.
	f, err := os.Create(fmt.Sprintf("%s.%d", path, os.Getpid()))
	if err != nil {
		fmt.Fprintf(os.Stderr, "paydesk: cpu profile: %v\n", err)
		return func() {}
	}
	if err := pprof.StartCPUProfile(f); err != nil {
		fmt.Fprintf(os.Stderr, "paydesk: cpu profile: %v\n", err)
		_ = f.Close()
		return func() {}
	}
	return func() {
		pprof.StopCPUProfile()
		_ = f.Close()
	}
}
