#!/usr/bin/env bash
# measure-tx.sh BINARY DB — the transactions tab on a large cache
# (docs/large.md): starts `BINARY --db DB` in a detached tmux session of
# 120x36, waits for the first frame, opens the transactions tab (2) and
# reports when its rows and count show and the peak RSS (VmHWM); then a
# filter in that tab, a rare term (an order's invoice) and a common one
# (a letter), each until its rows show; then 200 screens down.
set -euo pipefail
bin=$1 db=$2
# shellcheck source=store/storetest/gen/tmux.sh
. "$(dirname "$0")/tmux.sh"
console_session paydesk-measure-tx
t0=$(now_ms)
start_console 120 36 "$bin" "$db"
wait_for 'R10[0-9]\{7\}' 120000
t1=$(now_ms)
pid=$(pgrep -P "$(tmux display -p -t "$s" "#{pane_pid}")" | head -1) # the console this script started
echo "first frame: $(( t1 - t0 )) ms"
mem "$pid"
sleep 1
t2=$(now_ms)
tmux send-keys -t "$s" 2
wait_for '[0-9],[0-9][0-9][0-9] transactions' 120000
wait_for ' capture ' 120000
t3=$(now_ms)
echo "transactions tab: rows and count shown: $(( t3 - t2 )) ms"
mem "$pid"
t4=$(now_ms)
tmux send-keys -t "$s" / o r d - 0 2 0 0 6 9 4
wait_for "ORD-0200694" 20000
t5=$(now_ms)
echo "typed ord-0200694 → its row shown: $(( t5 - t4 )) ms (12 keys, tmux included)"
tmux send-keys -t "$s" C-u
sleep 0.5
t6=$(now_ms)
tmux send-keys -t "$s" m
wait_for '/ m' 5000
wait_for '[0-9]+\{0,1\} of [0-9]' 20000
t7=$(now_ms)
echo "typed m → rows and first count shown: $(( t7 - t6 )) ms"
mem "$pid"
tmux send-keys -t "$s" Enter Escape
# shellcheck disable=SC2046
tmux send-keys -t "$s" $(printf 'PgDn %.0s' $(seq 200))
sleep 2
mem "$pid"
tmux capture-pane -p -t "$s" | sed -n 2p
