-- The push log is paged newest first over the stored pushes and the
-- rejected log together (store/postgres/pushlog.go): each table is read
-- by keyset in (received, id) order and the two merged, so a page reads
-- its rows and not the whole log. An entry per push, appended at the end
-- as pushes arrive in time order.
CREATE INDEX paydesk_pushes_received ON paydesk_pushes (received, id);
CREATE INDEX paydesk_rejected_received ON paydesk_rejected (received, id);
