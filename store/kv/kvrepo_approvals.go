package kv

import (
	"encoding/json"
	"fmt"

	"paydesk/store/kvlayout"
)

// bApproval keeps the approval requests: id (8 bytes, big-endian) →
// Approval (JSON). The bucket is made by the first request rather than
// by a schema step: a cache without requests has none, and a paydesk
// that knows no approvals reads the file as before.
var bApproval = kvlayout.BApproval

func (k *kvTx) NextApprovalID() (uint64, error) {
	b, err := k.tx.CreateBucketIfNotExists(bApproval)
	if err != nil {
		return 0, fmt.Errorf("approval requests: %w", err)
	}
	return b.NextSequence()
}

func (k *kvTx) Approval(id uint64) (*Approval, error) {
	b := k.tx.Bucket(bApproval)
	if b == nil {
		return nil, nil
	}
	v := b.Get(u64(id))
	if v == nil {
		return nil, nil
	}
	var a Approval
	if err := json.Unmarshal(v, &a); err != nil {
		return nil, fmt.Errorf("approval request %d: %w", id, err)
	}
	return &a, nil
}

func (k *kvTx) PutApproval(a *Approval) error {
	v, err := json.Marshal(a)
	if err != nil {
		return fmt.Errorf("approval request %d: %w", a.ID, err)
	}
	b, err := k.tx.CreateBucketIfNotExists(bApproval)
	if err != nil {
		return fmt.Errorf("approval requests: %w", err)
	}
	return b.Put(u64(a.ID), v)
}

func (k *kvTx) Approvals() ([]*Approval, error) {
	b := k.tx.Bucket(bApproval)
	if b == nil {
		return nil, nil
	}
	var out []*Approval
	err := b.ForEach(func(key, v []byte) error {
		var a Approval
		if err := json.Unmarshal(v, &a); err != nil {
			return fmt.Errorf("approval request %d: %w", kvlayout.Be64(key), err)
		}
		out = append(out, &a)
		return nil
	})
	return out, err
}
