package store

import (
	"context"
	"errors"
	"fmt"
	"regexp"
	"sort"
	"strings"
)

// ErrNoUser: no user has that name or key.
var ErrNoUser = errors.New("no such user")

// userName is what a user's name may be: a login name, so that it reads
// the same in ssh's command line, the journal and the audit log.
var userName = regexp.MustCompile(`^[a-z_][a-z0-9._-]{0,31}$`)

// checkUser applies the rules every user keeps.
func checkUser(u *User) error {
	if !userName.MatchString(u.Name) {
		return fmt.Errorf("user %q: the name must be 1 to 32 of a-z, 0-9, '.', '_', '-', starting with a letter or '_'", u.Name)
	}
	if u.Role == "" {
		return fmt.Errorf("user %s: role: must be set", u.Name)
	}
	if !strings.HasPrefix(u.Fingerprint, "SHA256:") {
		return fmt.Errorf("user %s: fingerprint %q: must be a SHA256 fingerprint", u.Name, u.Fingerprint)
	}
	if u.Key == "" || strings.ContainsAny(u.Key, "\r\n") {
		return fmt.Errorf("user %s: key: must be one authorized_keys line", u.Name)
	}
	return nil
}

// AddUser adds u. A name is added once, and a key names one user: the
// server could not tell two people with one key apart.
func (db *DB) AddUser(ctx context.Context, u User) error {
	if err := checkUser(&u); err != nil {
		return err
	}
	u.Added = nowOr(u.Added, db.now)
	return db.update(ctx, func(tx RepoTx, c *Change) error {
		old, err := tx.User(u.Name)
		if err != nil {
			return err
		}
		if old != nil {
			return fmt.Errorf("user %s: exists already (paydesk user remove %s first)", u.Name, u.Name)
		}
		all, err := tx.Users()
		if err != nil {
			return err
		}
		for _, o := range all {
			if o.Fingerprint == u.Fingerprint {
				return fmt.Errorf("user %s: key %s: is %s's already; a key names one user", u.Name, u.Fingerprint, o.Name)
			}
		}
		if err := tx.PutUser(&u); err != nil {
			return err
		}
		return auditUser(tx, c, u.Added, u.AddedBy, "user-add", u.Name, fmt.Sprintf("added: role %s, key %s", u.Role, u.Fingerprint))
	})
}

// RemoveUser removes the user called name, by the user by (for the audit
// log); ErrNoUser when there is none.
func (db *DB) RemoveUser(ctx context.Context, name, by string) error {
	return db.update(ctx, func(tx RepoTx, c *Change) error {
		old, err := tx.User(name)
		if err != nil {
			return err
		}
		if old == nil {
			return fmt.Errorf("user %q: %w", name, ErrNoUser)
		}
		if err := tx.DeleteUser(name); err != nil {
			return err
		}
		return auditUser(tx, c, db.now(), by, "user-remove", name, fmt.Sprintf("removed: was role %s, key %s", old.Role, old.Fingerprint))
	})
}

// Users lists the users by name.
func (db *DB) Users(ctx context.Context) ([]User, error) {
	var out []User
	err := db.read(ctx, func(tx RepoTx) error {
		all, err := tx.Users()
		if err != nil {
			return err
		}
		out = make([]User, 0, len(all))
		for _, u := range all {
			out = append(out, *u)
		}
		return nil
	})
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out, err
}

// UserByKey is the user whose key has fingerprint fp; ErrNoUser when
// nobody's has.
func (db *DB) UserByKey(ctx context.Context, fp string) (User, error) {
	all, err := db.Users(ctx)
	if err != nil {
		return User{}, err
	}
	for _, u := range all {
		if u.Fingerprint == fp {
			return u, nil
		}
	}
	return User{}, fmt.Errorf("key %s: %w", fp, ErrNoUser)
}
