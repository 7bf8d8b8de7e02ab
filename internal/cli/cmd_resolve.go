package cli

import (
	"context"
	"fmt"
	"strconv"

	"github.com/spf13/cobra"

	"paydesk/internal/ops"
)

func resolveCmd(sio IO) *cobra.Command {
	c := &cmdContext{name: "resolve", sio: sio}
	var note string
	var ask bool
	cmd := c.command("resolve OPERATION", "Settle an operation whose outcome is unknown: ask the gateway, or close it by hand", cobra.ExactArgs(1),
		func(ctx context.Context, c *cmdContext) int { return runResolve(ctx, c, note, ask) })
	cmd.Example = "paydesk resolve 4 --ask                                        # ask the gateway what became of it\n" +
		`paydesk resolve 4 --note "back office shows the capture as paid"`
	c.gatewayFlags()
	cmd.Flags().StringVar(&note, "note", "", "what the gateway's back office showed (closing by hand)")
	cmd.Flags().BoolVar(&ask, "ask", false, "ask the gateway for the transaction's status and settle by its answer (never re-sends)")
	cmd.MarkFlagsOneRequired("note", "ask")
	cmd.MarkFlagsMutuallyExclusive("note", "ask")
	return cmd
}

func runResolve(ctx context.Context, c *cmdContext, note string, ask bool) int {
	sio := c.sio
	id, err := strconv.ParseUint(c.args[0], 10, 64)
	if err != nil {
		fmt.Fprintf(sio.Stderr, "paydesk resolve: operation %q: not a number\n", c.args[0])
		return exitUsage
	}
	env, code := c.open(ctx)
	if env == nil {
		return code
	}
	defer env.Close()
	if ask {
		res, err := env.svc.Ask(ctx, id)
		if err != nil {
			return c.fail(err)
		}
		return c.report(res, nil, true)
	}
	res, err := ops.ResolveRequest{OpID: id, Note: note}.Run(ctx, env.svc)
	if err != nil {
		return c.fail(err)
	}
	res.Target = c.args[0]
	return c.report(res, nil, false)
}
