#!/bin/bash
# Run every test and print one summary line: "N passed, N failed, N skipped".
#
# A test is a program under build/tests/ (from tests/<layer>/test_*.c) or a
# script tests/<layer>/test_*.sh.  Each prints "PASS name", "FAIL name: why"
# or "SKIP name: why" lines; a program that dies, times out or exits
# non-zero without printing a FAIL counts as one failure.
#
#   tests/run.sh [PATTERN]      only tests whose path contains PATTERN
#   FHOOK_TEST_TIMEOUT=secs     per-test limit (default 600)
#   FHOOK_SKIP_KERNEL=1         leave out the QEMU kernel tests
#   FHOOK_BUILD=dir             test programs from dir/tests (sanitizer builds)
#   FHOOK_ONLY_PROGRAMS=1       only the test programs, no scripts
cd "$(dirname "$0")/.." || exit 2
ROOT=$PWD
export FHOOK_ROOT=$ROOT
TIMEOUT=${FHOOK_TEST_TIMEOUT:-600}
pattern=${1:-}
pass=0 fail=0 skip=0
failed=()
log=$ROOT/build/test-log.txt
: > "$log"

run_one() {
	local name=$1; shift
	local out status p f s
	out=$(timeout -k 5 "$TIMEOUT" "$@" 2>&1)
	status=$?
	printf '%s\n' "$out" >> "$log"
	p=$(grep -c '^PASS ' <<< "$out")
	f=$(grep -c '^FAIL ' <<< "$out")
	s=$(grep -c '^SKIP ' <<< "$out")
	grep -E '^(FAIL|SKIP) ' <<< "$out" | sed "s|^|  [$name] |"
	mapfile -t -O "${#failed[@]}" failed < <(grep -E '^FAIL ' <<< "$out" | sed "s|^|  [$name] |")
	if [ "$status" != 0 ] && [ "$f" = 0 ]; then
		if [ "$status" = 124 ] || [ "$status" = 137 ]; then
			echo "  [$name] FAIL: timed out after ${TIMEOUT}s"
			failed+=("  [$name] FAIL: timed out after ${TIMEOUT}s")
		else
			echo "  [$name] FAIL: exit status $status"
			failed+=("  [$name] FAIL: exit status $status")
			tail -5 <<< "$out" | sed "s|^|  [$name]   |"
		fi
		f=$((f + 1))
	fi
	pass=$((pass + p)); fail=$((fail + f)); skip=$((skip + s))
	printf '%-44s %3d passed, %d failed%s\n' "$name" "$p" "$f" \
		"$([ "$s" != 0 ] && echo ", $s skipped")"
}

BUILD=${FHOOK_BUILD:-build}
for t in $(find $BUILD/tests -type f -executable -name 'test_*' 2>/dev/null | sort); do
	[ -n "$pattern" ] && [[ $t != *$pattern* ]] && continue
	run_one "${t#$BUILD/tests/}" "$t"
done
[ -n "$FHOOK_ONLY_PROGRAMS" ] && FHOOK_SKIP_KERNEL=1
for t in $([ -z "$FHOOK_ONLY_PROGRAMS" ] && ls tests/*/test_*.sh 2>/dev/null | sort); do
	[ -n "$pattern" ] && [[ $t != *$pattern* ]] && continue
	run_one "${t#tests/}" bash "$t"
done
if [ -z "$FHOOK_SKIP_KERNEL" ] && [ -f kernel/Makefile ] &&
   { [ -z "$pattern" ] || [[ kernel == *$pattern* ]]; }; then
	if [ "$(id -u)" = 0 ]; then
		run_one kernel make -s -C kernel test
	else
		echo "SKIP kernel: needs root to install kernels and QEMU"
		skip=$((skip + 1))
	fi
fi
echo
# the failures again, where a log's last lines show them
[ "${#failed[@]}" != 0 ] && printf 'failed:\n' && printf '%s\n' "${failed[@]}"
echo "$pass passed, $fail failed, $skip skipped"
[ "$fail" = 0 ]
