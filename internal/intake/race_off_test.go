//go:build !race

package intake

const raceEnabled = false
