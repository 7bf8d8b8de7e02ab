-- The shop endpoints every push is delivered to (issue 26), kept in the
-- database so that every process sharing it forwards alike: the push's
-- own transaction reads them when it records its deliveries
-- (store/postgres/outbox.go), whichever process applies it. Set with
-- `paydesk forward-to set URL…`, or by the first process started with a
-- forward-to; a process started with other ones is refused.
CREATE TABLE paydesk_forward_to (
	position integer PRIMARY KEY,              -- 1, 2, …: the order they were given in
	endpoint text    NOT NULL UNIQUE           -- the shop's URL, as given (with its password, if any)
);
