// Package api speaks the gateway's wire: envelopes, typed action builders,
// validation, HMAC signing and the HTTP client. It imports nothing of paydesk.
package api
