-- paydesk's store on PostgreSQL: the same buckets of sorted keys as the
-- bbolt file, so the same rules (ledger, journal, pushes) run on both.
CREATE TABLE IF NOT EXISTS paydesk_migrations (
	version    integer PRIMARY KEY,
	name       text NOT NULL,
	applied_at timestamptz NOT NULL DEFAULT now()
);

CREATE TABLE paydesk_bucket (
	name bytea PRIMARY KEY,
	seq  bigint NOT NULL DEFAULT 0
);

CREATE TABLE paydesk_kv (
	bucket bytea NOT NULL REFERENCES paydesk_bucket (name),
	k      bytea NOT NULL,
	v      bytea NOT NULL,
	PRIMARY KEY (bucket, k)
);
