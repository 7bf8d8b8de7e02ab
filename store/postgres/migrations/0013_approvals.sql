-- Four-eyes approval requests (store/approvals.go): a refund above the
-- approval threshold waits here for another user to approve or deny it.
-- The native engine keeps one typed row per request; the kv engine keeps
-- them in its 'approvals' bucket. request is the operation as paydesk
-- wrote it (run again on approval); state 'expired' is never stored: a
-- pending request past expires reads as expired.
CREATE TABLE paydesk_approvals (
	id             bigint      PRIMARY KEY,
	created        timestamptz,
	expires        timestamptz,
	requester      text        NOT NULL,
	requester_role text        NOT NULL DEFAULT '',
	requested_by   text        NOT NULL DEFAULT '',
	kind           text        NOT NULL,
	target         text        NOT NULL DEFAULT '',
	amount         numeric     NOT NULL DEFAULT 0,
	currency       text        NOT NULL DEFAULT '',
	note           text        NOT NULL DEFAULT '',
	request        jsonb       NOT NULL,
	state          text        NOT NULL CHECK (state IN ('pending', 'approved', 'denied')),
	decider        text        NOT NULL DEFAULT '',
	decided        timestamptz,
	reason         text        NOT NULL DEFAULT '',
	op_id          bigint      NOT NULL DEFAULT 0,
	result         text        NOT NULL DEFAULT '',
	-- Nobody decides their own request, whoever writes the row.
	CHECK (decider = '' OR lower(decider) <> lower(requester))
);
-- The Approvals view and the Attention row read the pending ones.
CREATE INDEX paydesk_approvals_pending ON paydesk_approvals (id) WHERE state = 'pending';
