//go:build race

package intake

// raceEnabled: the big-file tests parse hundreds of MiB on one goroutine;
// under the race detector they cost minutes and check no concurrency, so
// they skip there and .ci/run runs them without it.
const raceEnabled = true
