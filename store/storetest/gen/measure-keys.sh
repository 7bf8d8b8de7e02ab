#!/usr/bin/env bash
# measure-keys.sh BINARY DB [WAIT] — a filter typed key by key in the
# console on a large cache (docs/large.md). With GEN set to the gen binary
# and DB a file, the file is first dropped from the page cache (a cold
# start). Starts `BINARY --db DB` in a detached tmux session of 120x36,
# waits for the first frame, then WAIT seconds (default 5: the console
# warms the lists' search blocks in the background meanwhile; 0 types at
# once), opens the reservations tab and types "müller" one key at a time.
# For each key it prints the time until the rows for the typed prefix are
# on screen (the info line no longer says "… " before its count) and until
# the first count shows (no "…" left), polling the screen every 5 ms.
set -euo pipefail
bin=$1 db=$2 wait=${3:-5}
# shellcheck source=store/storetest/gen/tmux.sh
. "$(dirname "$0")/tmux.sh"
console_session paydesk-keys
if [ -n "${GEN:-}" ] && [ -f "$db" ]; then
  "$GEN" -db "$db" -evict
  echo "cold start: $db dropped from the page cache"
fi
t0=$(now_ms)
start_console 120 36 "$bin" "$db"
wait_for 'R10[0-9]\{7\}' 120000
echo "first frame: $(( $(now_ms) - t0 )) ms; waiting ${wait} s before typing"
sleep "$wait"
tmux send-keys -t "$s" 1
sleep 0.5
tmux send-keys -t "$s" /
wait_for '^/ ▏' 5000 >/dev/null 2>&1 || true
typed=
for k in m ü l l e r; do
  typed+=$k
  t1=$(now_ms)
  tmux send-keys -t "$s" "$k"
  wait_filtered "$typed" "$t1" 10000
  echo "$typed: rows shown after ${rows:-?} ms, count after $(( $(now_ms) - t1 )) ms  ($(info | sed 's/.*▏ *//'))"
done
pid=$(pgrep -P "$(tmux display -p -t "$s" "#{pane_pid}")" | head -1)
mem "$pid"
