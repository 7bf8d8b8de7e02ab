package cli

import (
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"paydesk/internal/private"
	"paydesk/store"
)

// auditKey is the key paydesk keys the audit log with (store/auditkey.go),
// derived from the merchant's secret key, which the database never holds:
//   - with a gateway: the secret from $PAYDESK_SECRET_KEY or --secret-file,
//     the one every console and the listener of a team already have;
//   - with the embedded sandbox: its secret, made once per cache folder
//     (sandbox.secret, 0600);
//   - with no secret at all (a command that only reads, on a machine with
//     no secret configured): a key made once for this install, audit.key
//     (0600) in the data folder.
//
// create says whether a missing key file may be made: the commands that only
// read pass false and get nil (entries' keys are then not checked) rather
// than writing a file.
func auditKey(set settings, getenv func(string) string, create bool) ([]byte, error) {
	if create {
		if err := os.MkdirAll(set.DataDir(), 0o700); err != nil {
			return nil, fmt.Errorf("audit key: data folder: %w", err)
		}
	}
	secret := ""
	switch {
	case set.Embedded():
		path := filepath.Join(set.DataDir(), "sandbox.secret")
		if !create {
			if _, err := os.Stat(path); errors.Is(err, os.ErrNotExist) {
				return nil, nil
			}
		}
		creds, err := embeddedCredentials(set.DataDir())
		if err != nil {
			return nil, fmt.Errorf("audit key: %w", err)
		}
		secret = creds.SecretKey
	case set.SecretFile != "" || getenv("PAYDESK_SECRET_KEY") != "":
		s, err := readSecret(set.SecretFile, getenv)
		if err != nil {
			return nil, fmt.Errorf("audit key: %w", err)
		}
		secret = s
	default:
		return installAuditKey(set.DataDir(), create)
	}
	return store.AuditKeyFromSecret(secret)
}

// installAuditKey reads (or, with create, makes) the per-install audit key.
func installAuditKey(dir string, create bool) ([]byte, error) {
	path := filepath.Join(dir, "audit.key")
	if err := private.CheckPath(path); err != nil {
		return nil, fmt.Errorf("audit key: %w", err)
	}
	b, err := os.ReadFile(path)
	switch {
	case errors.Is(err, os.ErrNotExist) && !create:
		return nil, nil
	case errors.Is(err, os.ErrNotExist):
		raw := make([]byte, 32)
		if _, err := rand.Read(raw); err != nil {
			return nil, fmt.Errorf("audit key: %w", err)
		}
		b = []byte(hex.EncodeToString(raw))
		if err := os.WriteFile(path, b, 0o600); err != nil {
			return nil, fmt.Errorf("audit key: write %s: %w", path, err)
		}
	case err != nil:
		return nil, fmt.Errorf("audit key: read %s: %w", path, err)
	}
	key, err := hex.DecodeString(strings.TrimSpace(string(b)))
	if err != nil || len(key) < 16 {
		return nil, fmt.Errorf("audit key: %s does not hold a key (hex, 32 bytes)", path)
	}
	return key, nil
}
