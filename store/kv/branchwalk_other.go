//go:build !linux

package kv

// prefetch is a hint on Linux only (branchwalk_linux.go).
func prefetch(*pageFile, []branchAt) {}
