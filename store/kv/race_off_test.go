//go:build !race

package kv

// raceEnabled: see sampled.
const raceEnabled = false
