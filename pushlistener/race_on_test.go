//go:build race

package pushlistener

// raceEnabled: see skipKillsUnderRace.
const raceEnabled = true
