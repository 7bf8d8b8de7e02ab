-- The ledger as relations (issue 25): reservations, their article lines,
-- transactions, the owners of gateway keys and the data requests that came
-- before their reservation, one typed row each, for the store's rules and
-- for people reading the database with SQL. Money is numeric(14,2) and
-- reads as `paydesk show` prints it (12.50); times are timestamptz (NULL:
-- not known); keys and anything that sorts are text in the "C" collation,
-- so they compare byte by byte, as the file's indexes do, whatever the
-- database's collation. What has no column of its own (the Reserve as
-- sent, the update history, addresses) is jsonb.
--
-- A database written before (the buckets of paydesk_kv, layout 7) is
-- converted into these tables by the first paydesk that opens it, in
-- chunks: paydesk_ledger_conversion below says how far it got.

-- One row per reservation: its Reserve data request's key, what the
-- gateway and the shop said of it, and its ledger as `paydesk show` shows
-- it (amount reserved, captured, refunded, remaining). The amounts are
-- derived from the lines and the transactions each time the reservation
-- is written, in the same transaction.
CREATE TABLE paydesk_reservations (
	key                text COLLATE "C" PRIMARY KEY, -- the Reserve data request's key
	reservation_number text COLLATE "C" NOT NULL DEFAULT '', -- '' until the customer approved
	invoice            text COLLATE "C" NOT NULL DEFAULT '',
	state              text NOT NULL,     -- awaiting_customer, reserved, partly_captured, captured, cancelled, closed, declined
	state_rank         smallint NOT NULL, -- the life cycle's order of state (the list sorts by it)
	status        integer NOT NULL DEFAULT 0, -- the Reserve's status: 791 awaiting the customer, 190, 690 …
	sub_code     text NOT NULL DEFAULT '',
	status_time        timestamptz,
	amount             numeric(14,2),          -- reserved; NULL when its lines are not known (its order never arrived)
	captured           numeric(14,2) NOT NULL, -- successful captures, as the gateway booked them
	refunded           numeric(14,2) NOT NULL, -- successful refunds against those captures
	remaining          numeric(14,2),          -- what can still be captured; NULL when unknown (lines not known, still open)
	unsplit_captured   numeric(14,2) NOT NULL DEFAULT 0, -- captured elsewhere, lines not told by the amount
	currency           text NOT NULL DEFAULT '',
	customer           text NOT NULL DEFAULT '',
	customer_sort      text COLLATE "C" NOT NULL DEFAULT '', -- customer in lower case: the list's sort key
	email              text NOT NULL DEFAULT '',
	country            text NOT NULL DEFAULT '',
	is_test            boolean NOT NULL DEFAULT false,
	created            timestamptz, -- the reservation date (the earliest status of its Reserve)
	updated            timestamptz, -- its last change in the store
	lines_known        boolean NOT NULL, -- false: seen only in a push; its lines (paydesk_lines) are not known
	cancelled          boolean NOT NULL DEFAULT false, -- a CancelReservation succeeded
	captured_in_full   boolean NOT NULL DEFAULT false, -- a full capture succeeded on unknown lines
	outcome_unknown    boolean NOT NULL DEFAULT false, -- an operation on it has an unknown outcome (unknown_ops)
	order_missing      boolean NOT NULL DEFAULT false, -- its order or its Reserve push has not arrived
	order_source       text NOT NULL DEFAULT '', -- where its lines came from when the webshop's order brought them
	redirect_url       text NOT NULL DEFAULT '',
	invoice_numbers    text[],   -- the provider's invoice numbers of its captures
	transaction_keys   text[],   -- its captures and refunds (paydesk_transactions), in the order they were linked
	unknown_ops        bigint[], -- the journal's operations whose outcome is unknown
	search             text NOT NULL, -- folded search text ("muller" finds "Müller"), fields separated by 0x01
	billing            jsonb NOT NULL, -- the addresses as they stand after updates
	shipping           jsonb NOT NULL,
	reserve            jsonb NOT NULL, -- what the Reserve sent: articles and addresses
	requests           jsonb          -- its data requests (Reserve, cancels, updates with what they asked), first seen first
);

