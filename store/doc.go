// Package store is paydesk's cache and domain ledger: reservations with
// their article lines, transactions, pushes, pending operations and the audit
// log, on one of two engines: a bbolt file (one console and its listener) or
// a PostgreSQL database (a team's consoles and listeners).
//
// The rules (ledger.go, apply.go, ops.go, orders.go, batches.go, audit.go,
// rejected.go, read.go, write.go) are written once against the engine
// contract of store/domain: RepoTx, one transaction's reads and writes in
// domain terms, and Repo, which runs them and names what an engine has
// beyond them (Capabilities). The domain values live there too; this
// package's types are aliases of them (contract.go). The native PostgreSQL
// engine is package store/postgres; the bucket engine, package store/kv,
// serves bbolt and the kv PostgreSQL tables with the layout of
// store/kvlayout. Open picks the engine (engines.go holds what the rules
// ask of the bucket engine beyond the contract); nothing of a bucket, a
// byte key, a codec or SQL reaches the rules.
//
// On bbolt every write is one short transaction. Pushes are group-committed: many
// pushes share one fsync, and ApplyPush returns only after its push is on disk.
// Reads return copies; views never hold a transaction open. Methods that only
// touch the local file take no context (a bbolt transaction cannot be cancelled
// half-way); the ones that wait for a group commit do.
package store
