#!/usr/bin/env bash
# Runs `make test`'s stages in order (each a make target), stops at the first that fails, and prints
# each stage's duration as it ends and all of them at the end.
#
# `bg:TARGET` starts TARGET in the background at the lowest CPU priority (nice 19), its output kept in
# .build/bg-TARGET.log, and goes on at once; `wait:TARGET` waits for it, prints its output and fails if it
# failed. The gate builds the sanitized binaries that way while the integration and netns suites run:
# those mostly wait on servers and the network, and leave about a core idle, which a nice 19 build takes
# without taking it from them.
set -u
durations=()
declare -A bg_pid bg_start
summary() {
  echo "== stage durations =="
  printf '  %s\n' "${durations[@]}"
}
finish() {  # stage, start, rc
  local took=$(( $(date +%s) - $2 ))
  durations+=("$(printf '%-12s %4d s' "$1" "$took")$([ "$3" -ne 0 ] && echo '  FAILED')")
  echo "== stage $1: ${took} s$([ "$3" -ne 0 ] && echo ', failed') =="
  if [ "$3" -ne 0 ]; then
    for p in "${bg_pid[@]}"; do kill -- "-$p" 2>/dev/null || kill "$p" 2>/dev/null; done
    summary
    exit "$3"
  fi
}
mkdir -p .build
for stage in "$@"; do
  case "$stage" in
    bg:*)
      target=${stage#bg:}
      echo "== stage $target: started in the background (nice 19; .build/bg-$target.log) =="
      bg_start[$target]=$(date +%s)
      setsid nice -n 19 make --no-print-directory "$target" > ".build/bg-$target.log" 2>&1 &
      bg_pid[$target]=$!
      ;;
    wait:*)
      target=${stage#wait:}
      echo "== stage $target: waiting for it =="
      wait "${bg_pid[$target]}"
      rc=$?
      unset "bg_pid[$target]"
      cat ".build/bg-$target.log"
      finish "$target" "${bg_start[$target]}" "$rc"
      ;;
    *)
      echo "== stage $stage =="
      start=$(date +%s)
      make --no-print-directory "$stage"
      finish "$stage" "$start" $?
      ;;
  esac
done
summary
