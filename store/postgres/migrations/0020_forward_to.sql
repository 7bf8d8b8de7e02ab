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

-- Every push applied reads it: the roles that may read the stored pushes
-- may read it (a viewer's console shows it), the roles that store them
-- may also set it (the first process given a forward-to does). Without
-- this a database whose roles were granted table by table (README, "A
-- team") would stop applying pushes at this migration.
DO $$
DECLARE
	g record;
BEGIN
	FOR g IN
		SELECT DISTINCT CASE WHEN a.grantee = 0 THEN 'PUBLIC' ELSE quote_ident(r.rolname) END AS who,
			a.privilege_type AS priv
		FROM pg_class c
		CROSS JOIN LATERAL aclexplode(c.relacl) a
		LEFT JOIN pg_roles r ON r.oid = a.grantee
		WHERE c.oid = 'paydesk_pushes'::regclass AND a.grantee <> c.relowner
			AND a.privilege_type IN ('SELECT', 'INSERT')
	LOOP
		EXECUTE format('GRANT %s ON paydesk_forward_to TO %s',
			CASE WHEN g.priv = 'INSERT' THEN 'SELECT, INSERT, DELETE' ELSE 'SELECT' END, g.who);
	END LOOP;
END
$$;
