// Package textsafe makes untrusted text (push fields, gateway messages,
// imported files) inert and visible before it reaches a terminal or a CSV:
// control characters and escape sequences are shown as symbols, never
// passed on nor silently dropped, and a long field can be cut with a marker.
package textsafe
