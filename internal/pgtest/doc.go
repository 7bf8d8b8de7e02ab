// Package pgtest gives tests a real PostgreSQL: the throwaway server that
// .ci/pg starts (PAYDESK_TEST_PG), and a fresh empty database per test.
package pgtest