CREATE INDEX paydesk_reservations_number ON paydesk_reservations (reservation_number) WHERE reservation_number <> '';
-- Look-ups by invoice (the newest reservation with it wins).
CREATE INDEX paydesk_reservations_invoice ON paydesk_reservations (invoice, created, key);
-- The reservation list's orders and filters.
CREATE INDEX paydesk_reservations_created ON paydesk_reservations (created, key);
CREATE INDEX paydesk_reservations_customer ON paydesk_reservations (customer_sort, created, key);
CREATE INDEX paydesk_reservations_amount ON paydesk_reservations (amount NULLS FIRST, created, key);
CREATE INDEX paydesk_reservations_state ON paydesk_reservations (state_rank, created, key);
CREATE INDEX paydesk_reservations_unknown ON paydesk_reservations (created, key) WHERE outcome_unknown;
CREATE INDEX paydesk_reservations_missing ON paydesk_reservations (created, key) WHERE order_missing;
CREATE INDEX paydesk_reservations_search ON paydesk_reservations USING gin (search gin_trgm_ops);

-- The article lines of a reservation whose lines are known, in its order
-- (position from 0), with the ledger in units: reserved (after updates),
-- captured, cancelled, refunded; remaining is what can still be captured.
-- Prices are per unit, VAT included; negative for a discount.
CREATE TABLE paydesk_lines (
	reservation_key    text COLLATE "C" NOT NULL REFERENCES paydesk_reservations (key) ON DELETE CASCADE,
	position           integer NOT NULL,
	reservation_number text COLLATE "C" NOT NULL DEFAULT '', -- the reservation's, for reading
	article_number     text NOT NULL DEFAULT '',
	title              text NOT NULL DEFAULT '',
	type               text NOT NULL DEFAULT '', -- General, ShipmentFee, HandlingFee or ''
	price              numeric(14,2) NOT NULL,
	vat                numeric(5,2) NOT NULL, -- percent
	reserved           integer NOT NULL,
	captured           integer NOT NULL,
	cancelled          integer NOT NULL,
	refunded           integer NOT NULL,
	remaining          integer GENERATED ALWAYS AS (greatest(reserved - captured - cancelled, 0)) STORED,
	PRIMARY KEY (reservation_key, position)
);

CREATE INDEX paydesk_lines_number ON paydesk_lines (reservation_number) WHERE reservation_number <> '';

-- One row per transaction: captures and refunds of reservations
-- (deferred invoice, C700/C701) and gift card payments and refunds
-- (V238/V239), with the last status stored for it. A refund names the
-- payment it refunds (original); refunded is what successful refunds took
-- back from a payment.
CREATE TABLE paydesk_transactions (
	key                text COLLATE "C" PRIMARY KEY,
	kind               text COLLATE "C" NOT NULL, -- capture, refund, giftcard_pay, giftcard_remainder, giftcard_refund, unknown
	transaction_type   text NOT NULL DEFAULT '', -- C700, C701, V238, V239
	service            text NOT NULL DEFAULT '',
	status        integer NOT NULL DEFAULT 0,
	sub_code     text NOT NULL DEFAULT '',
	status_time        timestamptz,
	amount             numeric(14,2) NOT NULL, -- debited for a payment, credited for a refund
	currency           text NOT NULL DEFAULT '',
	invoice            text COLLATE "C" NOT NULL DEFAULT '',
	is_test            boolean NOT NULL DEFAULT false,
	reservation_key    text COLLATE "C" NOT NULL DEFAULT '', -- its reservation (paydesk_reservations.key), '' for none
	reservation_number text COLLATE "C" NOT NULL DEFAULT '',
	original           text COLLATE "C" NOT NULL DEFAULT '', -- a refund: the payment it refunds
	grp                text COLLATE "C" NOT NULL DEFAULT '', -- a gift card payment's partial payment group
	invoice_number     text NOT NULL DEFAULT '', -- the provider's invoice of a capture
	payment_key        text NOT NULL DEFAULT '',
	refunded           numeric(14,2) NOT NULL DEFAULT 0, -- a payment: what successful refunds took back
	refunds            text[], -- a payment: its refunds' keys
	full_capture       boolean NOT NULL DEFAULT false, -- a capture of all that remained
	provider           text NOT NULL DEFAULT '',
	has_contact        boolean NOT NULL DEFAULT false,
	remainder_amount   numeric(14,2) NOT NULL DEFAULT 0,
	customer           text NOT NULL DEFAULT '',
	customer_sort      text COLLATE "C" NOT NULL DEFAULT '', -- customer in lower case: the list's sort key
	op_id              bigint NOT NULL DEFAULT 0, -- the journal's operation that sent it, 0 for none
	order_ref          text NOT NULL DEFAULT '', -- the merchant's Order as the gateway echoed it
	created            timestamptz,
	updated            timestamptz,
	search             text NOT NULL, -- folded search text, fields separated by 0x01
	lines              jsonb, -- a capture's articles and quantities (NULL: not known, [] none named)
	parcels            jsonb, -- the parcels a capture shipped
	related            jsonb, -- RelatedTransactions as the gateway sent them
	additional         jsonb, -- AdditionalParameters as echoed
	custom             jsonb  -- CustomParameters as echoed
);

