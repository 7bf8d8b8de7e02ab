//go:build !unix

package pushlistener

import "net"

func raiseOpenFileLimit(int) int { return 0 }

func hasPendingData(net.Conn) bool { return false }
