// Package pgtest gives tests a real PostgreSQL: the throwaway server that
// .ci/pg starts (PAYDESK_TEST_PG), a fresh empty database per test (or a
// copy of a migrated template), and the switch that runs a package's flow
// tests on PostgreSQL (PAYDESK_STORE_BACKEND; OwnEngine marks the tests it
// does not concern).
package pgtest
