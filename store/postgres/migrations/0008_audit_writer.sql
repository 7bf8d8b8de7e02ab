-- Only the role paydesk writes with may add to the audit log (issue 24).
-- Operators' roles write paydesk_kv (the store's records), where the audit
-- entries live too; INSERT on paydesk_kv alone no longer lets a role add an
-- audit entry: it also needs INSERT on paydesk_audit, which the README's
-- roles grant to the role the consoles and the listener use and to no
-- other. (Entries are also keyed with a key the database does not hold, so
-- an entry added with SQL by a role that has the grant still shows in
-- `paydesk audit --verify`; see store/auditkey.go.)
--
-- paydesk_audit is the log as text, for reading with SQL; its columns are
-- expressions, so nothing can be inserted through it: the INSERT privilege
-- on it is what the trigger below asks for.
CREATE VIEW paydesk_audit AS
	SELECT k AS id, convert_from(v, 'UTF8') AS entry
	FROM paydesk_kv WHERE bucket = convert_to('audit', 'UTF8');
REVOKE ALL ON paydesk_audit FROM PUBLIC;

CREATE FUNCTION paydesk_audit_writer_only() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
	IF NOT has_table_privilege(current_user, 'paydesk_audit', 'INSERT') THEN
		RAISE EXCEPTION 'role % may not add to the audit log: it needs INSERT on paydesk_audit (the role paydesk writes with)', current_user
			USING ERRCODE = 'insufficient_privilege';
	END IF;
	RETURN NEW;
END
$$;

CREATE TRIGGER paydesk_audit_writer_only
	BEFORE INSERT ON paydesk_kv
	FOR EACH ROW WHEN (NEW.bucket = convert_to('audit', 'UTF8'))
	EXECUTE FUNCTION paydesk_audit_writer_only();

-- TRUNCATE passes by the row triggers (0002): refuse it on the table that
-- holds the audit log, whoever asks.
REVOKE TRUNCATE ON paydesk_kv FROM PUBLIC;

CREATE FUNCTION paydesk_kv_no_truncate() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
	RAISE EXCEPTION 'paydesk_kv holds the audit log, which takes inserts only: it is never truncated'
		USING ERRCODE = 'insufficient_privilege';
END
$$;

CREATE TRIGGER paydesk_kv_no_truncate
	BEFORE TRUNCATE ON paydesk_kv
	FOR EACH STATEMENT EXECUTE FUNCTION paydesk_kv_no_truncate();
