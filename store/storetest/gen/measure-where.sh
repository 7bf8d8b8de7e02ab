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
s=paydesk-where-$$
home=$(mktemp -d)
trap 'tmux kill-session -t "$s" 2>/dev/null || true; rm -rf "$home"' EXIT
# shellcheck source=store/storetest/gen/tmux.sh
. "$(dirname "$0")/tmux.sh"
info() { tmux capture-pane -p -t "$s" | sed -n 2p; }
tmux new-session -d -s "$s" -x 150 -y 36 "env XDG_DATA_HOME=$home XDG_CONFIG_HOME=$home HOME=$home $bin --db '$db'; sleep 60"
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
grep -E 'VmHWM|VmRSS|RssAnon|RssFile' /proc/"$pid"/status | tr -s ' \t' ' ' | tr '\n' ' '; echo
