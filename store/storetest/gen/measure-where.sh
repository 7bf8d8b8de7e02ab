#!/usr/bin/env bash
# measure-where.sh BINARY DB FILTER [WAIT] — a filter of the language
# ("state:reserved created:<10d") pasted at once into the reservations tab
# of the console on a large cache (docs/large.md). Starts `BINARY --db DB`
# in a detached tmux session of 150x36, waits for the first frame, then
# WAIT seconds (default 3), opens the reservations tab and pastes FILTER in
# one write. Prints the time until the rows for it are on screen (the info
# line no longer says "… " before its count) and until its count shows (no
# "…" left), polling the screen every 5 ms, and the console's memory.
set -euo pipefail
bin=$1 db=$2 filter=$3 wait=${4:-3}
# shellcheck source=store/storetest/gen/tmux.sh
. "$(dirname "$0")/tmux.sh"
console_session paydesk-where
start_console 150 36 "$bin" "$db"
wait_for 'R10[0-9]\{7\}' 120000
sleep "$wait"
tmux send-keys -t "$s" 1
sleep 0.5
tmux send-keys -t "$s" /
wait_for '^/ ▏' 5000 >/dev/null 2>&1 || true
t1=$(now_ms)
tmux send-keys -t "$s" -l "$filter"
wait_filtered "$filter" "$t1" 60000
echo "$filter: rows shown after ${rows:-?} ms, count after $(( $(now_ms) - t1 )) ms  ($(info | sed 's/.*▏ *//'))"
pid=$(pgrep -P "$(tmux display -p -t "$s" "#{pane_pid}")" | head -1)
mem "$pid"
