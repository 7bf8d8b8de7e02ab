package kv

import (
	"encoding/json"
	"fmt"

	"paydesk/store/kvlayout"
)

// bUsers keeps the users, JSON by name. The bucket is made by the first
// user added (a cache that never had one reads as having none), so a
// cache's layout version stays what it is.
var bUsers = kvlayout.BUsers

func (k *kvTx) User(name string) (*User, error) {
	b := k.tx.Bucket(bUsers)
	if b == nil {
		return nil, nil
	}
	v := b.Get([]byte(name))
	if v == nil {
		return nil, nil
	}
	var u User
	if err := json.Unmarshal(v, &u); err != nil {
		return nil, fmt.Errorf("user %s: %w", name, err)
	}
	return &u, nil
}

func (k *kvTx) PutUser(u *User) error {
	v, err := json.Marshal(u)
	if err != nil {
		return fmt.Errorf("user %s: %w", u.Name, err)
	}
	b, err := k.tx.CreateBucketIfNotExists(bUsers)
	if err != nil {
		return fmt.Errorf("user %s: %w", u.Name, err)
	}
	return b.Put([]byte(u.Name), v)
}

func (k *kvTx) DeleteUser(name string) error {
	b := k.tx.Bucket(bUsers)
	if b == nil {
		return nil
	}
	return b.Delete([]byte(name))
}

func (k *kvTx) Users() ([]*User, error) {
	b := k.tx.Bucket(bUsers)
	if b == nil {
		return nil, nil
	}
	var out []*User
	err := b.ForEach(func(key, v []byte) error {
		var u User
		if err := json.Unmarshal(v, &u); err != nil {
			return fmt.Errorf("user %s: %w", key, err)
		}
		out = append(out, &u)
		return nil
	})
	return out, err
}
