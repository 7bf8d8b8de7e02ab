//go:build !linux

package hub

import "net"

// peerChecked says whether this system tells who is at the other end: here
// the socket's mode (0600) and its folder's (0700) are the guard.
const peerChecked = false

func peerUID(net.Conn) (int, error) { return -1, nil }
