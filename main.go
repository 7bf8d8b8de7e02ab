// Command paydesk is a terminal back-office console for the deferred-invoice
// and gift card services behind one JSON gateway.
package main

import (
	"fmt"
	"os"
)

func main() {
	fmt.Fprintln(os.Stderr, "paydesk: console not wired yet")
	os.Exit(1)
}
