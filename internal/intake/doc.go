// Package intake turns a webshop's orders into store orders: the Reserve
// envelope the shop sent the gateway (listener intake, JSON, NDJSON) or a CSV
// of order lines (paydesk import). Files are read as streams, one record at
// a time, so a file of any size costs the memory of one order.
package intake
