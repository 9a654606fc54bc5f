#!/bin/bash
# Every named case of the test programs split by tests/check.h's
# check_run_cases() passes when run alone (TEST_CASE=name), as in the
# whole run: a case leaning on state that an earlier case left behind
# fails here.  The lone runs together print every PASS name of the whole
# run (no check is outside a case), and an unknown case name fails.
set -o pipefail
cd "$FHOOK_ROOT" || exit 2
BUILD=${FHOOK_BUILD:-build}
st=0

fail() {
	echo "FAIL $*"
	st=1
}

for src in $(grep -l 'check_run_cases(' tests/*/test_*.c | sort); do
	rel=${src#tests/}
	prog=$BUILD/tests/${rel%.c}
	name=$(basename "${rel%.c}")
	if [ ! -x "$prog" ] && [ "${name%_a64}" != "$name" ]; then
		echo "SKIP alone_$name: an aarch64 program, not built for this machine"
		continue
	fi
	if [ ! -x "$prog" ]; then
		fail "alone_$name: $prog is not built"
		continue
	fi
	whole=$("$prog" 2>&1)
	rc=$?
	# a program that skips itself (a sanitizer build, a refusing kernel)
	if ! grep -q '^PASS ' <<< "$whole" && grep -q '^SKIP ' <<< "$whole"; then
		echo "SKIP alone_$name: the program skips itself"
		continue
	fi
	[ $rc = 0 ] || fail "alone_${name}_whole: exit status $rc"
	if ! cases=$(TEST_CASE=list "$prog") || [ -z "$cases" ]; then
		fail "alone_${name}_list: no case listed"
		continue
	fi
	lone=
	for c in $cases; do
		out=$(TEST_CASE=$c "$prog" 2>&1)
		rc=$?
		if [ $rc != 0 ] || grep -q '^FAIL ' <<< "$out"; then
			fail "alone_${name}_$c: exit status $rc"
			grep '^FAIL ' <<< "$out" | sed 's/^/#   /'
		else
			echo "PASS alone_${name}_$c"
		fi
		lone+=$out$'\n'
	done
	missing=$(comm -23 <(grep -o '^PASS [^ ]*' <<< "$whole" | sort -u) \
			   <(grep -o '^PASS [^ ]*' <<< "$lone" | sort -u))
	if [ -n "$missing" ]; then
		fail "alone_${name}_covers_whole: not in any lone case:" $missing
	else
		echo "PASS alone_${name}_covers_whole"
	fi
	# the runner must not pass a misspelt name by running nothing
	if TEST_CASE=no_such_case "$prog" > /dev/null 2>&1; then
		fail "alone_${name}_unknown_case: TEST_CASE=no_such_case exited 0"
	else
		echo "PASS alone_${name}_unknown_case"
	fi
done
exit $st
