// Package reconcile ties paydesk's captures and refunds to the money the
// gateway paid out: it reads settlement statements (the family's CSV, ISO
// 20022 camt.053) and matches each line to what the store booked.
package reconcile
