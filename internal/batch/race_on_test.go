//go:build race

package batch

// raceEnabled: the huge-manifest test reads 200 MiB on one goroutine, and
// the kill test's child is a process of its own; under the race detector
// they cost minutes and check no concurrency, so they skip there and
// .ci/run runs them without it.
const raceEnabled = true
