package postgres

import (
	"testing"

	"paydesk/internal/pgtest"
	"paydesk/store/domain"
	"paydesk/store/repotest"
)

// TestContract holds the native engine to the contract (store/repotest):
// the ledger's half and the logs' on one transaction. Skipped without
// PAYDESK_TEST_PG: from the repository root run
// `. .ci/pg && go test -run TestContract ./store/postgres/`.
func TestContract(t *testing.T) {
	pgtest.URL(t)
	repotest.Run(t, func(t *testing.T) domain.Repo { return openNative(t) })
}
