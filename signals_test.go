package main

import (
	"os"
	"os/signal"
	"slices"
	"syscall"
	"testing"
)

// TestStopSignals: a hangup (terminal closed, tmux session killed, SSH
// dropped) ends paydesk in order like SIGTERM — unless it is ignored, as
// under nohup.
func TestStopSignals(t *testing.T) {
	if !slices.Contains(stopSignals(), os.Signal(syscall.SIGHUP)) {
		t.Fatalf("stopSignals() = %v: SIGHUP missing", stopSignals())
	}
	if !slices.Contains(stopSignals(), os.Signal(syscall.SIGTERM)) {
		t.Fatalf("stopSignals() = %v: SIGTERM missing", stopSignals())
	}
	signal.Ignore(syscall.SIGHUP)
	defer signal.Reset(syscall.SIGHUP)
	if slices.Contains(stopSignals(), os.Signal(syscall.SIGHUP)) {
		t.Fatalf("SIGHUP ignored (nohup), yet stopSignals() = %v", stopSignals())
	}
}
