// Package store is paydesk's bbolt cache and domain ledger: reservations with
// their article lines, transactions, pushes, pending operations and the audit log.
//
// Every write is one short bbolt transaction. Pushes are group-committed: many
// pushes share one fsync, and ApplyPush returns only after its push is on disk.
// Reads return copies; views never hold a transaction open. Methods that only
// touch the local file take no context (a bbolt transaction cannot be cancelled
// half-way); the ones that wait for a group commit do.
package store
