-- Every transaction a push adds or changes wrote sixteen index entries,
-- five of them twice over: 0009 made the lists' indexes on (column,
-- created, key) and 0010 the ones the lists use, on (column,
-- coalesce(created, …), key). Where both lead with the same plain column
-- the 0010 index answers everything the 0009 one did (an equality or a
-- range on that column, a sort by it), so the 0009 one goes. Kept: the
-- indexes on plain created (a back-office query by date cannot use the
-- coalesce one) and on reservations' amount (0010 indexes coalesce(amount,
-- 0), which a plain amount condition cannot use).
DROP INDEX IF EXISTS paydesk_transactions_invoice;
DROP INDEX IF EXISTS paydesk_transactions_kind;
DROP INDEX IF EXISTS paydesk_transactions_customer;
DROP INDEX IF EXISTS paydesk_transactions_amount;
DROP INDEX IF EXISTS paydesk_transactions_status;
DROP INDEX IF EXISTS paydesk_reservations_invoice;
DROP INDEX IF EXISTS paydesk_reservations_customer;
DROP INDEX IF EXISTS paydesk_reservations_state;
DROP INDEX IF EXISTS paydesk_reservations_unknown;
DROP INDEX IF EXISTS paydesk_reservations_missing;
