package cli

import (
	"context"
	"fmt"
)

func runSandbox(ctx context.Context, sio IO, args []string) int {
	fmt.Fprintln(sio.Stderr, "paydesk sandbox: not built yet")
	return 1
}
