// Package hub lets one paydesk process own a cache and run the commands of
// the others. A bbolt cache has one owner at a time; the owner (the
// console, paydesk serve, paydesk listen) serves a unix socket named after
// the cache, and a command that finds the cache owned sends its argv there:
// the owner runs the same command in-process on its open cache and streams
// its stdout and stderr back, then its exit code. The protocol is net/http
// over the socket: POST /run with the request as JSON, answered by a stream
// of JSON frames (the run's token, output, the exit code last); POST
// /stdin/{token} when the command reads its stdin (asked for by a frame, so
// a command that does not read it never takes the client's input); POST
// /cancel/{token} interrupts it as Ctrl-C would; GET /owner says who owns
// the cache.
//
// Only the owner's OS user may connect: the socket is 0600 in a 0700
// folder, and on Linux each connection's peer is checked (SO_PEERCRED).
// Nothing secret travels over the socket: the owner has the credentials.
package hub
