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
	cmd := c.command("resolve OPERATION", "Close an operation whose outcome is unknown, by hand", cobra.ExactArgs(1),
		func(ctx context.Context, c *cmdContext) int { return runResolve(ctx, c, note) })
	cmd.Example = `paydesk resolve 4 --note "back office shows the capture as paid"`
	c.gatewayFlags()
	cmd.Flags().StringVar(&note, "note", "", "what the gateway's back office showed (required)")
	_ = cmd.MarkFlagRequired("note")
	return cmd
}

func runResolve(ctx context.Context, c *cmdContext, note string) int {
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
	res, err := ops.ResolveRequest{OpID: id, Note: note}.Run(ctx, env.svc)
	if err != nil {
		return c.fail(err)
	}
	res.Target = c.args[0]
	return c.report(res, nil, false)
}
