# shellcheck shell=bash
# Sourced by the measure scripts: their tmux session and the console in
# it, the clock in milliseconds, a wait for the session to show a pattern
# and one for a filter's rows and count, polled every 5 ms, and a
# process's memory.

# console_session NAME: the session $s (NAME and the script's process ID)
# and a fresh $home for the consoles it runs, both gone when the script
# exits.
console_session() {
  s=$1-$$
  home=$(mktemp -d)
  trap 'tmux kill-session -t "$s" 2>/dev/null || true; rm -rf "$home"' EXIT
}
# start_console WIDTH HEIGHT BINARY DB: `BINARY --db DB` in the session $s,
# with $home as its HOME and XDG directories.
start_console() {
  tmux new-session -d -s "$s" -x "$1" -y "$2" "env XDG_DATA_HOME=$home XDG_CONFIG_HOME=$home HOME=$home $3 --db '$4'; sleep 60"
}
# info: the console's info line (line 2).
info() { tmux capture-pane -p -t "$s" | sed -n 2p; }
# mem PID: the process's peak and current memory, on one line.
mem() { grep -E 'VmHWM|VmRSS|RssAnon|RssFile' /proc/"$1"/status | tr -s ' \t' ' ' | tr '\n' ' '; echo; }
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
