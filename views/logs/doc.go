// Package logs holds the audit view (who did what, when, on what, for how
// much, with what result) and the gateway log (every request sent and its answer).
package logs
