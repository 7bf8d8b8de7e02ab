package cli

import (
	"context"
	"fmt"
)

func runListen(ctx context.Context, sio IO, args []string) int {
	fmt.Fprintln(sio.Stderr, "paydesk listen: not built yet")
	return 1
}
