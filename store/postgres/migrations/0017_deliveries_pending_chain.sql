-- The worker's look for due deliveries (store/postgres/outbox.go,
-- DueDeliveries) takes the oldest pending delivery of each endpoint and
-- key (DISTINCT ON (endpoint, key) … ORDER BY endpoint, key, id). Without
-- an index in that order every look sorted all the pending rows — with a
-- shop down for a day, 100,000 of them, after every push. This index holds
-- the pending ones in that order, with next_at to decide from the index
-- alone, so the look reads them in order and sorts nothing.
CREATE INDEX paydesk_deliveries_pending_chain ON paydesk_deliveries (endpoint, key, id) INCLUDE (next_at)
	WHERE state = 'pending';
