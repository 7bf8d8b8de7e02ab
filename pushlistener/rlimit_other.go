//go:build !unix

package pushlistener

func openFileLimit() int { return 0 }
