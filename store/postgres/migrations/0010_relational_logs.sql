-- The store's logs, journal and lists as typed relations (issue 25): what
-- the pushes, the rejected requests, the gateway log, the operation
-- journal, the audit log, the webshop orders and the batches hold, in
-- columns a person reads with psql. The relational engine reads and writes
-- these (store/pgrel_logs.go); the records of a database written before
-- them (paydesk_kv's buckets) are copied in once by that engine's first
-- open, resumably (store/pgrel_logs_convert.go), except the audit log,
-- which this step copies itself (below).
--
-- Amounts are numeric without a fixed scale: exactly what the gateway or
-- the operator gave, never rounded on the way in. Times are timestamptz.
-- A push's or an exchange's body is kept as the bytes received (what a
-- signature covers) and, when it is JSON, as jsonb to query.

-- The push log: every push stored, once. A push's identity is its key and
-- the SHA-256 of its content (hash): the same push again is a duplicate
-- and is not stored twice. IDs come from paydesk_seq_pushes (0003).
CREATE TABLE paydesk_pushes (
	id              bigint      PRIMARY KEY,
	received        timestamptz,
	key             text COLLATE "C" NOT NULL,            -- the transaction or data request key
	hash            bytea       NOT NULL CHECK (length(hash) = 32),
	envelope        text        NOT NULL DEFAULT '',      -- DataRequest or Transaction ('' undecoded)
	kind            text        NOT NULL DEFAULT '',      -- action code (data request) or transaction type (C700, V238, …)
	service         text        NOT NULL DEFAULT '',
	invoice         text        NOT NULL DEFAULT '',
	status          integer     NOT NULL DEFAULT 0,       -- the gateway's status code (190 success, 791 pending, …)
	sub_code        text        NOT NULL DEFAULT '',
	status_time     timestamptz,                          -- the status's own DateTime
	currency        text        NOT NULL DEFAULT '',
	amount          numeric     NOT NULL DEFAULT 0,
	has_amount      boolean     NOT NULL DEFAULT false,   -- the push carried an amount
	signature       text        NOT NULL,                 -- the verdict: valid, missing, mismatch, …
	reason          text        NOT NULL DEFAULT '',
	website_key     text        NOT NULL DEFAULT '',
	applied         boolean     NOT NULL DEFAULT false,   -- it changed the store
	ignored         text        NOT NULL DEFAULT '',      -- why it changed nothing
	reservation_key text        NOT NULL DEFAULT '',      -- the reservation it belongs to, if any
	remote_addr     text        NOT NULL DEFAULT '',
	method          text        NOT NULL DEFAULT '',
	url             text        NOT NULL DEFAULT '',
	header          jsonb,                                -- the HTTP header as received (no secret in it)
	body            bytea,                                -- the request body, byte for byte
	push            jsonb,                                -- the body as JSON, NULL when it is not JSON
	UNIQUE (key, hash)
);
CREATE INDEX paydesk_pushes_invoice ON paydesk_pushes (invoice) WHERE invoice <> '';
CREATE INDEX paydesk_pushes_reservation ON paydesk_pushes (reservation_key) WHERE reservation_key <> '';

-- The rejected log: requests the listener refused (bad signature, not a
-- push) and changed nothing with. One entry per source and kind counts
-- its requests (count, first received, last_seen); the body is an excerpt
-- (body_size and hash are the whole body's). IDs from paydesk_seq_rejected.
CREATE TABLE paydesk_rejected (
	id          bigint      PRIMARY KEY,
	received    timestamptz,                          -- the first request of the entry
	last_seen   timestamptz,                          -- the latest
	count       bigint      NOT NULL DEFAULT 0,       -- the requests it stands for
	remote_addr text        NOT NULL DEFAULT '',
	signature   text        NOT NULL DEFAULT '',      -- the verdict
	reason      text        NOT NULL DEFAULT '',      -- which check failed
	website_key text        NOT NULL DEFAULT '',
	method      text        NOT NULL DEFAULT '',
	url         text        NOT NULL DEFAULT '',
	header      jsonb,
	body        bytea,                                -- the first bytes of the body (an excerpt)
	body_size   bigint      NOT NULL DEFAULT 0,
	hash        bytea       NOT NULL,                 -- SHA-256 of the whole body
	-- what could be decoded of it, if anything
	envelope    text        NOT NULL DEFAULT '',
	key         text        NOT NULL DEFAULT '',
	invoice     text        NOT NULL DEFAULT '',
	service     text        NOT NULL DEFAULT '',
	kind        text        NOT NULL DEFAULT '',
	status      integer     NOT NULL DEFAULT 0,
	sub_code    text        NOT NULL DEFAULT '',
	status_time timestamptz,
	currency    text        NOT NULL DEFAULT '',
	amount      numeric     NOT NULL DEFAULT 0,
	has_amount  boolean     NOT NULL DEFAULT false,
	applied     boolean     NOT NULL DEFAULT false,   -- never, for a refused request; kept as the store had it
	ignored     text        NOT NULL DEFAULT '',
	reservation_key text    NOT NULL DEFAULT ''
);

-- Which entry aggregates a group (source host, kind of refusal): the next
-- request of the group adds to it. Gone with its entry.
CREATE TABLE paydesk_rejected_groups (
	source   text   COLLATE "C" NOT NULL, -- the sender's host (an IPv6 sender's /64)
	class    bytea  NOT NULL,             -- the kind of refusal: the verdict, a NUL, the reason's start
	entry_id bigint NOT NULL REFERENCES paydesk_rejected (id) ON DELETE CASCADE,
	PRIMARY KEY (source, class)
);
CREATE INDEX paydesk_rejected_groups_entry ON paydesk_rejected_groups (entry_id);

-- The gateway log: requests paydesk sent and what came back, the newest
-- kept (Options.MaxExchanges). Card PINs are masked before they get here.
-- IDs from paydesk_seq_exchanges.
CREATE TABLE paydesk_exchanges (
	id            bigint      PRIMARY KEY,
	time          timestamptz,
	action        text        NOT NULL DEFAULT '',
	service       text        NOT NULL DEFAULT '',
	method        text        NOT NULL DEFAULT '',
	url           text        NOT NULL DEFAULT '',
	http_status   integer     NOT NULL DEFAULT 0,       -- 0: no answer
	duration_ns   bigint      NOT NULL DEFAULT 0,       -- how long the request took
	duration      interval    GENERATED ALWAYS AS (make_interval(secs => duration_ns / 1e9)) STORED,
	error         text        NOT NULL DEFAULT '',
	request_body  bytea,
	response_body bytea,
	request       jsonb,                                -- the bodies as JSON, NULL when not JSON
	response      jsonb
);

-- The operation journal: every request to the gateway, written before it
-- is sent and settled by its answer or a push. An operation is open while
-- it is pending, sent (answered "pending", a push finishes it) or its
-- outcome is unknown; settled, failed and resolved are final.
CREATE TABLE paydesk_operations (
	id               bigint      PRIMARY KEY,
	created          timestamptz,
	updated          timestamptz,
	operator         text        NOT NULL DEFAULT '',
	action           text        NOT NULL DEFAULT '',  -- Reserve, Pay, Refund, CancelReservation, PayRemainder, …
	service          text        NOT NULL DEFAULT '',
	target           text COLLATE "C" NOT NULL DEFAULT '',  -- a reservation number, the key a refund refunds, or an invoice
	reservation_key  text        NOT NULL DEFAULT '',
	invoice          text        NOT NULL DEFAULT '',
	currency         text        NOT NULL DEFAULT '',
	amount           numeric     NOT NULL DEFAULT 0,
	state            text        NOT NULL CHECK (state IN ('pending', 'sent', 'outcome_unknown', 'settled', 'failed', 'resolved')),
	result_key       text        NOT NULL DEFAULT '',  -- the key the answer or push named
	result_status    integer     NOT NULL DEFAULT 0,
	result_sub_code  text        NOT NULL DEFAULT '',
	result_time      timestamptz,
	reason           text        NOT NULL DEFAULT '',  -- why it failed or why its outcome is unknown
	note             text        NOT NULL DEFAULT '',  -- the operator's note when resolving it by hand
	audit_id         bigint      NOT NULL DEFAULT 0,   -- its entry in paydesk_audit
	lease            bigint      NOT NULL DEFAULT 0,   -- the liveness lock of the process that journaled it
	lines            jsonb,                             -- the returned units a refund pays back
	parcels          jsonb,                             -- what a capture shipped
	request          jsonb                              -- the request as sent, card PINs masked
);
-- One open operation per action and target: a second capture of the same
-- reservation while the first is on its way is refused by the database,
-- whichever console or machine asks.
CREATE UNIQUE INDEX paydesk_operations_one_open ON paydesk_operations (action, target)
	WHERE state IN ('pending', 'sent', 'outcome_unknown') AND target <> '';
-- The open operations, which every push is matched against.
CREATE INDEX paydesk_operations_open ON paydesk_operations (id)
	WHERE state IN ('pending', 'sent', 'outcome_unknown');
CREATE INDEX paydesk_operations_reservation ON paydesk_operations (reservation_key) WHERE reservation_key <> '';

-- Gap-free numbering: the journal's operations, the batches, and the
-- audit log (whose next entry is one more than the greater of its last
-- entry and this). The logs that every push writes use sequences (0003).
CREATE TABLE paydesk_numbers (
	name text   PRIMARY KEY,  -- operations, batches, audit
	last bigint NOT NULL      -- the highest number handed out
);

-- The status bar's counters: pushes and rejected requests ever,
-- reservations and transactions stored. Each database session adds to
-- rows of its own (process: its backend's pid; '' for what a conversion
-- brought), so that listeners do not wait on one row; a figure is the sum
-- of its rows.
CREATE TABLE paydesk_counters (
	name    text   NOT NULL CHECK (name IN ('pushes', 'rejected', 'reservations', 'transactions')),
	process text   NOT NULL DEFAULT '',
	n       bigint NOT NULL DEFAULT 0,
	PRIMARY KEY (name, process)
);

-- Webshop orders: the lines and addresses a Reserve push does not carry,
-- joined to their reservation on the invoice. One per invoice.
CREATE TABLE paydesk_orders (
	invoice            text COLLATE "C" PRIMARY KEY,
	reservation_number text        NOT NULL DEFAULT '',  -- when the shop sent it
	reservation_key    text        NOT NULL DEFAULT '',  -- the reservation it joined, '' while none has
	currency           text        NOT NULL DEFAULT '',
	amount             numeric     NOT NULL DEFAULT 0,   -- the sum of its lines
	customer           text        NOT NULL DEFAULT '',  -- the billing name
	source             text        NOT NULL DEFAULT '',  -- "intake 192.0.2.20:51000", "import orders.csv"
	received           timestamptz,
	hash               text        NOT NULL,             -- its content's SHA-256: the same order twice is one
	articles           jsonb,
	billing            jsonb,
	shipping           jsonb
);
CREATE INDEX paydesk_orders_waiting ON paydesk_orders (invoice) WHERE reservation_key = '';

-- Orders refused because their invoice was known with other lines: kept
-- beside the first for a person to look at, each once.
CREATE TABLE paydesk_order_conflicts (
	invoice            text COLLATE "C" NOT NULL,
	hash               text COLLATE "C" NOT NULL,
	reservation_number text        NOT NULL DEFAULT '',
	reservation_key    text        NOT NULL DEFAULT '',
	currency           text        NOT NULL DEFAULT '',
	amount             numeric     NOT NULL DEFAULT 0,
	customer           text        NOT NULL DEFAULT '',
	source             text        NOT NULL DEFAULT '',
	received           timestamptz,
	articles           jsonb,
	billing            jsonb,
	shipping           jsonb,
	PRIMARY KEY (invoice, hash)
);

-- Batches: runs of a shipment manifest (captures, or cancels of what was
-- not shipped), so a second run or a resume never sends a row twice.
CREATE TABLE paydesk_batches (
	id       text COLLATE "C" PRIMARY KEY,             -- B1, B2, …
	kind     text        NOT NULL CHECK (kind IN ('capture', 'cancel-rest')),
	hash     text        NOT NULL DEFAULT '',          -- the manifest's SHA-256
	source   text        NOT NULL DEFAULT '',          -- the file as given
	operator text        NOT NULL DEFAULT '',
	created  timestamptz,
	late     boolean     NOT NULL DEFAULT false,       -- captures past the 14-day window were confirmed
	rows     integer     NOT NULL DEFAULT 0,
	items    integer     NOT NULL DEFAULT 0,
	total    numeric     NOT NULL DEFAULT 0,
	currency text        NOT NULL DEFAULT ''
);
-- One batch per kind and manifest.
CREATE UNIQUE INDEX paydesk_batches_manifest ON paydesk_batches (kind, hash) WHERE hash <> '';

-- A batch's items: one reservation's capture (or cancel) each, and where
-- it is.
CREATE TABLE paydesk_batch_items (
	batch_id           text COLLATE "C" NOT NULL REFERENCES paydesk_batches (id),
	idx                integer     NOT NULL CHECK (idx >= 0),
	reservation_number text        NOT NULL DEFAULT '',
	invoice            text        NOT NULL DEFAULT '',
	state              text        NOT NULL CHECK (state IN ('', 'planned', 'settled', 'sent', 'failed', 'outcome_unknown', 'refused', 'resolved')), -- '': not set
	amount             numeric     NOT NULL DEFAULT 0,
	currency           text        NOT NULL DEFAULT '',
	rows               integer[],                         -- the manifest's line numbers
	lines              jsonb,
	parcels            jsonb,
	note               text        NOT NULL DEFAULT '',
	rule               text        NOT NULL DEFAULT '',   -- the pre-flight rule that refused it
	message            text        NOT NULL DEFAULT '',
	op_id              bigint      NOT NULL DEFAULT 0,    -- the operation that carried it
	key                text        NOT NULL DEFAULT '',
	updated            timestamptz,
	PRIMARY KEY (batch_id, idx)
);

-- The audit log, a table now (it was a view of paydesk_kv, 0008): one row
-- per entry, never changed or removed. entry is the entry exactly as
-- written — the text its successor's prev hashes and its mac keys — and
-- the columns are read from it, for SQL. An entry that completes another
-- (completes) records how that operation ended. IDs follow each other
-- without a gap: a gap is a removed entry.
CREATE TABLE paydesk_audit_log (
	id        bigint      PRIMARY KEY CHECK (id > 0),
	time      timestamptz NOT NULL,
	operator  text        NOT NULL DEFAULT '',
	action    text        NOT NULL DEFAULT '',
	target    text        NOT NULL DEFAULT '',
	amount    numeric     NOT NULL DEFAULT 0,
	currency  text        NOT NULL DEFAULT '',
	result    text        NOT NULL DEFAULT '',
	reason    text        NOT NULL DEFAULT '',
	op_id     bigint      NOT NULL DEFAULT 0,
	completes bigint      NOT NULL DEFAULT 0,
	prev      text        NOT NULL DEFAULT '',  -- SHA-256 (hex) of the previous entry as written
	key_id    text        NOT NULL DEFAULT '',  -- the audit key it is keyed with ('' before keying)
	mac       text        NOT NULL DEFAULT '',
	entry     json        NOT NULL              -- json, not jsonb: kept byte for byte
);

-- Whoever could write paydesk_audit (the view) may write the table: the
-- grants move with the name (0008's rule: only the role paydesk writes
-- with has INSERT on it).
DO $$
DECLARE
	g record;
BEGIN
	FOR g IN
		SELECT CASE WHEN a.grantee = 0 THEN 'PUBLIC' ELSE quote_ident(r.rolname) END AS who,
			a.privilege_type AS priv, a.is_grantable
		FROM pg_class c
		CROSS JOIN LATERAL aclexplode(c.relacl) a
		LEFT JOIN pg_roles r ON r.oid = a.grantee
		WHERE c.oid = 'paydesk_audit'::regclass AND a.grantee <> c.relowner
			AND a.privilege_type IN ('SELECT', 'INSERT', 'UPDATE', 'DELETE', 'TRUNCATE', 'REFERENCES', 'TRIGGER')
	LOOP
		EXECUTE format('GRANT %s ON paydesk_audit_log TO %s%s', g.priv, g.who,
			CASE WHEN g.is_grantable THEN ' WITH GRANT OPTION' ELSE '' END);
	END LOOP;
END
$$;

-- The entries written so far, in order.
INSERT INTO paydesk_audit_log (id, time, operator, action, target, amount, currency, result, reason, op_id, completes, prev, key_id, mac, entry)
SELECT ('x' || encode(k, 'hex'))::bit(64)::bigint,
	(e->>'Time')::timestamptz,
	coalesce(e->>'Operator', ''), coalesce(e->>'Action', ''), coalesce(e->>'Target', ''),
	coalesce((e->>'Amount')::numeric, 0), coalesce(e->>'Currency', ''), coalesce(e->>'Result', ''),
	coalesce(e->>'Reason', ''), coalesce((e->>'OpID')::bigint, 0), coalesce((e->>'Completes')::bigint, 0),
	coalesce(e->>'Prev', ''), coalesce(e->>'KeyID', ''), coalesce(e->>'MAC', ''),
	raw::json
FROM (
	SELECT k, convert_from(v, 'UTF8') AS raw, convert_from(v, 'UTF8')::jsonb AS e
	FROM paydesk_kv WHERE bucket = convert_to('audit', 'UTF8')
) kv
ORDER BY k;

INSERT INTO paydesk_numbers (name, last)
SELECT 'audit', greatest(coalesce((SELECT seq FROM paydesk_bucket WHERE name = convert_to('audit', 'UTF8')), 0),
	coalesce((SELECT max(id) FROM paydesk_audit_log), 0));

DROP VIEW paydesk_audit;
ALTER TABLE paydesk_audit_log RENAME TO paydesk_audit;
ALTER TABLE paydesk_audit RENAME CONSTRAINT paydesk_audit_log_pkey TO paydesk_audit_pkey;
ALTER TABLE paydesk_audit RENAME CONSTRAINT paydesk_audit_log_id_check TO paydesk_audit_id_check;
REVOKE ALL ON paydesk_audit FROM PUBLIC;

-- The audit log takes inserts only, whoever asks (the table's owner too).
CREATE FUNCTION paydesk_audit_refuse_change() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
	RAISE EXCEPTION 'the audit log takes inserts only: entries are never changed or removed'
		USING ERRCODE = 'insufficient_privilege';
END
$$;

CREATE TRIGGER paydesk_audit_insert_only
	BEFORE UPDATE OR DELETE ON paydesk_audit
	FOR EACH ROW EXECUTE FUNCTION paydesk_audit_refuse_change();
CREATE TRIGGER paydesk_audit_no_truncate
	BEFORE TRUNCATE ON paydesk_audit
	FOR EACH STATEMENT EXECUTE FUNCTION paydesk_audit_refuse_change();

-- While a store still writes its audit entries into paydesk_kv (a paydesk
-- from before the relational engine), each one is added here too, in the
-- same transaction, so the table is the whole log whichever paydesk wrote
-- it. It runs as the writer, who needs INSERT on paydesk_audit for it —
-- the very privilege 0008's trigger asked of it before the row went in.
CREATE FUNCTION paydesk_audit_from_kv() RETURNS trigger LANGUAGE plpgsql AS $$
DECLARE
	raw text := convert_from(NEW.v, 'UTF8');
	e jsonb := raw::jsonb;
BEGIN
	INSERT INTO paydesk_audit (id, time, operator, action, target, amount, currency, result, reason, op_id, completes, prev, key_id, mac, entry)
	VALUES (('x' || encode(NEW.k, 'hex'))::bit(64)::bigint, (e->>'Time')::timestamptz,
		coalesce(e->>'Operator', ''), coalesce(e->>'Action', ''), coalesce(e->>'Target', ''),
		coalesce((e->>'Amount')::numeric, 0), coalesce(e->>'Currency', ''), coalesce(e->>'Result', ''),
		coalesce(e->>'Reason', ''), coalesce((e->>'OpID')::bigint, 0), coalesce((e->>'Completes')::bigint, 0),
		coalesce(e->>'Prev', ''), coalesce(e->>'KeyID', ''), coalesce(e->>'MAC', ''), raw::json);
	RETURN NULL;
END
$$;

CREATE TRIGGER paydesk_audit_from_kv
	AFTER INSERT ON paydesk_kv
	FOR EACH ROW WHEN (NEW.bucket = convert_to('audit', 'UTF8'))
	EXECUTE FUNCTION paydesk_audit_from_kv();

-- What \dt+ and \d+ say in psql.
COMMENT ON TABLE paydesk_pushes IS 'paydesk: the push log, every push stored once; (key, hash) is a push''s identity';
COMMENT ON COLUMN paydesk_pushes.hash IS 'SHA-256 of the push''s content: the same push again is a duplicate';
COMMENT ON COLUMN paydesk_pushes.kind IS 'the action code of a data request, the transaction type (C700, V238, …) of a transaction';
COMMENT ON COLUMN paydesk_pushes.signature IS 'the verdict of its signature: valid, missing, malformed, mismatch, …';
COMMENT ON COLUMN paydesk_pushes.body IS 'the request body byte for byte (what the signature covers)';
COMMENT ON COLUMN paydesk_pushes.push IS 'the body as jsonb; NULL when it is not JSON';
COMMENT ON TABLE paydesk_rejected IS 'paydesk: requests the listener refused, one entry per source and kind of refusal (count, received … last_seen)';
COMMENT ON COLUMN paydesk_rejected.body IS 'the first bytes of the body; body_size and hash are the whole body''s';
COMMENT ON TABLE paydesk_rejected_groups IS 'paydesk: the entry of paydesk_rejected a source''s next refusal of that kind adds to';
COMMENT ON TABLE paydesk_exchanges IS 'paydesk: the gateway log, requests sent and what came back (the newest kept; card PINs masked)';
COMMENT ON TABLE paydesk_operations IS 'paydesk: the journal, every request to the gateway, written before it is sent; one open (pending, sent, outcome_unknown) per action and target';
COMMENT ON COLUMN paydesk_operations.state IS 'pending, sent, outcome_unknown (open); settled, failed, resolved (final)';
COMMENT ON COLUMN paydesk_operations.target IS 'a reservation number, the key a refund refunds, or the invoice of a new payment';
COMMENT ON COLUMN paydesk_operations.request IS 'the request as sent, card PINs masked';
COMMENT ON TABLE paydesk_audit IS 'paydesk: the audit log, inserts only; entry is each entry''s text as written, which prev (the chain) and mac (the key) cover';
COMMENT ON TABLE paydesk_orders IS 'paydesk: webshop orders (the lines and addresses a Reserve push does not carry), one per invoice';
COMMENT ON COLUMN paydesk_orders.reservation_key IS 'the reservation it joined; empty while none has';
COMMENT ON TABLE paydesk_order_conflicts IS 'paydesk: orders refused because their invoice was known with other lines';
COMMENT ON TABLE paydesk_batches IS 'paydesk: runs of a shipment manifest (captures, cancels of what was not shipped), one per kind and manifest';
COMMENT ON TABLE paydesk_batch_items IS 'paydesk: a batch''s items, one reservation''s capture or cancel each, and where it is';
COMMENT ON TABLE paydesk_numbers IS 'paydesk: the last number handed out of the journal, the batches and the audit log';
COMMENT ON TABLE paydesk_counters IS 'paydesk: the status bar''s counters, a row per database session that added; a figure is the sum';

-- What the relational engine's first open still has to copy from
-- paydesk_kv (store/pgrel_logs_convert.go): the step (bucket) it is at and
-- the last key it copied there. A copy cut short goes on from there; the
-- row goes when everything is copied.
CREATE TABLE paydesk_logs_conversion (
	step  integer NOT NULL,
	after bytea             -- the last key copied; NULL: none yet
);
INSERT INTO paydesk_logs_conversion VALUES (0, NULL);

-- The reservation and transaction lists, paged from the ledger's tables
-- (0009) by store/pgrel_page.go: the orders as the lists' position keys
-- have them, where a time or an amount not known sorts first.
CREATE INDEX paydesk_reservations_list_created ON paydesk_reservations ((coalesce(created, '-infinity'::timestamptz)), key);
CREATE INDEX paydesk_reservations_list_invoice ON paydesk_reservations (invoice, (coalesce(created, '-infinity'::timestamptz)), key);
CREATE INDEX paydesk_reservations_list_customer ON paydesk_reservations (customer_sort, (coalesce(created, '-infinity'::timestamptz)), key);
CREATE INDEX paydesk_reservations_list_amount ON paydesk_reservations ((coalesce(amount, 0)), (coalesce(created, '-infinity'::timestamptz)), key);
CREATE INDEX paydesk_reservations_list_state ON paydesk_reservations (state_rank, (coalesce(created, '-infinity'::timestamptz)), key);
CREATE INDEX paydesk_reservations_list_unknown ON paydesk_reservations ((coalesce(created, '-infinity'::timestamptz)), key) WHERE outcome_unknown;
CREATE INDEX paydesk_reservations_list_missing ON paydesk_reservations ((coalesce(created, '-infinity'::timestamptz)), key) WHERE order_missing;
CREATE INDEX paydesk_transactions_list_created ON paydesk_transactions ((coalesce(created, '-infinity'::timestamptz)), key);
CREATE INDEX paydesk_transactions_list_kind ON paydesk_transactions (kind, (coalesce(created, '-infinity'::timestamptz)), key);
CREATE INDEX paydesk_transactions_list_invoice ON paydesk_transactions (invoice, (coalesce(created, '-infinity'::timestamptz)), key);
CREATE INDEX paydesk_transactions_list_customer ON paydesk_transactions (customer_sort, (coalesce(created, '-infinity'::timestamptz)), key);
CREATE INDEX paydesk_transactions_list_amount ON paydesk_transactions (amount, (coalesce(created, '-infinity'::timestamptz)), key);
CREATE INDEX paydesk_transactions_list_status ON paydesk_transactions (status, (coalesce(created, '-infinity'::timestamptz)), key);
