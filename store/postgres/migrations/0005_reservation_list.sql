-- The reservation list, paged and filtered in the database (pagepg.go): one
-- row per summary, written in the same transaction as the summary in
-- paydesk_kv, with the sort columns and the folded search text indexed.
-- Strings that sort are bytea, compared byte by byte like the bbolt
-- indexes, whatever the database's collation.
CREATE EXTENSION IF NOT EXISTS pg_trgm;

CREATE TABLE paydesk_summary (
	k        bytea PRIMARY KEY,
	created  bigint   NOT NULL, -- Unix nanoseconds
	invoice  bytea    NOT NULL,
	customer bytea    NOT NULL, -- lower-case
	amount   bigint   NOT NULL, -- cents
	state    smallint NOT NULL, -- the life cycle's order
	unknown  boolean  NOT NULL, -- an operation's outcome is unknown
	missing  boolean  NOT NULL, -- its order or its push is missing (OrderMissing)
	search   text     NOT NULL, -- folded: "muller" finds "Müller"
	v        bytea    NOT NULL  -- the summary as in paydesk_kv
);

CREATE INDEX paydesk_summary_created ON paydesk_summary (created, k);
CREATE INDEX paydesk_summary_invoice ON paydesk_summary (invoice, created, k);
CREATE INDEX paydesk_summary_customer ON paydesk_summary (customer, created, k);
CREATE INDEX paydesk_summary_amount ON paydesk_summary (amount, created, k);
CREATE INDEX paydesk_summary_state ON paydesk_summary (state, created, k);
CREATE INDEX paydesk_summary_unknown ON paydesk_summary (created, k) WHERE unknown;
CREATE INDEX paydesk_summary_missing ON paydesk_summary (created, k) WHERE missing;
CREATE INDEX paydesk_summary_search ON paydesk_summary USING gin (search gin_trgm_ops);

-- The summaries stored before this table are copied in by the first
-- paydesk that opens the database (it decodes them); this row says it has
-- not happened yet.
CREATE TABLE paydesk_summary_fill (pending boolean PRIMARY KEY);
INSERT INTO paydesk_summary_fill VALUES (true);
