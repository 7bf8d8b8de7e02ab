// Package theme is the console's one theme: semantic styles (ok, pending,
// failed, warning, live, muted, accent, selected) in a light and a dark variant.
package theme
