# shellcheck shell=bash
# Sourced by the measure scripts: the clock in milliseconds and a wait for
# the tmux session $s to show a pattern, polled every 5 ms.
now_ms() { date +%s%3N; }
wait_for() { # wait_for PATTERN TIMEOUT_MS
  local until=$(( $(now_ms) + $2 ))
  while [ "$(now_ms)" -lt "$until" ]; do
    if tmux capture-pane -p -t "$s" | grep -q -- "$1"; then return 0; fi
    sleep 0.005
  done
  echo "timeout waiting for $1" >&2; tmux capture-pane -p -t "$s" >&2; return 1
}
