package cli

import (
	"context"
	"fmt"
	"strconv"
	"text/tabwriter"
	"time"

	"github.com/spf13/cobra"

	"paydesk/store"
)

// approvalJSON is one request as `paydesk approvals --json` prints it.
type approvalJSON struct {
	ID          uint64 `json:"id"`
	State       string `json:"state"`
	Kind        string `json:"kind"`
	Target      string `json:"target"`
	Amount      string `json:"amount"`
	Currency    string `json:"currency"`
	Note        string `json:"note,omitempty"`
	RequestedBy string `json:"requestedBy"`
	Role        string `json:"role,omitempty"`
	Created     string `json:"created"`
	Expires     string `json:"expires"`
	Decider     string `json:"decider,omitempty"`
	Decided     string `json:"decided,omitempty"`
	Reason      string `json:"reason,omitempty"`
	OpID        uint64 `json:"opId,omitempty"`
	Result      string `json:"result,omitempty"`
}

func approvalJSONOf(a *store.Approval, now time.Time) approvalJSON {
	out := approvalJSON{ID: a.ID, State: string(a.StateAt(now)), Kind: a.Kind, Target: clean(a.Target), Amount: money(a.Amount),
		Currency: a.Currency, Note: clean(a.Note), RequestedBy: clean(a.RequestedBy), Role: a.RequesterRole,
		Created: a.Created.UTC().Format(time.RFC3339), Expires: a.Expires.UTC().Format(time.RFC3339), Decider: clean(a.Decider),
		Reason: clean(a.Reason), OpID: a.OpID, Result: clean(a.Result)}
	if out.RequestedBy == "" {
		out.RequestedBy = clean(a.Requester)
	}
	if !a.Decided.IsZero() {
		out.Decided = a.Decided.UTC().Format(time.RFC3339)
	}
	return out
}

func approvalsCmd(sio IO) *cobra.Command {
	c := &cmdContext{name: "approvals", sio: sio}
	var all bool
	cmd := c.command("approvals", "List the refunds waiting for a second person's approval (--all: decided and expired too)", cobra.NoArgs,
		func(ctx context.Context, c *cmdContext) int { return runApprovals(ctx, c, all) })
	cmd.Long = "List the approval requests: refunds above approval-over that wait for a second person.\n" +
		"finance and admin approve them (paydesk approve ID) or deny them (paydesk deny ID --reason TEXT);\n" +
		"nobody decides their own. See docs/team.md."
	c.gatewayFlags()
	cmd.Flags().BoolVar(&all, "all", false, "also the requests decided or expired")
	return cmd
}

func runApprovals(ctx context.Context, c *cmdContext, all bool) int {
	env, code := c.open(ctx)
	if env == nil {
		return code
	}
	defer env.Close()
	list, err := env.svc.Approvals(ctx)
	if err != nil {
		return c.fail(err)
	}
	now := env.svc.Now()
	var rows []approvalJSON
	for _, a := range list {
		if all || a.StateAt(now) == store.ApprovalPending {
			rows = append(rows, approvalJSONOf(a, now))
		}
	}
	if c.flags.json {
		if rows == nil {
			rows = []approvalJSON{}
		}
		_ = writeJSON(c.sio.Stdout, rows)
		return exitOK
	}
	if len(rows) == 0 {
		fmt.Fprintln(c.sio.Stdout, "No approval requests waiting.")
		return exitOK
	}
	w := tabwriter.NewWriter(c.sio.Stdout, 0, 4, 2, ' ', 0)
	fmt.Fprintln(w, "ID\tSTATE\tAMOUNT\tKIND\tTARGET\tREQUESTED BY\tEXPIRES\tNOTE")
	for _, r := range rows {
		fmt.Fprintf(w, "%d\t%s\t%s %s\t%s\t%s\t%s\t%s\t%s\n", r.ID, r.State, r.Amount, r.Currency, r.Kind, r.Target, r.RequestedBy,
			r.Expires, r.Note)
	}
	_ = w.Flush()
	return exitOK
}

func approveCmd(sio IO) *cobra.Command {
	c := &cmdContext{name: "approve", sio: sio}
	cmd := c.command("approve ID", "Approve another user's refund request and send it (finance, admin)", cobra.ExactArgs(1),
		func(ctx context.Context, c *cmdContext) int { return runDecide(ctx, c, true, "") })
	cmd.Example = "paydesk approvals\npaydesk approve 3"
	c.moneyFlags()
	return cmd
}

func denyCmd(sio IO) *cobra.Command {
	c := &cmdContext{name: "deny", sio: sio}
	var reason string
	cmd := c.command("deny ID", "Deny another user's refund request: nothing is sent (finance, admin)", cobra.ExactArgs(1),
		func(ctx context.Context, c *cmdContext) int { return runDecide(ctx, c, false, reason) })
	cmd.Example = `paydesk deny 3 --reason "no return received"`
	c.gatewayFlags()
	cmd.Flags().StringVar(&reason, "reason", "", "why it is denied (kept in the audit log; required)")
	_ = cmd.MarkFlagRequired("reason")
	return cmd
}

func runDecide(ctx context.Context, c *cmdContext, approve bool, reason string) int {
	id, err := strconv.ParseUint(c.args[0], 10, 64)
	if err != nil || id == 0 {
		return c.usage("request %q: not a request number (paydesk approvals lists them)", c.args[0])
	}
	env, code := c.open(ctx)
	if env == nil {
		return code
	}
	defer env.Close()
	if !approve {
		if err := env.svc.Deny(ctx, id, reason); err != nil {
			return c.fail(err)
		}
		if c.flags.json {
			_ = writeJSON(c.sio.Stdout, map[string]any{"ok": true, "approval": id, "state": "denied"})
			return exitOK
		}
		fmt.Fprintf(c.sio.Stdout, "Request %d denied; nothing was sent.\n", id)
		return exitOK
	}
	a, err := env.svc.Approval(ctx, id)
	if err != nil {
		return c.fail(err)
	}
	s := summary{Action: "Approve and refund", Amount: a.Amount, Currency: a.Currency, Target: clean(a.Kind + " " + a.Target),
		Notes: []string{fmt.Sprintf("request %d by %s", id, clean(a.RequestedBy)), clean(a.Note)}}
	// Against a live gateway the approver types the invoice number too:
	// the target's (a capture or gift card payment, or a return's
	// reservation).
	if t, err := env.db.ResolveTransaction(ctx, a.Target); err == nil {
		s.Invoice = t.Invoice
	} else if r, err := env.db.Reservation(ctx, a.Target); err == nil {
		s.Invoice = r.Invoice
	}
	if !c.confirm(env.svc.Mode(), s) {
		return exitFailed
	}
	res, err := env.svc.Approve(ctx, id)
	if res.Target == "" { // refused before the request was read
		res.Target, res.Amount, res.Currency = a.Target, a.Amount, a.Currency
	}
	return c.report(res, err, c.settle(ctx, env, res))
}
