// Package ui is the console's shell: tabs, routing, the status bar, help,
// the command palette and the dialog stack; it runs cache, gateway and file
// work as tea.Cmd and hands the screens in views what they draw.
package ui
