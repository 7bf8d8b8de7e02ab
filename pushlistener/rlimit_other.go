//go:build !unix

package pushlistener

import "net"

func openFileLimit() int { return 0 }

func hasPendingData(net.Conn) bool { return false }
