-- The people who reach paydesk over SSH (issue 27): a name, the role the
-- server grants, the public key they prove themselves with and its SHA256
-- fingerprint, which names one user. Several paydesk serve on one database
-- share them. The bucket engine keeps them in its "users" bucket.
CREATE TABLE paydesk_users (
	name        text COLLATE "C" PRIMARY KEY,
	role        text        NOT NULL,
	key         text        NOT NULL,
	fingerprint text COLLATE "C" NOT NULL UNIQUE,
	added       timestamptz,
	added_by    text        NOT NULL DEFAULT ''
);
INSERT INTO paydesk_bucket (name) VALUES ('users') ON CONFLICT DO NOTHING;
