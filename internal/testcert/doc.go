// Package testcert gives tests a self-signed certificate for 127.0.0.1, its
// PEM files (0600) and a pool that trusts it, for the HTTPS listener's tests.
package testcert
