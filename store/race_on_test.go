//go:build race

package store

// raceEnabled: see sampled.
const raceEnabled = true
