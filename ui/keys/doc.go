// Package keys is the console's one keymap: every key binding, with the help
// text that the footer, the help overlay and the command palette are made of.
package keys
