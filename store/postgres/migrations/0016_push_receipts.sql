-- Repeated receipts of a push (issue 26, store/receipts.go): a push the
-- gateway delivers again is stored once; each repeat is counted here
-- against the push's identity (key, hash — the push log's and the inbox's
-- notion of "the same push"), with the first and latest repeat and the
-- newest repeats in full (recent: [{at, remote, sig}], oldest first,
-- bounded by the writers). The first receipt is the push log's own row,
-- so a push received once has no row here. Keyed by identity rather than
-- push ID because a listener records a repeat when the inbox refuses it,
-- before the push it repeats may have been applied.
CREATE TABLE paydesk_push_receipts (
	key      text COLLATE "C" NOT NULL,
	hash     bytea       NOT NULL CHECK (length(hash) = 32),
	count    bigint      NOT NULL,   -- repeats ever recorded
	first_at timestamptz,            -- the first repeat
	last_at  timestamptz,            -- the latest
	recent   jsonb       NOT NULL DEFAULT '[]',
	PRIMARY KEY (key, hash)
);
