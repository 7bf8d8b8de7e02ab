// Package ops is paydesk's one implementation of every gateway operation
// (capture, cancel, update, refund, gift cards, test reservations):
// validate → journal → send → settle → audit, for the console and the command line alike.
package ops
