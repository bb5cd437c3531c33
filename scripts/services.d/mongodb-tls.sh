# scripts/services.d/mongodb-tls.sh - a second FerretDB, with TLS and a
# password checked, for drivers/mongodb's TLS test, sourced by
# scripts/services.sh (see the comment above extra_each there).
#
#   listens  TLS only, on 127.0.0.1:27217 (27018 and 27019 are mongod's
#            shard and config server defaults), with a server certificate for
#            127.0.0.1 from a CA that openssl makes here
#   backend  our PostgreSQL (127.0.0.1:15432), database distlock_mongo,
#            owned by the role distlock_mongo (password: test-only)
#   state    $STATE/mongodb-tls/{ferretdb.pid,ferretdb.log,tls/}, its cwd;
#            tls/ca.pem is the CA the clients trust
#   env      DISTLOCK_MONGODB_TLS_URI: mongodb://distlock_mongo:...@.../
#            with tls=true, tlsCAFile and authMechanism=PLAIN
#
# Why PostgreSQL: FerretDB v1.24.2 checks no password itself. Clients
# authenticate with PLAIN, whose credentials it keeps unchecked; its SQLite
# backend ignores them, its PostgreSQL backend logs in to PostgreSQL with
# them (drivers/mongodb/DESIGN.md, "TLS and passwords", has the source). So
# pg_hba.conf asks distlock_mongo for its password (scram-sha-256) on TCP,
# ahead of initdb's trust lines, and FerretDB's own URL names that role with
# no password, so a client that sends no credentials is refused as well.
#
# It runs the FerretDB runner that services.sh builds (scripts/ferretdb), in
# its own dir. Start-up needs no PostgreSQL (FerretDB connects when a client
# asks); mongotls_wait, which runs after PostgreSQL's, creates the role and
# the database, adds the pg_hba line and reloads. Idempotent: each `up` redoes
# what is missing; `down` stops the process by its pidfile.

EXTRA_SERVICES+=(mongotls)

readonly MONGOTLS_DIR=$STATE/mongodb-tls
readonly MONGOTLS_CERTS=$MONGOTLS_DIR/tls
readonly MONGOTLS_USER=distlock_mongo # PostgreSQL role, and MongoDB user
readonly MONGOTLS_PASSWORD=distlock-mongo-test-password
readonly MONGOTLS_DB=distlock_mongo # PostgreSQL database FerretDB keeps its data in
MONGOTLS_STARTED=""

mongotls_prepare() {
	command -v openssl >/dev/null 2>&1 || apt_install openssl
}

# mongotls_our_pid: true (and OUR_PID set) if our pidfile names a live
# FerretDB runner whose cwd is our dir.
mongotls_our_pid() {
	OUR_PID=""
	read_pid "$MONGOTLS_DIR/ferretdb.pid"
	[[ -n $PID_READ ]] && pid_is_ours "$PID_READ" "$FERRET_COMM" "$MONGOTLS_DIR" || return 1
	OUR_PID=$PID_READ
}

mongotls_preflight() {
	mongotls_our_pid || ! port_open "$MONGOTLS_PORT" ||
		port_conflict "$MONGOTLS_PORT" "no live pidfile in $MONGOTLS_DIR"
}

mongotls_start() {
	MONGOTLS_STARTED=""
	mongotls_our_pid && return 0
	rm -f "$MONGOTLS_DIR/ferretdb.pid"
	port_open "$MONGOTLS_PORT" && port_conflict "$MONGOTLS_PORT" "no live pidfile in $MONGOTLS_DIR"
	tls_certs "$MONGOTLS_CERTS" "distlock test CA (mongodb)"
	(cd "$MONGOTLS_DIR" && exec setsid "$FERRET_BIN" -listen "" -listen-tls "$HOST:$MONGOTLS_PORT" \
		-tls-cert tls/server.crt -tls-key tls/server.key -handler postgresql \
		-postgresql-url "postgres://$MONGOTLS_USER@$HOST:$PG_PORT/$MONGOTLS_DB?sslmode=disable" \
		-log-level error -pidfile ferretdb.pid 9>&- </dev/null >>ferretdb.log 2>&1 &)
	MONGOTLS_STARTED=1
}

