#!/bin/bash
# fhook trace of a harness that has no traceable function of its own (sh,
# make): the events are resolved in the processes it starts.  A refusal is
# an exit status, not a signal.
cd "$FHOOK_ROOT" || exit 2
T=$(mktemp -d)
trap 'rm -rf "$T"' EXIT
printf 'int work(int x) { return x + 1; }\nint main(void) { return work(41) != 42; }\n' >"$T/p.c"
if ! cc -O0 $(build/fhook cflags) -o "$T/p" "$T/p.c"; then
	echo "FAIL harness_build: cc failed"
	exit 1
fi
out=$(build/fhook trace -e 'f *' -- sh -c "$T/p" 2>&1); st=$?
[ "$st" = 0 ] && echo "PASS harness_runs" || echo "FAIL harness_runs: exit $st: $out"
grep -q 'has no patchable sites: events are resolved in the processes it starts' <<< "$out" &&
	echo "PASS harness_says_so" || echo "FAIL harness_says_so"
n=$(grep -cE '^ +p-[0-9]+ +\[[0-9]+\] +[0-9.]+: ___entry: \((main|work)\+0x0/0x[0-9a-f]+\)$' <<< "$out")
[ "$n" = 2 ] && echo "PASS harness_children_traced" || echo "FAIL harness_children_traced: $out"
grep -q 'fhook: trace: 2 events, 0 nmissed, 0 lost' <<< "$out" &&
	echo "PASS harness_summary" || echo "FAIL harness_summary"
# without following children there is nothing to trace: the kernel's error
out=$(build/fhook trace --no-follow -e 'f *' -- sh -c "$T/p" 2>&1); st=$?
[ "$st" != 0 ] && [ "$st" -lt 128 ] && grep -q 'Invalid probed address or symbol' <<< "$out" &&
	echo "PASS no_follow_refused" || echo "FAIL no_follow_refused: $st $out"
