package main

import (
	"os"
	"slices"
	"syscall"
	"testing"
)

// TestStopSignals: a hangup (terminal closed, tmux session killed, SSH
// dropped) ends paydesk in order like SIGTERM — unless it is ignored, as
// under nohup.
func TestStopSignals(t *testing.T) {
	tests := []struct {
		name    string
		ignored func(os.Signal) bool
		want    []os.Signal
	}{
		{"in a terminal", func(os.Signal) bool { return false }, []os.Signal{os.Interrupt, syscall.SIGTERM, syscall.SIGHUP}},
		{"under nohup", func(s os.Signal) bool { return s == syscall.SIGHUP }, []os.Signal{os.Interrupt, syscall.SIGTERM}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := stopSignals(tt.ignored); !slices.Equal(got, tt.want) {
				t.Fatalf("stopSignals() = %v, want %v", got, tt.want)
			}
		})
	}
}