# mongotls_postgres: the role (with its password), its database and its
# pg_hba line in our PostgreSQL, then a reload.
mongotls_postgres() {
	local hba=$PG_DATA/pg_hba.conf
	if ! grep -q "^host all $MONGOTLS_USER " "$hba"; then
		# First match wins: this goes before initdb's trust lines.
		{
			printf 'host all %s %s/32 scram-sha-256\n' "$MONGOTLS_USER" "$HOST"
			cat "$hba"
		} >"$hba.new" && cat "$hba.new" >"$hba" && rm -f "$hba.new"
	fi
	pg_psql >/dev/null <<SQL || die "postgres: role $MONGOTLS_USER"
SET password_encryption = 'scram-sha-256';
DO \$\$ BEGIN
  IF NOT EXISTS (SELECT FROM pg_roles WHERE rolname = '$MONGOTLS_USER') THEN
    CREATE ROLE $MONGOTLS_USER LOGIN;
  END IF;
END \$\$;
ALTER ROLE $MONGOTLS_USER PASSWORD '$MONGOTLS_PASSWORD';
SELECT pg_reload_conf();
SQL
	if [[ $(pg_psql -tAc "SELECT 1 FROM pg_database WHERE datname = '$MONGOTLS_DB'") != 1 ]]; then
		pg_psql -c "CREATE DATABASE $MONGOTLS_DB OWNER $MONGOTLS_USER" >/dev/null ||
			die "postgres: database $MONGOTLS_DB"
	fi
}

# mongotls_wait: sets up PostgreSQL's side, then waits until our FerretDB
# has written its pidfile (it is listening) and accepts connections.
mongotls_wait() {
	local deadline=$((SECONDS + TIMEOUT))
	mongotls_postgres
	until mongotls_our_pid && port_open "$MONGOTLS_PORT"; do
		if ((SECONDS >= deadline)); then
			print_log_tail "$MONGOTLS_DIR/ferretdb.log"
			die "ferretdb (TLS) on $HOST:$MONGOTLS_PORT did not come up within ${TIMEOUT}s"
		fi
		sleep 0.05
	done
	[[ -z $MONGOTLS_STARTED ]] || log "ferretdb (TLS, on postgres) $HOST:$MONGOTLS_PORT started (pid $OUR_PID)"
}

mongotls_stop() {
	local pid
	mongotls_our_pid || return 0
	pid=$OUR_PID
	stop_pid "ferretdb (TLS)" "$pid" || exit 1
	rm -f "$MONGOTLS_DIR/ferretdb.pid"
	log "ferretdb (TLS) $HOST:$MONGOTLS_PORT stopped (pid $pid)"
}

mongotls_env() {
	printf 'export DISTLOCK_MONGODB_TLS_URI=%s\n' "$(shell_quote "mongodb://$MONGOTLS_USER:$MONGOTLS_PASSWORD@$HOST:$MONGOTLS_PORT/?tls=true&tlsCAFile=$MONGOTLS_CERTS/ca.pem&authMechanism=PLAIN")"
}

mongotls_status() {
	local state
	if mongotls_our_pid; then
		if port_open "$MONGOTLS_PORT"; then
			state="up (pid $OUR_PID)"
		else
			state="NOT ANSWERING (pid $OUR_PID alive)"
		fi
	elif port_open "$MONGOTLS_PORT"; then
		state="down (port taken by a process that is not ours)"
	else
		state="down"
	fi
	printf '%-10s %-16s %s\n' "ferret-tls" "$HOST:$MONGOTLS_PORT" "$state"
	[[ $state == up* ]]
}
