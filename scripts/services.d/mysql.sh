# scripts/services.d/mysql.sh - a MariaDB server of our own for drivers/mysql
# and fencing/sqlguard, sourced by scripts/services.sh (see the comment above
# extra_each there).
#
# It listens on 127.0.0.1:13061 (never 3306, the machine's own MariaDB) and
# keeps everything under $STATE/mysql/: data/ (its cwd), mariadbd.pid,
# mariadbd.sock, mariadbd.log, tls/ (a CA and a server certificate made with
# openssl), and start, the launcher, which fault tests run to start it again
# after they killed it. It runs Debian's mariadb-server (10.11; apt installs
# it when mariadbd is missing) with --no-defaults, so no system my.cnf
# applies. A server is ours if its pidfile names a live `mariadbd` whose cwd
# is our data dir; nothing is ever stopped by name.
#
# Accounts (test-only passwords):
#   distlock@127.0.0.1      no password, over TCP without TLS; owns the
#                           databases distlock and distlock_scratch
#   distlock_tls@127.0.0.1  a password, and TLS required (REQUIRE SSL)
# root reaches it through the socket only (unix_socket authentication).
#
# Tuned for tests, not production: innodb_flush_log_at_trx_commit=2 and
# sync_binlog=0 (no binlog at all), as PostgreSQL runs with fsync off here. A
# killed mariadbd loses nothing committed; a crash of the machine could. The
# driver's README row names the settings that its promises need in
# production (innodb_flush_log_at_trx_commit=1, sync_binlog=1).

EXTRA_SERVICES+=(mysql)

readonly MYSQL_DIR=$STATE/mysql
readonly MYSQL_DATA=$MYSQL_DIR/data
readonly MYSQL_SOCK=$MYSQL_DIR/mariadbd.sock
readonly MYSQL_DB=distlock
readonly MYSQL_USER=distlock
readonly MYSQL_TLS_USER=distlock_tls
readonly MYSQL_TLS_PASSWORD=distlock-mysql-tls-test-password

mysql_ensure_binaries() {
	if ! command -v mariadbd >/dev/null 2>&1 && [[ ! -x /usr/sbin/mariadbd ]]; then
		# The package's own service would start on 3306; stop only what its
		# install started, by the pidfile the package uses, never by name.
		apt_install mariadb-server
	fi
	[[ -x /usr/sbin/mariadbd ]] || die "mariadbd not found after installing mariadb-server"
	command -v mariadb-install-db >/dev/null 2>&1 || die "mariadb-install-db not found"
	command -v mariadb >/dev/null 2>&1 || die "the mariadb client not found"
	command -v openssl >/dev/null 2>&1 || apt_install openssl
}

mysql_prepare() { mysql_ensure_binaries; }

# mysql_our_pid: true (and OUR_PID set) if our pidfile names a live
# mariadbd running in our data dir.
mysql_our_pid() {
	OUR_PID=""
	read_pid "$MYSQL_DIR/mariadbd.pid"
	[[ -n $PID_READ ]] && pid_is_ours "$PID_READ" mariadbd "$MYSQL_DATA" || return 1
	OUR_PID=$PID_READ
}

mysql_preflight() {
	mysql_our_pid && return 0
	port_open "$MYSQL_PORT" && port_conflict "$MYSQL_PORT" "no live pidfile in $MYSQL_DIR"
	return 0
}

# mysql_write_launcher: the script that starts mariadbd in the background,
# in a session of its own; mariadbd writes its own pidfile.
mysql_write_launcher() {
	cat >"$MYSQL_DIR/start" <<EOF
#!/usr/bin/env bash
# Starts the distlock test MariaDB in the background. Written by
# scripts/services.d/mysql.sh; mariadbd writes mariadbd.pid itself.
set -eu
cd "$MYSQL_DATA"
(exec setsid /usr/sbin/mariadbd --no-defaults --user=root \\
	--datadir="$MYSQL_DATA" --bind-address=$HOST --port=$MYSQL_PORT \\
	--socket="$MYSQL_SOCK" --pid-file="$MYSQL_DIR/mariadbd.pid" \\
	--log-error="$MYSQL_DIR/mariadbd.log" --skip-name-resolve --skip-log-bin \\
	--innodb-flush-log-at-trx-commit=2 --innodb-buffer-pool-size=64M \\
	--innodb-log-file-size=32M --max-connections=500 \\
	--ssl-ca="$MYSQL_DIR/tls/ca.pem" --ssl-cert="$MYSQL_DIR/tls/server.crt" \\
	--ssl-key="$MYSQL_DIR/tls/server.key" \\
	9>&- </dev/null >>"$MYSQL_DIR/launch.log" 2>&1) &
EOF
	chmod +x "$MYSQL_DIR/start"
}

