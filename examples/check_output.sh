#!/bin/sh
# Runs an example and checks its exit status and that its output matches a
# pattern (grep -E): the test fails when the program fails, or succeeds
# without printing the value it is about.
#   check_output.sh PATTERN PROGRAM [ARGS...]
pattern=$1
shift
# printf, not echo: some shells' echo would expand the backslashes of the output
out=$("$@")
status=$?
printf '%s\n' "$out"
[ "$status" = 0 ] || { echo "FAILED: $* exited with status $status"; exit 1; }
printf '%s\n' "$out" | grep -E -- "$pattern" >/dev/null || { echo "FAILED: no line matches /$pattern/"; exit 1; }
