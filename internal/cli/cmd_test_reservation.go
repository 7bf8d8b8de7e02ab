package cli

import (
	"context"

	"github.com/spf13/cobra"

	"paydesk/internal/ops"
	"paydesk/store"
)

type testReservationFlags struct {
	approve, decline bool
	lastName         string
}

func testReservationCmd(sio IO) *cobra.Command {
	c := &cmdContext{name: "test-reservation", sio: sio}
	var f testReservationFlags
	cmd := c.command("test-reservation", "Make a new test reservation (sandbox and test only); --approve to finish it", cobra.NoArgs,
		func(ctx context.Context, c *cmdContext) int { return runTestReservation(ctx, c, f) })
	c.gatewayFlags()
	fs := cmd.Flags()
	addFlags(fs, "currency")
	fs.BoolVar(&f.approve, "approve", false, "then approve the customer step in the sandbox")
	fs.BoolVar(&f.decline, "decline", false, "then decline the customer step in the sandbox")
	fs.StringVar(&f.lastName, "last-name", "", "billing last name (\"Decline\" is declined by the sandbox's risk check)")
	cmd.MarkFlagsMutuallyExclusive("approve", "decline")
	return cmd
}

func runTestReservation(ctx context.Context, c *cmdContext, f testReservationFlags) int {
	approve, decline, lastName := f.approve, f.decline, f.lastName
	env, code := c.open(ctx)
	if env == nil {
		return code
	}
	defer env.Close()
	r := ops.TestReservation(env.svc.Now(), c.set.Currency)
	if lastName != "" {
		r.Billing.LastName = lastName
	}
	res, err := env.svc.Reserve(ctx, r)
	if err != nil || (!approve && !decline) {
		return c.report(res, err, false)
	}
	step, err := ops.CustomerStepRequest{Reservation: res.Key, Approve: approve}.Run(ctx, env.svc)
	step.Action = "customer step"
	return c.report(step, err, step.State == store.OpSettled || step.State == store.OpFailed)
}
