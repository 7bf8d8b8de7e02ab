-- The logs that every push writes (pushes, rejected requests, the gateway
-- log) number their entries from sequences: nextval does not wait for other
-- transactions, so several listeners do not queue on one counter row. A
-- number taken by a transaction that rolled back is skipped (these logs are
-- not checked for gaps; the audit log and the journal keep their counters
-- in paydesk_bucket, gap-free).
CREATE SEQUENCE paydesk_seq_pushes;
CREATE SEQUENCE paydesk_seq_rejected;
CREATE SEQUENCE paydesk_seq_exchanges;

SELECT setval('paydesk_seq_pushes', seq, true) FROM paydesk_bucket WHERE name = convert_to('pushes', 'UTF8') AND seq > 0;
SELECT setval('paydesk_seq_rejected', seq, true) FROM paydesk_bucket WHERE name = convert_to('rejected', 'UTF8') AND seq > 0;
SELECT setval('paydesk_seq_exchanges', seq, true) FROM paydesk_bucket WHERE name = convert_to('exchanges', 'UTF8') AND seq > 0;
