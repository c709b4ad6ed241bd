#!/usr/bin/env bash
# Runs `make test`'s stages in order (each a make target), stops at the first that fails, and prints
# each stage's duration as it ends and all of them at the end.
set -u
durations=()
summary() {
  echo "== stage durations =="
  printf '  %s\n' "${durations[@]}"
}
for stage in "$@"; do
  echo "== stage $stage =="
  start=$(date +%s)
  make --no-print-directory "$stage"
  rc=$?
  took=$(( $(date +%s) - start ))
  durations+=("$(printf '%-12s %4d s' "$stage" "$took")$([ $rc -ne 0 ] && echo '  FAILED')")
  echo "== stage $stage: ${took} s$([ $rc -ne 0 ] && echo ', failed') =="
  if [ $rc -ne 0 ]; then summary; exit $rc; fi
done
summary
