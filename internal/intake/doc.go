// Package intake turns a webshop's orders into store orders: the Reserve
// envelope the shop sent the gateway (listener intake, JSON, NDJSON) or a CSV
// of order lines (paydesk import).
package intake
