#!/usr/bin/env bash
# measure-first.sh ROUNDS DB BINARY... — the first frame and VmHWM of
# several binaries on one cache, side by side (docs/large.md): each round
# runs measure.sh's first-frame step for every binary in turn, and
# tmux's floor (measure-floor.sh) once, so that a before and an after
# share the machine's load. Between runs it waits for the last console to
# be gone: a console that still closes holds the file, and one started
# meanwhile would find the clean-close mark not yet written.
set -euo pipefail
rounds=$1 db=$2
shift 2
dir=$(dirname "$0")
for r in $(seq "$rounds"); do
  for bin in "$@"; do
    out=$(FIRST_ONLY=1 bash "$dir/measure.sh" "$bin" "$db" | tr '\n' ' ')
    echo "round $r $bin: $out"
    # pgrep takes a regular expression: a URL's "?" and "." are escaped.
    while pgrep -f -- "$(printf '%s' "$bin --db $db" | sed 's/[][\.*^$?+(){}|]/\\&/g')" >/dev/null; do sleep 0.1; done
  done
  echo "round $r $(bash "$dir/measure-floor.sh" 1)"
done
