-- The audit log takes inserts only: nobody — not an operator's role, not
-- paydesk itself — can change or remove an entry once it is written. (Its
-- entries also chain by hash; `paydesk audit --verify` checks the chain.)
CREATE FUNCTION paydesk_audit_insert_only() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
	IF OLD.bucket = convert_to('audit', 'UTF8') THEN
		RAISE EXCEPTION 'the audit log takes inserts only: entries are never changed or removed'
			USING ERRCODE = 'insufficient_privilege';
	END IF;
	IF TG_OP = 'DELETE' THEN
		RETURN OLD;
	END IF;
	RETURN NEW;
END
$$;

CREATE TRIGGER paydesk_audit_insert_only
	BEFORE UPDATE OR DELETE ON paydesk_kv
	FOR EACH ROW EXECUTE FUNCTION paydesk_audit_insert_only();
