// Package pushlistener receives the gateway's pushes over HTTP: it verifies
// the signature, decodes the envelope, stores it durably and only then says
// 200. It faces the internet before any signature is checked, so it runs
// behind net/http with timeouts, a header limit, a connection cap that makes
// room rather than lock out (serve.go), and optional TLS; an unsigned
// request is refused before its body is read or anything is stored, and
// what is kept of it is bounded and aggregated (Admit, Reject).
package pushlistener
