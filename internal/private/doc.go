// Package private checks that files holding secrets or private data (the
// secret key file, the cache) are readable by their owner only, as ssh
// checks a private key, and reads secret files without ever putting the
// secret, or a value that might be it, into an error. It also opens the
// files a command is given (config, secret, saved push, import, manifest)
// without blocking, refusing what is not a regular file or a stream, and
// reads the rows of their CSV files with a bound on each row.
package private
