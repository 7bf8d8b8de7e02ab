// Package textsafe makes untrusted text (push fields, gateway messages) inert
// before it reaches a terminal: control characters and escape sequences go.
package textsafe
