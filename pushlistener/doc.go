// Package pushlistener receives the gateway's pushes over HTTP: it verifies
// the signature, decodes the envelope, stores it durably and only then says 200.
package pushlistener
