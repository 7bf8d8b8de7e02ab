#!/bin/bash
# pg-drain.sh BIN DBNAME N [PUSHLOAD]: two `BIN listen` into one new database
# DBNAME on the server PGHOST/PGPORT/PGUSER name (`. .ci/pg` exports them), a
# pushload sender of 64 connections and N pushes at each, then waits until the
# push inbox is drained. Prints the senders' rates and latencies, the
# listeners' CPU a push (utime+stime from /proc), the server's CPU a push (the
# postmaster's and its children's, from /proc; needs PAYDESK_TEST_PG_DATA,
# which `. .ci/pg` exports) and the WAL a push (pg_current_wal_lsn) for the
# ingest and for ingest and apply together, the seconds until every push was
# applied, and the database a push.
# PUSHLOAD defaults to /tmp/pushload (go build -o /tmp/pushload ./internal/pushload/cmd/pushload).
# HOLD=SECONDS keeps the applier off for that long (a psql session holds the
# applier's advisory lock), to measure the ingest alone.
set -u
BIN=$1 DB=$2 N=$3 PUSHLOAD=${4:-/tmp/pushload}
URL="postgres://$PGUSER@$PGHOST:$PGPORT/$DB?sslmode=disable"
psql -X -q -c "CREATE DATABASE $DB" || exit 1
H=
if [ -n "${HOLD:-}" ]; then
  psql -X -q -d "$DB" -c "SELECT pg_advisory_lock(7305482191)" -c "SELECT pg_sleep($HOLD)" >/dev/null &
  H=$!
fi
export PAYDESK_SECRET_KEY=drainsecret
D=$(mktemp -d)
trap 'kill $P1 $P2 $H 2>/dev/null; rm -rf "$D"' EXIT
"$BIN" listen --addr 127.0.0.1:0 --website-key DRAINKEY --db "$URL" >"$D/l1.out" 2>"$D/l1.err" &
P1=$!
"$BIN" listen --addr 127.0.0.1:0 --website-key DRAINKEY --db "$URL" >"$D/l2.out" 2>"$D/l2.err" &
P2=$!
addr() { grep -o 'listening on http://[^ /]*' "$1" | head -1 | sed 's,.*http://,,'; }
for _ in $(seq 100); do [ -n "$(addr "$D/l1.err")" ] && [ -n "$(addr "$D/l2.err")" ] && break; sleep 0.2; done
cpu() { cat /proc/"$P1"/stat /proc/"$P2"/stat | awk '{s += $14 + $15} END {print s}'; }
# The server: the postmaster's own time, what it collected of children that
# ended (cutime, cstime), and the children alive now.
PM=$(head -1 "${PAYDESK_TEST_PG_DATA:-/nonexistent}/postmaster.pid" 2>/dev/null)
srv() {
  [ -n "$PM" ] || { echo 0; return; }
  { awk '{print $14 + $15 + $16 + $17}' /proc/"$PM"/stat
    for c in $(ps --ppid "$PM" -o pid=); do awk '{print $14 + $15}' /proc/"$c"/stat 2>/dev/null; done; } | awk '{s += $1} END {print s}'
}
wal() { psql -X -At -c "SELECT pg_current_wal_lsn() - '0/0'::pg_lsn"; }
HZ=$(getconf CLK_TCK)
W0=$(wal) L0=$(cpu) S0=$(srv) T0=$(date +%s.%N)
"$PUSHLOAD" -addr "$(addr "$D/l1.err")" -website-key DRAINKEY -n "$N" -c 64 >"$D/s1.txt" 2>/dev/null &
S1=$!
"$PUSHLOAD" -addr "$(addr "$D/l2.err")" -website-key DRAINKEY -n "$N" -c 64 >"$D/s2.txt" 2>/dev/null &
S2=$!
wait $S1 $S2
T1=$(date +%s.%N) L1=$(cpu) SV1=$(srv) W1=$(wal)
echo "load average: $(cut -d' ' -f1-3 /proc/loadavg)"
paste -d'|' "$D/s1.txt" "$D/s2.txt"
awk -v n=$((2 * N)) -v t=$(echo "$T1 - $T0" | bc) -v l=$((L1 - L0)) -v s=$((SV1 - S0)) -v hz="$HZ" -v w=$((W1 - W0)) \
  'BEGIN {printf "ingest: %d pushes in %.2f s (%.0f a second, signing included); listeners %.0f µs CPU a push, server %.0f µs; WAL %.0f B a push\n", n, t, n / t, l / hz * 1e6 / n, s / hz * 1e6 / n, w / n}'
if [ -n "$H" ]; then kill "$H" 2>/dev/null; wait "$H" 2>/dev/null; fi
for _ in $(seq 1200); do
  [ "$(psql -X -At -d "$DB" -c 'SELECT count(*) FROM paydesk_push_inbox WHERE push_id IS NULL')" = 0 ] && break
  sleep 1
done
T2=$(date +%s.%N) L2=$(cpu) SV2=$(srv) W2=$(wal)
awk -v n=$((2 * N)) -v t=$(echo "$T2 - $T0" | bc) -v l=$((L2 - L0)) -v s=$((SV2 - S0)) -v hz="$HZ" -v w=$((W2 - W0)) \
  'BEGIN {printf "all applied %.1f s after the start; ingest and apply: listeners %.0f µs CPU a push, server %.0f µs; WAL %.0f B a push\n", t, l / hz * 1e6 / n, s / hz * 1e6 / n, w / n}'
echo "database a push: $(psql -X -At -d "$DB" -c "SELECT pg_database_size(current_database()) / $((2 * N))") B"
