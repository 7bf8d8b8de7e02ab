package postgres

import (
	"time"

	"github.com/jackc/pgx/v5"

	"paydesk/store/domain"
)

// The users on the native engine: paydesk_users (0012).

const pgUserCols = `name, role, key, fingerprint, added, added_by`

func scanUser(r pgx.CollectableRow) (*domain.User, error) {
	var u domain.User
	var added *time.Time
	if err := r.Scan(&u.Name, &u.Role, &u.Key, &u.Fingerprint, &added, &u.AddedBy); err != nil {
		return nil, err
	}
	if added != nil {
		u.Added = *added
	}
	return &u, nil
}

func (t *Tx) User(name string) (*domain.User, error) {
	us, err := rowsOf(t, scanUser, `SELECT `+pgUserCols+` FROM paydesk_users WHERE name = $1`, pgText(name))
	if err != nil || len(us) == 0 {
		return nil, err
	}
	return us[0], nil
}

func (t *Tx) PutUser(u *domain.User) error {
	st, err := userUpsert(u)
	if err != nil {
		return err
	}
	return t.exec(st.sql, st.args...)
}

// userUpsert is the statement that writes u (PutUser, the conversion).
func userUpsert(u *domain.User) (pgStmt, error) {
	if err := pgTextErr("user "+u.Name, "name", u.Name, "role", u.Role, "key", u.Key, "added by", u.AddedBy); err != nil {
		return pgStmt{}, err
	}
	return pgStmt{`INSERT INTO paydesk_users (` + pgUserCols + `) VALUES (` + placeholders(6) + `)
		ON CONFLICT (name) DO UPDATE SET ` + upsertSet(pgUserCols),
		[]any{u.Name, u.Role, u.Key, u.Fingerprint, pgTime(u.Added), pgText(u.AddedBy)}}, nil
}

func (t *Tx) DeleteUser(name string) error {
	return t.exec(`DELETE FROM paydesk_users WHERE name = $1`, pgText(name))
}

func (t *Tx) Users() ([]*domain.User, error) {
	return rowsOf(t, scanUser, `SELECT `+pgUserCols+` FROM paydesk_users ORDER BY name`)
}
