#!/usr/bin/env bash
# measure-attention.sh BINARY DB [ROUNDS] — how long after it starts the
# console on a large cache (docs/large.md) opens on the attention tab with
# its reservations (a row "window passed" on screen), and its count and
# memory 2 s later. Starts `BINARY --db DB` in a detached tmux session of
# 150x40 ROUNDS times (default 3), polling the screen every 5 ms.
set -euo pipefail
bin=$1 db=$2 rounds=${3:-3}
# shellcheck source=store/storetest/gen/tmux.sh
. "$(dirname "$0")/tmux.sh"
console_session paydesk-attention
for _ in $(seq "$rounds"); do
  t0=$(now_ms)
  start_console 150 40 "$bin" "$db"
  wait_for 'window passed' 120000
  t1=$(now_ms)
  sleep 2
  pid=$(pgrep -P "$(tmux display -p -t "$s" "#{pane_pid}")" | head -1)
  echo "attention tab after $(( t1 - t0 )) ms; $(tmux capture-pane -p -t "$s" | sed -n 2p | grep -oE '[0-9+]+ open'); $(grep -E 'VmHWM|RssFile' /proc/"$pid"/status | tr -s ' \t\n' ' ')"
  tmux kill-session -t "$s"
done
