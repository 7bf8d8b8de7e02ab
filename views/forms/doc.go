// Package forms holds the operation forms (capture, cancel, update, refund,
// gift cards, test reservation) as huh v2 components that emit intents as
// messages; the console runs the intents, the forms never touch the network.
package forms
