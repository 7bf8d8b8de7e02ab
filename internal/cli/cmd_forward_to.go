package cli

import (
	"context"
	"fmt"

	"github.com/spf13/cobra"

	"paydesk/internal/access"
	"paydesk/internal/textsafe"
	"paydesk/store"
)

// The store's forward endpoints (store/outbox_endpoints.go): one set per
// store, which every process sharing it forwards to. `forward-to` shows
// them; `set` and `clear` change them, for an admin, audited.

func forwardToCmd(sio IO) *cobra.Command {
	c := &cmdContext{name: "forward-to", sio: sio}
	cmd := c.command("forward-to", "Show the shop endpoints the store delivers every push to (set, clear: change them)", cobra.NoArgs,
		func(ctx context.Context, c *cmdContext) int { return runForwardToShow(ctx, c) })
	cmd.Example = "paydesk forward-to\npaydesk forward-to set https://shop.example/push\npaydesk forward-to clear\n" +
		"paydesk forward-to set --db ~/.local/share/paydesk/listen.db https://shop.example/push"
	c.lookFlags()
	cmd.AddCommand(forwardToChangeCmd(sio, "set", "set URL…", "Deliver every push stored from now on to these shop endpoints (replaces the store's)", cobra.MinimumNArgs(1)),
		forwardToChangeCmd(sio, "clear", "clear", "Deliver no push stored from now on (the deliveries recorded stay)", cobra.NoArgs))
	return cmd
}

func runForwardToShow(ctx context.Context, c *cmdContext) int {
	db, code := c.openCache()
	if code >= 0 {
		return code
	}
	eps := []string{}
	if db != nil {
		defer c.closeCache(db)
		stored, err := db.ForwardTo(ctx)
		if err != nil {
			return c.fail(err)
		}
		for _, ep := range stored {
			eps = append(eps, textsafe.Clean(store.EndpointShown(ep)))
		}
	}
	if c.flags.json {
		_ = writeJSON(c.sio.Stdout, map[string][]string{"forwardTo": eps})
		return exitOK
	}
	if len(eps) == 0 {
		fmt.Fprintln(c.sio.Stdout, "no endpoints: pushes are not forwarded (paydesk forward-to set URL…)")
		return exitOK
	}
	for _, ep := range eps {
		fmt.Fprintln(c.sio.Stdout, ep)
	}
	return exitOK
}

func forwardToChangeCmd(sio IO, name, use, short string, args cobra.PositionalArgs) *cobra.Command {
	c := &cmdContext{name: "forward-to " + name, sio: sio}
	cmd := c.command(use, short, args, func(ctx context.Context, c *cmdContext) int { return runForwardToChange(ctx, c) })
	c.lookFlags()
	return cmd
}

func runForwardToChange(ctx context.Context, c *cmdContext) int {
	eps := c.args // none for clear
	if _, err := store.NormalizeForwardTo(eps); err != nil {
		return c.usage("%s", textsafe.Clean(err.Error()))
	}
	db, code := c.openCache()
	if code >= 0 {
		return code
	}
	if db == nil {
		return c.fail(fmt.Errorf("no cache at %s: nothing to change (the first paydesk listen --forward-to URL sets them)", c.set.DB))
	}
	defer c.closeCache(db)
	if c.set.ReadOnly {
		return c.fail(fmt.Errorf("read-only = true in %s: forward-to not changed", c.set.ConfigFile))
	}
	p, ok := access.From(ctx)
	if !ok {
		me := operatorName(getenvOf(c.sio))
		p = c.set.Team.principal(me, me, access.Local)
	}
	if err := c.set.Team.Policy.Check(p, access.Settings); err != nil {
		return c.fail(err)
	}
	if err := db.SetForwardTo(ctx, eps, p.User, "command line"); err != nil {
		return c.fail(err)
	}
	if c.flags.json {
		shown := []string{}
		for _, ep := range eps {
			shown = append(shown, textsafe.Clean(store.EndpointShown(ep)))
		}
		_ = writeJSON(c.sio.Stdout, map[string][]string{"forwardTo": shown})
		return exitOK
	}
	if len(eps) == 0 {
		fmt.Fprintln(c.sio.Stdout, "forward-to cleared: the pushes stored from now on are not forwarded")
		return exitOK
	}
	fmt.Fprintf(c.sio.Stdout, "the pushes stored from now on go to %d endpoint(s); a listen, serve or console started before with none starts sending them when restarted\n", len(eps))
	return exitOK
}
