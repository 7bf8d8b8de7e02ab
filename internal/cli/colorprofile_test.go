package cli

import (
	"bytes"
	"io"
	"os"
	"path/filepath"
	"testing"
)

// TestColorProfileOption: only the process's own stdout reuses the
// profile lipgloss detected for it; any other output is left to Bubble
// Tea's own detection.
func TestColorProfileOption(t *testing.T) {
	other, err := os.Create(filepath.Join(t.TempDir(), "out"))
	if err != nil {
		t.Fatal(err)
	}
	defer other.Close()
	for _, tc := range []struct {
		name string
		out  io.Writer
		want int
	}{
		{"stdout", os.Stdout, 1},
		{"another file", other, 0},
		{"a buffer", &bytes.Buffer{}, 0},
		{"none", nil, 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := len(colorProfileOption(tc.out)); got != tc.want {
				t.Errorf("colorProfileOption(%s): %d options, want %d", tc.name, got, tc.want)
			}
		})
	}
}
