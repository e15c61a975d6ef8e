# Shared by the shell CLI tests (source it after setting W): a temporary directory removed on exit,
# pass/fail counters and the checks every such test uses. Each test ends with `cli_done NAME`.
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
pass=0 fail=0
ok() { pass=$((pass + 1)); }
bad() { fail=$((fail + 1)); echo "FAIL: $*"; }
expect_rc() { # rc want label
  if [ "$1" -eq "$2" ]; then ok; else bad "$3: exit $1, want $2"; fi
}
# cli_done NAME: the summary line; the status is 0 only when nothing failed and something passed
cli_done() {
  echo "$1: $pass passed, $fail failed"
  [ "$fail" -eq 0 ] && [ "$pass" -gt 0 ]
}
