#!/usr/bin/env bash
# measure-floor.sh [ROUNDS] — tmux's own floor for measure.sh's first frame
# (docs/large.md): the time from starting a detached tmux session of 120x36
# to the screen showing a reservation number, for a shell that prints one
# at once, polled every 5 ms the same way.
set -euo pipefail
rounds=${1:-3}
# shellcheck shell=bash
# shellcheck source=store/storetest/gen/tmux.sh
. "$(dirname "$0")/tmux.sh"
for _ in $(seq "$rounds"); do
  s=paydesk-measure-floor-$$
  t0=$(now_ms)
  tmux new-session -d -s "$s" -x 120 -y 36 "printf 'R100000001\n'; sleep 60"
  wait_for 'R10[0-9]\{7\}' 10000
  t1=$(now_ms)
  tmux kill-session -t "$s"
  echo "floor: $(( t1 - t0 )) ms"
done
