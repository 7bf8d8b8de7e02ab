// Package store is paydesk's cache and domain ledger: reservations with
// their article lines, transactions, pushes, pending operations and the audit
// log, on one of two engines: a bbolt file (one console and its listener) or
// a PostgreSQL database (a team's consoles and listeners).
//
// On bbolt every write is one short transaction. Pushes are group-committed: many
// pushes share one fsync, and ApplyPush returns only after its push is on disk.
// Reads return copies; views never hold a transaction open. Methods that only
// touch the local file take no context (a bbolt transaction cannot be cancelled
// half-way); the ones that wait for a group commit do.
package store
