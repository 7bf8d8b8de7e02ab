package kv

// A copy carries the users and the approval requests too: a team moving
// its cache into PostgreSQL keeps who may reach it and what waits for a
// second pair of eyes. Their buckets are made by the first user or
// request (not by a layout step), so they are not among allBuckets.

// copiedBuckets are the buckets a copy writes, in order.
func copiedBuckets() [][]byte {
	// The outbox too: a delivery still pending when the cache is copied
	// is sent by the database's worker, and the sent ones keep their
	// attempts for the Deliveries view. And the pushes' repeated receipts
	// (keyed by push ID, as the pushes are).
	return append(append([][]byte(nil), allBuckets...), bUsers, bApproval,
		bDelivery, bDeliveryOpen, bDeliveryChain, bDeliveryDue, bPushReceipts)
}

// copyChecked are the buckets whose keys must not hold other records in
// the database copied into: the numbered logs, the requests (numbered
// too) and the users (a name that is someone else there).
func copyChecked() [][]byte {
	return append(append([][]byte(nil), numbered...), bApproval, bUsers, bDelivery, bPushReceipts)
}
