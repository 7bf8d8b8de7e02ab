package cli

import (
	"strings"
	"testing"

	gossh "golang.org/x/crypto/ssh"
)

// FuzzParsePublicKey: a key file given to user add never panics, and a key
// read is written back as the one line the store keeps.
func FuzzParsePublicKey(f *testing.F) {
	f.Add([]byte("ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIOMqqnkVzrm0SdG6UOoqKLsabgH5C9okWi0dh2l9GKJl alice@desk\n"))
	f.Add([]byte("ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIOMqqnkVzrm0SdG6UOoqKLsabgH5C9okWi0dh2l9GKJl\nssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIOMqqnkVzrm0SdG6UOoqKLsabgH5C9okWi0dh2l9GKJl\n"))
	f.Add([]byte("-----BEGIN OPENSSH PRIVATE KEY-----\n"))
	f.Fuzz(func(t *testing.T, b []byte) {
		key, err := parsePublicKey(b)
		if err != nil {
			return
		}
		line := strings.TrimSpace(string(gossh.MarshalAuthorizedKey(key)))
		if strings.ContainsAny(line, "\r\n") {
			t.Fatalf("a key written as more than one line: %q", line)
		}
		if !strings.HasPrefix(gossh.FingerprintSHA256(key), "SHA256:") {
			t.Fatal("no SHA256 fingerprint")
		}
	})
}
