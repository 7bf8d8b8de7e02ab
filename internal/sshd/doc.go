// Package sshd serves paydesk over SSH: the console (a bubbletea program
// per session, through wish's bubbletea middleware) and every command, as
// the user whose public key the client proves. Only public-key login is
// offered; an unknown key is refused and logged, boundedly. Sessions are
// tracked so that a user removed, or given another role, is cut off at
// once, open sessions included; idle sessions close.
package sshd
