#!/bin/bash
# The fprobe test programs, which register their own fprobe with an exit
# handler on every function, run under `fhook trace` with an entry and an
# exit event on every function too: two return hooks on each return, through
# longjmp, signals, threads, fork, C++ exceptions and ucontext coroutines.
# Each program checks its own results; here they must also all pass, exit 0
# and not abort.  (Exceptions once looped forever in the unwinder here, and
# coroutines aborted: a frame's first hook was taken for dead.)
cd "${FHOOK_ROOT:-$(dirname "$0")/../..}" || exit 2
B=${FHOOK_BUILD:-build}
T=$(mktemp -d)
trap 'rm -rf "$T"' EXIT
for p in test_progs test_cxx_exceptions test_coroutines; do
	prog=$B/tests/fprobe/$p
	[ -x "$prog" ] || make -s "$prog" >/dev/null 2>&1
	if [ ! -x "$B/fhook" ] || [ ! -x "$prog" ]; then
		echo "SKIP under_trace/$p: not built"
		continue
	fi
	timeout 120 "$B/fhook" trace -e 'f *' -e 'f *%return' -o /dev/null -- "$prog" \
		> "$T/out" 2> "$T/err"
	st=$?
	np=$(grep -c '^PASS ' "$T/out")
	nf=$(grep -c '^FAIL ' "$T/out")
	if [ $st != 0 ] || [ "$nf" != 0 ] || [ "$np" -lt 5 ]; then
		echo "FAIL under_trace/$p: exit $st, $np passed, $nf failed: $(grep -m2 -E '^FAIL|fhook: rethook' "$T/out" "$T/err" | tr '\n' ' ')"
	elif ! grep -q '^fhook: trace: [0-9]* events' "$T/err"; then
		echo "FAIL under_trace/$p: no trace summary: $(tail -2 "$T/err")"
	else
		echo "PASS under_trace/$p ($np checks passed; $(grep '^fhook: trace:' "$T/err" | sed 's/^fhook: trace: //'))"
	fi
done
