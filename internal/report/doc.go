// Package report sums the ledger into the day's money: reserved, captured,
// cancelled, refunded (by reason) and gift cards, per day, operator or
// service, for `paydesk report` and the console's Money tab.
package report