-- The refunds of a payment.
CREATE INDEX paydesk_transactions_original ON paydesk_transactions (original, key) WHERE original <> '';
-- A reservation's transactions.
CREATE INDEX paydesk_transactions_reservation ON paydesk_transactions (reservation_key) WHERE reservation_key <> '';
-- Look-ups by invoice (captures and refunds that came before their reservation).
CREATE INDEX paydesk_transactions_invoice ON paydesk_transactions (invoice, created, key);
-- The transaction list's orders and filters.
CREATE INDEX paydesk_transactions_created ON paydesk_transactions (created, key);
CREATE INDEX paydesk_transactions_kind ON paydesk_transactions (kind, created, key);
CREATE INDEX paydesk_transactions_customer ON paydesk_transactions (customer_sort, created, key);
CREATE INDEX paydesk_transactions_amount ON paydesk_transactions (amount, created, key);
CREATE INDEX paydesk_transactions_status ON paydesk_transactions (status, created, key);
CREATE INDEX paydesk_transactions_grp ON paydesk_transactions (grp) WHERE grp <> '';
CREATE INDEX paydesk_transactions_search ON paydesk_transactions USING gin (search gin_trgm_ops);

-- Which reservation a gateway key belongs to: its data requests' keys
-- (Reserve, cancels, updates) and its transactions' keys. A push names
-- only its own key; this finds the reservation it is about.
CREATE TABLE paydesk_key_owners (
	key             text COLLATE "C" PRIMARY KEY,
	reservation_key text COLLATE "C" NOT NULL
);

CREATE INDEX paydesk_key_owners_reservation ON paydesk_key_owners (reservation_key);

-- Which reservation a reservation number names: the one put last with it.
-- The gateway never gives a number twice; should a push claim a number
-- another reservation has, the number leads to the newer one, as it does
-- on a file, and both keep it in reservation_number.
CREATE TABLE paydesk_reservation_numbers (
	reservation_number text COLLATE "C" PRIMARY KEY,
	reservation_key    text COLLATE "C" NOT NULL
);

CREATE INDEX paydesk_reservation_numbers_reservation ON paydesk_reservation_numbers (reservation_key);

-- Which refunds refund a payment (a capture, a gift card payment): the
-- refund's transaction row names its original too, but the link is
-- recorded as soon as a refund is known, even before its own row.
CREATE TABLE paydesk_refunds (
	original text COLLATE "C" NOT NULL, -- the payment's key
	refund   text COLLATE "C" NOT NULL, -- the refund's key
	PRIMARY KEY (original, refund)
);

