// Command sshload measures the push listener of `paydesk serve --ssh`
// beside consoles open over SSH, with the consoles' clients in a process
// of their own, so that the clients' decryption and reading of every
// frame is not charged to the server.
//
// For each binary it runs two `paydesk serve --ssh` processes, each on its
// own copy of the cache: one with no console open and one with -consoles
// consoles over SSH, held by a second process (this command again, with
// -clients) in which every console is a pty-sized session that reads and
// discards every frame as a terminal would (-emulate: into a terminal
// emulator). The pushes come from this process (internal/pushload), a
// third. The targets take turns, round by round in rotating order, so
// that they share the machine's load; after each round it waits until the
// serve process has been quiet for 4 s (the consoles gather a stream for
// up to 3 s and redraw after the pushes), so that the tail of one round
// does not slow the next target's.
//
// It prints per target the pushes/s of each round, p50 and p99, the
// serve process's CPU a push (utime+stime from /proc, during the round
// and with the redraws after it), the clients' CPU a push and the bytes
// the consoles read a push, and the share of the pushes/s kept beside the
// consoles:
//
//	go build -o /tmp/paydesk . && go run ./store/storetest/gen -db /tmp/2k.db -n 2000
//	go run ./internal/sshload -paydesk /tmp/paydesk -db /tmp/2k.db -consoles 50 -rounds 4 -n 4000
//
// A round must last well beyond the consoles' gathering of a stream of
// pushes before they reload (1 s, then 2 s, then 3 s; -n 4000 at a
// thousand pushes a second), or it ends before they draw and their cost
// falls after it.
//
// -old BINARY measures a second binary in the same rounds (before and
// after a change). $PAYDESK_CPUPROFILE=FILE is passed on: each serve
// process writes FILE.<pid>.
package main
