#!/usr/bin/env bash
# measure.sh BINARY DB — the console's first frame and memory on a large
# cache (docs/large.md). Starts `BINARY --db DB` in a detached tmux session of
# 120x36, polls the screen every 5 ms until a reservation row shows, and
# prints the time to that first frame and the process's peak RSS (VmHWM);
# then types a filter ("müller") and reports when the screen shows its rows,
# pages down 200 screens, and reports VmHWM again. With FIRST_ONLY=1 it
# stops after the first frame (measure-first.sh runs it so).
set -euo pipefail
bin=$1 db=$2
# shellcheck source=store/storetest/gen/tmux.sh
. "$(dirname "$0")/tmux.sh"
console_session paydesk-measure
t0=$(now_ms)
start_console 120 36 "$bin" "$db"
wait_for 'R10[0-9]\{7\}' 120000 # a row: the reservations list's or the attention tab's, where the console may open
t1=$(now_ms)
pid=$(pgrep -P "$(tmux display -p -t "$s" "#{pane_pid}")" | head -1) # the console this script started
echo "first frame: $(( t1 - t0 )) ms"
mem "$pid"
[ "${FIRST_ONLY:-}" = 1 ] && exit 0
t2=$(now_ms)
tmux send-keys -t "$s" 1
sleep 0.5
t2=$(now_ms)
tmux send-keys -t "$s" / m ü l l e r
wait_for 'filter.*müller\|/ müller' 5000
wait_for 'Müller' 10000
# the count settled: no "…" left in the info line
until=$(( $(now_ms) + 20000 ))
while tmux capture-pane -p -t "$s" | sed -n '1,6p' | grep -q '…' && [ "$(now_ms)" -lt "$until" ]; do sleep 0.005; done
t3=$(now_ms)
echo "typed müller → rows and count shown: $(( t3 - t2 )) ms (tmux keys and polling included)"
mem "$pid"
tmux send-keys -t "$s" Enter Escape
# shellcheck disable=SC2046
tmux send-keys -t "$s" $(printf 'PgDn %.0s' $(seq 200))
sleep 2
mem "$pid"
tmux capture-pane -p -t "$s" | sed -n 2p
# the transactions tab: read (whole) when it is first opened on a big cache
t4=$(now_ms)
tmux send-keys -t "$s" 2
wait_for '[0-9],[0-9][0-9][0-9] transactions' 120000
t5=$(now_ms)
echo "transactions tab: $(( t5 - t4 )) ms"
mem "$pid"