MYSQL_STARTED=""
mysql_start() {
	MYSQL_STARTED=""
	mysql_our_pid && return 0
	mkdir -p "$MYSQL_DIR"
	tls_certs "$MYSQL_DIR/tls" "distlock test CA (mysql)"
	if [[ ! -d $MYSQL_DATA/mysql ]]; then
		rm -rf "$MYSQL_DATA"
		mariadb-install-db --no-defaults --user=root --datadir="$MYSQL_DATA" \
			--auth-root-authentication-method=socket --skip-test-db \
			>"$MYSQL_DIR/install.log" 2>&1 || {
			print_log_tail "$MYSQL_DIR/install.log"
			die "mysql: mariadb-install-db failed"
		}
	fi
	rm -f "$MYSQL_DIR/mariadbd.pid"
	mysql_write_launcher
	"$MYSQL_DIR/start" 9>&- || die "mysql: launcher failed"
	MYSQL_STARTED=1
}

# mysql_root: the mariadb client as root, through our socket.
mysql_root() { mariadb --no-defaults --user=root --socket="$MYSQL_SOCK" "$@"; }

mysql_wait() {
	local deadline=$((SECONDS + TIMEOUT))
	until mysql_our_pid && mysql_root -e 'SELECT 1' >/dev/null 2>&1; do
		if ((SECONDS >= deadline)); then
			print_log_tail "$MYSQL_DIR/mariadbd.log"
			die "mysql ($HOST:$MYSQL_PORT) did not answer within ${TIMEOUT}s"
		fi
		sleep 0.1
	done
	mysql_root <<SQL || die "mysql: accounts"
CREATE DATABASE IF NOT EXISTS $MYSQL_DB;
CREATE DATABASE IF NOT EXISTS ${MYSQL_DB}_scratch;
CREATE USER IF NOT EXISTS '$MYSQL_USER'@'$HOST';
GRANT ALL ON \`$MYSQL_DB\`.* TO '$MYSQL_USER'@'$HOST';
GRANT ALL ON \`${MYSQL_DB}_scratch\`.* TO '$MYSQL_USER'@'$HOST';
GRANT CONNECTION ADMIN, PROCESS ON *.* TO '$MYSQL_USER'@'$HOST';
CREATE USER IF NOT EXISTS '$MYSQL_TLS_USER'@'$HOST' IDENTIFIED BY '$MYSQL_TLS_PASSWORD' REQUIRE SSL;
ALTER USER '$MYSQL_TLS_USER'@'$HOST' IDENTIFIED BY '$MYSQL_TLS_PASSWORD' REQUIRE SSL;
GRANT ALL ON \`$MYSQL_DB\`.* TO '$MYSQL_TLS_USER'@'$HOST';
SQL
	[[ -z $MYSQL_STARTED ]] || log "mysql $HOST:$MYSQL_PORT started (pid $OUR_PID)"
}

mysql_stop() {
	local pid
	mysql_our_pid || return 0
	pid=$OUR_PID
	stop_pid mysql "$pid" || exit 1
	log "mysql $HOST:$MYSQL_PORT stopped (pid $pid)"
	rm -f "$MYSQL_DIR/mariadbd.pid"
}

mysql_env() {
	printf 'export DISTLOCK_MYSQL_DSN=%s\n' \
		"$(shell_quote "$MYSQL_USER@tcp($HOST:$MYSQL_PORT)/$MYSQL_DB")"
	printf 'export DISTLOCK_MYSQL_TLS_DSN=%s\n' \
		"$(shell_quote "$MYSQL_TLS_USER:$MYSQL_TLS_PASSWORD@tcp($HOST:$MYSQL_PORT)/$MYSQL_DB?tls=custom")"
	printf 'export DISTLOCK_MYSQL_TLS_CA=%s\n' "$(shell_quote "$MYSQL_DIR/tls/ca.pem")"
	printf 'export DISTLOCK_MYSQL_PID_FILE=%s\n' "$(shell_quote "$MYSQL_DIR/mariadbd.pid")"
	printf 'export DISTLOCK_MYSQL_START=%s\n' "$(shell_quote "$MYSQL_DIR/start")"
}

mysql_status() {
	if mysql_our_pid; then
		if mysql_root -e 'SELECT 1' >/dev/null 2>&1; then
			printf "%-10s %-16s %s\n" mysql "$HOST:$MYSQL_PORT" "up (pid $OUR_PID)"
			return 0
		fi
		printf "%-10s %-16s %s\n" mysql "$HOST:$MYSQL_PORT" "NOT ANSWERING (pid $OUR_PID alive)"
		return 1
	fi
	printf "%-10s %-16s %s\n" mysql "$HOST:$MYSQL_PORT" "down"
	return 1
}

# mysql_faults: the mysql driver's file in faults/ (see faults_write in
# services.sh): the server, restarted with start.
mysql_faults() {
	[[ -x $MYSQL_DIR/start ]] || return 0
	faults_begin mysql "MariaDB with innodb_flush_log_at_trx_commit = 2 and no binary log"
	faults_server mysql "$HOST:$MYSQL_PORT" "$MYSQL_DIR/mariadbd.pid" "$MYSQL_DATA" "$MYSQL_DIR/start" -
	faults_end
}
