// Package cli turns the command line into running paydesk: the console by
// default, and the sandbox, listen, look and operation commands. The
// commands are a cobra tree (root.go, one file per command or group) run
// once through charm's fang (styled help and errors, --version, a man page,
// completions); the settings come from flags the user set, the environment
// and a TOML config file (config.go), in that order.
package cli
