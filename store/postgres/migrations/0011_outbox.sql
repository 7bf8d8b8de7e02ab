-- The outbox (issue 26): one delivery per push stored and shop endpoint
-- (paydesk listen --forward-to), written in the push's own transaction,
-- and every attempt to deliver it. The native engine reads and writes it
-- (store/pgrel_outbox.go); the bucket engine keeps the same records in
-- buckets of its own (store/kvrepo_outbox.go).
CREATE TABLE paydesk_deliveries (
	id           bigint      PRIMARY KEY,
	push_id      bigint      NOT NULL,                 -- paydesk_pushes.id: the body sent
	key          text COLLATE "C" NOT NULL,            -- the push's transaction key: the order is kept per key and endpoint
	endpoint     text        NOT NULL,                 -- the shop's URL
	created      timestamptz,
	state        text        NOT NULL,                 -- pending, delivered, failed
	next_at      timestamptz,                          -- the next attempt (pending)
	delivered_at timestamptz,
	resent       integer     NOT NULL DEFAULT 0,       -- sent again by an operator
	tries        integer     NOT NULL DEFAULT 0,       -- attempts since created or resent: the retry schedule's step
	attempts     jsonb       NOT NULL DEFAULT '[]'     -- [{at, status, error, latency (ns), excerpt}], bounded
);
CREATE SEQUENCE paydesk_seq_deliveries;
CREATE INDEX paydesk_deliveries_open ON paydesk_deliveries (id) WHERE state = 'pending';
