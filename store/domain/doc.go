// Package domain holds the store's domain values (reservations, lines,
// transactions, pushes, operations, the audit log, orders, batches, list
// pages) and the engine contract (RepoTx, Repo, Capabilities, Lister): the
// leaf package that the rules (package store) and every engine import.
package domain
