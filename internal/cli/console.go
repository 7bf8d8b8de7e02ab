package cli

import (
	"context"
	"fmt"
)

func runConsole(ctx context.Context, sio IO, args []string) int {
	fmt.Fprintln(sio.Stderr, "paydesk console: not built yet")
	return 1
}
