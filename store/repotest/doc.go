// Package repotest is the conformance suite of the store's engine
// contract (store/domain): every engine's tests run it (Run).
package repotest
