package postgres

import (
	"encoding/json"
	"fmt"

	"paydesk/store/domain"
	"paydesk/store/kvlayout"
)

// The users (0012) and the approval requests (0013) a bucket store keeps
// are converted with the logs (logs_convert.go), as its last steps:
// a cache copied into a team's database (paydesk db copy) keeps its users
// and its requests, decided or waiting, under their IDs. Their steps come
// after the older ones, so a conversion an older paydesk began goes on
// where it stopped.

// convertUser makes a users bucket record a row of paydesk_users.
func convertUser(k, v []byte) (pgStmt, bool, error) {
	var u domain.User
	if err := json.Unmarshal(v, &u); err != nil {
		return pgStmt{}, false, fmt.Errorf("user %s: %w", k, err)
	}
	st, err := userUpsert(&u)
	return st, true, err
}

// convertApproval makes an approvals bucket record a row of
// paydesk_approvals, keeping its ID (the key).
func convertApproval(k, v []byte) (pgStmt, bool, error) {
	if len(k) != 8 {
		return pgStmt{}, false, fmt.Errorf("approval request %q: the key is no request ID", k)
	}
	var a domain.Approval
	if err := json.Unmarshal(v, &a); err != nil {
		return pgStmt{}, false, fmt.Errorf("approval request %d: %w", kvlayout.Be64(k), err)
	}
	a.ID = kvlayout.Be64(k)
	st, err := approvalUpsert(&a)
	return st, true, err
}
