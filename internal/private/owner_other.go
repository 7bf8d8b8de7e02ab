//go:build !unix

package private

import "io/fs"

const unixPerms = false

func owner(fs.FileInfo) (int, bool) { return 0, false }

const openNoBlock = 0
