// Package demo fills an embedded sandbox with about twenty realistic orders
// through real signed requests, so every screen of the console has data.
package demo
