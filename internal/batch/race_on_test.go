//go:build race

package batch

// raceEnabled: the huge-manifest test reads 200 MiB on one goroutine;
// under the race detector it costs minutes and checks no concurrency, so
// it skips there and .ci/run runs it without it.
const raceEnabled = true
