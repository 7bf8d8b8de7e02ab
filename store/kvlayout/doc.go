// Package kvlayout is the bucket layout of the store's key-value engines:
// the bucket names, the meta keys and the binary codec of summaries, pushes
// and transactions. The bucket engines write it; the conversion of a
// layout-7 database to PostgreSQL's tables reads it.
package kvlayout
