# shellcheck shell=bash
# Sourced by the measure scripts: the clock in milliseconds, a wait for
# the tmux session $s to show a pattern and one for a filter's rows and
# count, polled every 5 ms.
now_ms() { date +%s%3N; }
wait_for() { # wait_for PATTERN TIMEOUT_MS
  local until=$(( $(now_ms) + $2 ))
  while [ "$(now_ms)" -lt "$until" ]; do
    if tmux capture-pane -p -t "$s" | grep -q -- "$1"; then return 0; fi
    sleep 0.005
  done
  echo "timeout waiting for $1" >&2; tmux capture-pane -p -t "$s" >&2; return 1
}
# wait_filtered TYPED T1 TIMEOUT_MS: waits until the info line (line 2)
# shows the filter TYPED with its rows (no "… " before its count) and then
# its count (no "…" left), at most TIMEOUT_MS after T1; sets rows to the
# milliseconds after T1 the rows came (empty if they did not).
wait_filtered() {
  local typed=$1 t1=$2 until=$(( $2 + $3 )) line
  rows=
  while [ "$(now_ms)" -lt "$until" ]; do
    line=$(tmux capture-pane -p -t "$s" | sed -n 2p)
    if [[ $line == *"/ $typed▏"* ]]; then
      if [ -z "$rows" ] && ! grep -q '… [0-9…]' <<<"$line"; then rows=$(( $(now_ms) - t1 )); fi
      if [ -n "$rows" ] && ! grep -q '…' <<<"$line"; then return 0; fi
    fi
    sleep 0.005
  done
}
