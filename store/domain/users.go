package domain

import "time"

// User is a person who reaches paydesk over SSH: a name, the role the
// server grants (internal/access names the roles), and the public key
// they prove themselves with. The store keeps users so that several
// paydesk serve on one PostgreSQL know the same people.
type User struct {
	Name string `json:"name"`
	Role string `json:"role"`
	// Key is the public key in authorized_keys form ("ssh-ed25519 AAAA…"),
	// without its comment.
	Key string `json:"key"`
	// Fingerprint is the key's SHA256 fingerprint ("SHA256:…"): how the
	// SSH server finds the user and the audit log names the key.
	Fingerprint string    `json:"fingerprint"`
	Added       time.Time `json:"added"`
	AddedBy     string    `json:"added_by"`
}

// UsersTx is the engines' part of the contract for users.
type UsersTx interface {
	// User is the user called name, nil when there is none.
	User(name string) (*User, error)
	// PutUser writes u under its name.
	PutUser(u *User) error
	// DeleteUser removes the user called name (nothing when there is none).
	DeleteUser(name string) error
	// Users lists every user, by name.
	Users() ([]*User, error)
}
