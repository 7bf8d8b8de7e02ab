package store

import (
	"bytes"
	"crypto/hkdf"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"

	"paydesk/store/domain"
)

// The audit log is keyed: every entry carries an HMAC under a key the
// database does not hold, so that anyone who can write to the database but
// does not have the key (an operator's SQL role, a DBA, a restored dump)
// cannot add an entry that `paydesk audit --verify` takes for paydesk's.
// The hash chain (audit.go) shows an entry removed or edited; the key shows
// one added. The key is derived from the merchant's secret key (see
// AuditKeyFromSecret), which every paydesk that writes the log — the
// consoles, the listener — already has and the database never sees; the
// caller passes it in Options.AuditKey. Whoever holds the secret can key
// entries too: the key separates paydesk from the database, not one holder
// of the secret from another.

// auditKeyInfo is HKDF's label: the same secret gives other keys for other
// uses, and this one for nothing else.
const auditKeyInfo = "paydesk audit log key v1"

// AuditKeyFromSecret derives the audit key from the merchant's secret key
// (HKDF-SHA256, a fixed label). The secret itself is never stored.
func AuditKeyFromSecret(secret string) ([]byte, error) {
	if secret == "" {
		return nil, fmt.Errorf("audit key: the secret key is empty")
	}
	return hkdf.Key(sha256.New, []byte(secret), nil, auditKeyInfo, 32)
}

// auditKeyring is the key entries are written and checked with, and its
// id, which entries carry so that one keyed with another key (another
// secret) is told apart from one not keyed at all.
type auditKeyring struct {
	key []byte
	id  string
}

func newAuditKeyring(key []byte) *auditKeyring {
	if len(key) == 0 {
		return nil
	}
	m := hmac.New(sha256.New, key)
	m.Write([]byte("paydesk audit key id"))
	return &auditKeyring{key: key, id: hex.EncodeToString(m.Sum(nil)[:8])}
}

func (k *auditKeyring) mac(body []byte) string {
	m := hmac.New(sha256.New, k.key)
	m.Write(body)
	return hex.EncodeToString(m.Sum(nil))
}

// seal stores e keyed: MAC over the JSON of e without MAC, which json
// writes as the JSON with MAC minus its last member.
func (k *auditKeyring) seal(e AuditEntry) ([]byte, error) {
	_, v, err := k.SealEntry(e)
	return v, err
}

// SealEntry is seal that also returns the entry as stored (KeyID and MAC
// set): the keyring is the domain.AuditSealer the engines store entries
// with. A nil keyring seals unkeyed.
func (k *auditKeyring) SealEntry(e AuditEntry) (AuditEntry, []byte, error) {
	if k == nil {
		return domain.SealAudit(nil, e)
	}
	e.MAC, e.KeyID = "", ""
	e.KeyID = k.id
	body, err := json.Marshal(e)
	if err != nil {
		return e, nil, err
	}
	e.MAC = k.mac(body)
	v, err := json.Marshal(e)
	return e, v, err
}

// macSuffix is how the stored JSON ends when it carries a MAC.
const macSuffixLen = len(`,"MAC":""}`) + 64

// keyState is what an entry's key says.
type keyState int

const (
	unkeyed    keyState = iota // no key: written before keying, or not by paydesk
	keyed                      // keyed with this key, and the MAC holds
	forged                     // claims this key, but the MAC does not hold
	otherKey                   // keyed with another key: not checkable here
	notChecked                 // keyed, but no key was given to check it
)

// check says whether the stored entry v (decoded as e) is keyed with k.
func (k *auditKeyring) check(v []byte, e AuditEntry) keyState {
	switch {
	case e.KeyID == "" && e.MAC == "":
		return unkeyed
	case k == nil:
		return notChecked
	case e.KeyID != k.id:
		return otherKey
	}
	if len(v) < macSuffixLen || len(e.MAC) != 64 {
		return forged
	}
	cut := len(v) - macSuffixLen
	if !bytes.Equal(v[cut:], []byte(`,"MAC":"`+e.MAC+`"}`)) {
		return forged
	}
	body := append(append([]byte(nil), v[:cut]...), '}')
	if hmac.Equal([]byte(k.mac(body)), []byte(e.MAC)) {
		return keyed
	}
	return forged
}
