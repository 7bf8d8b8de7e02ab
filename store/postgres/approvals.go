package postgres

import (
	"encoding/json"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgtype"

	"paydesk/store/domain"
)

// Approval requests on the native engine (migrations/0013): one typed
// row each, the request to send as jsonb.

const pgApprovalCols = `id, created, expires, requester, requester_role, requested_by, kind, target, amount, currency,
	note, request, state, decider, decided, reason, op_id, result`

func (t *Tx) NextApprovalID() (uint64, error) { return t.nextNumber("approvals") }

func (t *Tx) PutApproval(a *domain.Approval) error {
	st, err := approvalUpsert(a)
	if err != nil {
		return err
	}
	return t.exec(st.sql, st.args...)
}

// approvalUpsert is the statement that writes a (PutApproval, the
// conversion).
func approvalUpsert(a *domain.Approval) (pgStmt, error) {
	what := "approval request"
	if err := pgTextErr(what, "requester", a.Requester, "requester role", a.RequesterRole, "requested by", a.RequestedBy,
		"kind", a.Kind, "target", a.Target, "currency", a.Currency, "note", a.Note, "state", string(a.State),
		"decider", a.Decider, "reason", a.Reason, "result", a.Result); err != nil {
		return pgStmt{}, err
	}
	req := a.Request
	if len(req) == 0 || !json.Valid(req) {
		req = json.RawMessage("null")
	}
	return pgStmt{`INSERT INTO paydesk_approvals (` + pgApprovalCols + `) VALUES (` + placeholders(18) + `)
		ON CONFLICT (id) DO UPDATE SET ` + upsertSet(pgApprovalCols), []any{int64(a.ID), pgTime(a.Created), pgTime(a.Expires),
		pgText(a.Requester), pgText(a.RequesterRole), pgText(a.RequestedBy), pgText(a.Kind), pgText(a.Target),
		pgNumeric(a.Amount), pgText(a.Currency), pgText(a.Note), string(req), pgText(string(a.State)),
		pgText(a.Decider), pgTime(a.Decided), pgText(a.Reason), int64(a.OpID), pgText(a.Result)}}, nil
}

func (t *Tx) approvals(sql string, args ...any) ([]*domain.Approval, error) {
	return rowsOf(t, func(r pgx.CollectableRow) (*domain.Approval, error) {
		var (
			a                         domain.Approval
			id, opID                  int64
			created, expires, decided *time.Time
			amount                    pgtype.Numeric
			req                       []byte
			state                     string
		)
		if err := r.Scan(&id, &created, &expires, &a.Requester, &a.RequesterRole, &a.RequestedBy, &a.Kind, &a.Target,
			&amount, &a.Currency, &a.Note, &req, &state, &a.Decider, &decided, &a.Reason, &opID, &a.Result); err != nil {
			return nil, err
		}
		a.ID, a.OpID = uint64(id), uint64(opID)
		a.Created, a.Expires, a.Decided = timeOf(created), timeOf(expires), timeOf(decided)
		a.Amount, a.State, a.Request = decOf(amount), domain.ApprovalState(state), json.RawMessage(req)
		return &a, nil
	}, sql, args...)
}

func (t *Tx) Approval(id uint64) (*domain.Approval, error) {
	as, err := t.approvals(`SELECT `+pgApprovalCols+` FROM paydesk_approvals WHERE id = $1`, int64(id))
	if err != nil || len(as) == 0 {
		return nil, err
	}
	return as[0], nil
}

func (t *Tx) Approvals() ([]*domain.Approval, error) {
	return t.approvals(`SELECT ` + pgApprovalCols + ` FROM paydesk_approvals ORDER BY id`)
}
