// Package cli turns the command line into running paydesk: the console by
// default, and the sandbox, listen and operation subcommands.
package cli
