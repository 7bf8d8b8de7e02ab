-- The push inbox is a queue: every row is inserted, then updated once when
-- it is applied, which leaves a dead version of it and an entry in the
-- index of waiting rows that only VACUUM removes. With the default
-- thresholds (a fifth of the table) a database of a million pushes would
-- carry 200,000 such entries, and the applier's look for waiting rows
-- steps over them (see drain in store/pginbox.go). Vacuum it every few
-- thousand changes instead; each run is small.
ALTER TABLE paydesk_push_inbox SET (
	autovacuum_vacuum_scale_factor = 0,
	autovacuum_vacuum_threshold = 5000,
	autovacuum_vacuum_insert_scale_factor = 0,
	autovacuum_vacuum_insert_threshold = 5000
);
