// Command keylat measures how long a key takes to reach the screen in the
// real console, beside the terminal's own floor (a `cat` in a pty).
//
// It starts each target in a pseudo-terminal of its own, reads its output
// into a terminal emulator, and for every key typed waits until the
// emulated screen shows what the key asked for: the time from writing
// the key to the output that completed the screen. The floor is the same
// wait for a key echoed by the pty (cooked `cat`); the console's figure
// beyond it is what paydesk adds. Several binaries can be measured side by
// side, their rounds alternating (in an order that turns each round, so
// that none always types after another), so a before and an after share
// the machine's load:
//
//	go build -o /tmp/pd-new . && go run ./store/storetest/gen -db /tmp/k.db -n 2000
//	go run ./internal/keylat -db /tmp/k.db -rounds 10 /tmp/pd-old /tmp/pd-new
//
// -db may be a postgres:// URL (a database gen filled, `gen -db URL -from
// FILE`): every console then opens that database, as a team's consoles do.
//
// -ssh adds each binary's console over SSH on loopback, in the same
// rounds: `paydesk serve --ssh` on a copy of the cache, a user with a new
// key, and the OpenSSH client (`ssh -tt -p PORT alice@127.0.0.1`) in the
// pty, so the figure is a key to the completed screen through the whole
// path a person at a terminal has:
//
//	go run ./internal/keylat -db /tmp/k.db -rounds 10 -ssh /tmp/pd-new
package main
