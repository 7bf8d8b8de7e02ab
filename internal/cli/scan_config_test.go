package cli

import (
	"testing"

	"github.com/spf13/pflag"
)

// TestScanAffixSettings: the scanner's prefix and suffix come from the
// config file (scan-prefix, scan-suffix), a flag beating the file.
func TestScanAffixSettings(t *testing.T) {
	file := writeConfig(t, "scan-prefix = \"]C1\"\nscan-suffix = \"#\"\n")
	tests := []struct {
		name         string
		args         []string
		prefix, suff string
	}{
		{"file", []string{"--config", file}, "]C1", "#"},
		{"flag beats file", []string{"--config", file, "--scan-prefix", "]E0"}, "]E0", "#"},
		{"none", nil, "", ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			fs := pflag.NewFlagSet("console", pflag.ContinueOnError)
			addFlags(fs, "config")
			fs.String("scan-prefix", "", "")
			fs.String("scan-suffix", "", "")
			if err := fs.Parse(tt.args); err != nil {
				t.Fatal(err)
			}
			home := t.TempDir()
			s, err := resolveSettings(fs, func(k string) string {
				if k == "HOME" {
					return home
				}
				return ""
			})
			if err != nil {
				t.Fatal(err)
			}
			if s.ScanPrefix != tt.prefix || s.ScanSuffix != tt.suff {
				t.Fatalf("prefix %q suffix %q, want %q %q", s.ScanPrefix, s.ScanSuffix, tt.prefix, tt.suff)
			}
		})
	}
}
