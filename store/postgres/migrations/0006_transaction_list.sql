-- The transaction list, paged and filtered in the database like the
-- reservation list (0005, pagepg.go): one row per transaction, written in
-- the same transaction as its record in paydesk_kv, with the sort columns,
-- the gift card group and the folded search text indexed.
CREATE TABLE paydesk_txlist (
	k        bytea  PRIMARY KEY,
	created  bigint NOT NULL, -- Unix nanoseconds
	kind     bytea  NOT NULL,
	invoice  bytea  NOT NULL,
	customer bytea  NOT NULL, -- lower-case
	amount   bigint NOT NULL, -- cents
	status   bigint NOT NULL, -- the gateway's status code
	grp      bytea  NOT NULL, -- the gift card group, empty for none
	search   text   NOT NULL, -- folded: "muller" finds "Müller"
	v        bytea  NOT NULL  -- the transaction as in paydesk_kv
);

CREATE INDEX paydesk_txlist_created ON paydesk_txlist (created, k);
CREATE INDEX paydesk_txlist_kind ON paydesk_txlist (kind, created, k);
CREATE INDEX paydesk_txlist_invoice ON paydesk_txlist (invoice, created, k);
CREATE INDEX paydesk_txlist_customer ON paydesk_txlist (customer, created, k);
CREATE INDEX paydesk_txlist_amount ON paydesk_txlist (amount, created, k);
CREATE INDEX paydesk_txlist_status ON paydesk_txlist (status, created, k);
CREATE INDEX paydesk_txlist_grp ON paydesk_txlist (grp) WHERE grp <> '';
CREATE INDEX paydesk_txlist_search ON paydesk_txlist USING gin (search gin_trgm_ops);

-- The transactions stored before this table are copied in by the first
-- paydesk that opens the database; this row says it has not happened yet.
CREATE TABLE paydesk_txlist_fill (pending boolean PRIMARY KEY);
INSERT INTO paydesk_txlist_fill VALUES (true);
