# scripts/services.d/postgres-tls.sh - TLS and password authentication on
# our PostgreSQL (127.0.0.1:15432), for the driver's TLS tests, sourced by
# scripts/services.sh (see the comment above extra_each there).
#
# Once our postgres answers (its "wait" runs after PostgreSQL's), it makes a
# CA and a server certificate for 127.0.0.1 with openssl under
# $STATE/postgres/tls/ (ca.pem, and server.crt/server.key in the data dir),
# turns ssl on with ALTER SYSTEM (a reload suffices since PostgreSQL 10),
# creates the role distlock_tls with a password (test-only) and lets it in
# over TLS with SCRAM only (pg_hba: hostssl ... scram-sha-256, hostnossl ...
# reject), then reloads. Every other connection stays as it was (trust,
# sslmode=disable). Idempotent: each `up` checks and redoes what is missing.
# DISTLOCK_POSTGRES_TLS_DSN in env: sslmode=verify-full with the CA.

EXTRA_SERVICES+=(pgtls)

readonly PGTLS_DIR=$PG_DIR/tls
readonly PGTLS_USER=distlock_tls
readonly PGTLS_PASSWORD=distlock-tls-test-password

pgtls_prepare() {
	command -v openssl >/dev/null 2>&1 || apt_install openssl
}

pgtls_certs() {
	[[ -f $PG_DATA/server.crt && -f $PG_DATA/server.key && -f $PGTLS_DIR/ca.pem ]] && return 0
	tls_certs "$PGTLS_DIR" "distlock test CA"
	install -m 0600 "$PGTLS_DIR/server.crt" "$PG_DATA/server.crt"
	install -m 0600 "$PGTLS_DIR/server.key" "$PG_DATA/server.key"
	if [[ $EUID -eq 0 ]]; then
		chown "$(stat -c %U "$PG_DATA"):" "$PG_DATA/server.crt" "$PG_DATA/server.key"
	fi
}

pgtls_wait() {
	pgtls_certs
	local hba=$PG_DATA/pg_hba.conf
	if ! grep -q "^hostssl all $PGTLS_USER " "$hba"; then
		# First match wins: these two go before initdb's trust lines.
		{
			printf 'hostnossl all %s %s/32 reject\n' "$PGTLS_USER" "$HOST"
			printf 'hostssl all %s %s/32 scram-sha-256\n' "$PGTLS_USER" "$HOST"
			cat "$hba"
		} >"$hba.new" && cat "$hba.new" >"$hba" && rm -f "$hba.new"
	fi
	pg_psql >/dev/null <<SQL || die "postgres: TLS settings"
\\connect $PG_DB
ALTER SYSTEM SET ssl = on;
ALTER SYSTEM SET ssl_cert_file = 'server.crt';
ALTER SYSTEM SET ssl_key_file = 'server.key';
ALTER SYSTEM SET password_encryption = 'scram-sha-256';
SELECT pg_reload_conf();
DO \$\$ BEGIN
  IF NOT EXISTS (SELECT FROM pg_roles WHERE rolname = '$PGTLS_USER') THEN
    CREATE ROLE $PGTLS_USER LOGIN;
  END IF;
END \$\$;
ALTER ROLE $PGTLS_USER PASSWORD '$PGTLS_PASSWORD';
GRANT ALL ON DATABASE $PG_DB TO $PGTLS_USER;
GRANT ALL ON SCHEMA public TO $PGTLS_USER;
SQL
	pg_psql -c "SELECT pg_reload_conf()" >/dev/null || die "postgres: reload"
}

pgtls_env() {
	printf 'export DISTLOCK_POSTGRES_TLS_DSN=%s\n' \
		"$(shell_quote "postgres://$PGTLS_USER:$PGTLS_PASSWORD@$HOST:$PG_PORT/$PG_DB?sslmode=verify-full&sslrootcert=$PGTLS_DIR/ca.pem")"
}
