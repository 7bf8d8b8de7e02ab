-- The push inbox (issue 17): a listener on PostgreSQL answers a push 200
-- once it is a row here, committed; the store's rules (the push log, the
-- ledger, settling operations) are applied from here afterwards by one
-- applier per database, in the transaction that marks the row applied.
--
-- (key, hash) is the push's identity, the store's notion of a duplicate:
-- the transaction key and the SHA-256 of the push's content. The unique
-- index makes "stored once" the database's job (INSERT … ON CONFLICT DO
-- NOTHING), however many listeners get the same push at once. Rows stay
-- after they are applied (the identity must keep refusing a late
-- duplicate); the raw request moves to the push log then and rec is
-- cleared.
CREATE TABLE paydesk_push_inbox (
	id      bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
	key     bytea NOT NULL,
	hash    bytea NOT NULL,
	rec     bytea,  -- the push as received (the store's codec) until applied
	push_id bigint, -- its number in the push log once applied (the earlier push's for a duplicate)
	result  bytea,  -- what applying it did (the store's codec)
	UNIQUE (key, hash)
);

-- What the applier reads: the rows not applied yet, oldest first.
CREATE INDEX paydesk_push_inbox_waiting ON paydesk_push_inbox (id) WHERE push_id IS NULL;