-- Data request pushes (a cancel, an update) whose reservation is not in the
-- store yet: they join the reservation with their invoice when it arrives,
-- and leave this table then.
CREATE TABLE paydesk_orphan_requests (
	key                text COLLATE "C" PRIMARY KEY,
	invoice            text COLLATE "C" NOT NULL DEFAULT '',
	reservation_number text COLLATE "C" NOT NULL DEFAULT '',
	action             text NOT NULL DEFAULT '', -- CancelReservation, UpdateReservation …
	status        integer NOT NULL DEFAULT 0,
	sub_code     text NOT NULL DEFAULT '',
	status_time        timestamptz,
	op_id              bigint NOT NULL DEFAULT 0,
	update             jsonb -- what an update asked for, when paydesk sent it
);

CREATE INDEX paydesk_orphan_requests_invoice ON paydesk_orphan_requests (invoice) WHERE invoice <> '';

-- What psql shows (\dt+, \d+) of each relation and of the columns whose
-- name does not say it all.
COMMENT ON TABLE paydesk_reservations IS 'paydesk: one row per reservation (key: its Reserve''s key) with its ledger as paydesk show shows it';
COMMENT ON COLUMN paydesk_reservations.state IS 'awaiting_customer, reserved, partly_captured, captured, cancelled, closed, declined';
COMMENT ON COLUMN paydesk_reservations.amount IS 'reserved: the lines at their current quantities; NULL while the lines are not known';
COMMENT ON COLUMN paydesk_reservations.captured IS 'successful captures, as the gateway booked them';
COMMENT ON COLUMN paydesk_reservations.refunded IS 'successful refunds against its captures';
COMMENT ON COLUMN paydesk_reservations.remaining IS 'what can still be captured; NULL when unknown (lines not known, still open)';
COMMENT ON COLUMN paydesk_reservations.created IS 'the reservation date (its Reserve''s earliest status)';
COMMENT ON COLUMN paydesk_reservations.lines_known IS 'false: seen only in a push, its order never arrived; no lines';
COMMENT ON COLUMN paydesk_reservations.outcome_unknown IS 'an operation on it has an unknown outcome (unknown_ops)';
COMMENT ON COLUMN paydesk_reservations.search IS 'folded search text of the list filter, fields separated by 0x01';
COMMENT ON COLUMN paydesk_reservations.reserve IS 'what the Reserve sent: articles and addresses';
COMMENT ON COLUMN paydesk_reservations.requests IS 'its data requests (Reserve, cancels, updates with what they asked), first seen first';
COMMENT ON TABLE paydesk_lines IS 'paydesk: the article lines of a reservation, with the ledger in units';
COMMENT ON COLUMN paydesk_lines.price IS 'per unit, VAT included; negative for a discount';
COMMENT ON TABLE paydesk_transactions IS 'paydesk: captures and refunds of reservations, gift card payments and refunds, with their last status';
COMMENT ON COLUMN paydesk_transactions.original IS 'a refund: the key of the payment it refunds';
COMMENT ON COLUMN paydesk_transactions.refunded IS 'a payment: what successful refunds took back';
COMMENT ON TABLE paydesk_refunds IS 'paydesk: which refunds refund a payment';
COMMENT ON TABLE paydesk_key_owners IS 'paydesk: the reservation a data request''s or transaction''s key belongs to';
COMMENT ON TABLE paydesk_reservation_numbers IS 'paydesk: the reservation a reservation number leads to (the last put with it)';
COMMENT ON TABLE paydesk_orphan_requests IS 'paydesk: cancel and update pushes whose reservation has not arrived yet';

-- The conversion of the ledger kept in paydesk_kv (layout 7) into the
-- tables above: while this row exists it is not done; step and after say
-- where the next chunk starts (the bucket being copied and the last key
-- copied). Each chunk moves it in the transaction that writes its rows,
-- so a conversion cut short goes on where it stopped.
CREATE TABLE paydesk_ledger_conversion (
	pending boolean PRIMARY KEY DEFAULT true CHECK (pending),
	step    integer NOT NULL DEFAULT 0,
	after   bytea
);
INSERT INTO paydesk_ledger_conversion DEFAULT VALUES;
