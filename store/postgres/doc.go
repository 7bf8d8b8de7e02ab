// Package postgres is the store's native PostgreSQL engine: the domain
// contract (store/domain) over typed tables, indexes and constraints, its
// schema migrations (migrations/), and the conversion of a layout-7
// database's kv tables into those tables.
package postgres
