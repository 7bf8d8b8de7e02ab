//go:build race

package cli

// raceEnabled: the race detector slows everything 5–10×, so timing bounds
// mean nothing under it.
const raceEnabled = true
