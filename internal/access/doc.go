// Package access names who acts on paydesk and with which role: the
// principal a command or console session runs as, carried in its context.
package access
