#!/bin/bash
# The C dispatcher (FHOOK_SLOW_DISPATCH=1: the trampolines call C for every
# call): the same register, stress and unwind checks as the fast path.
# A program that crashes or exits non-zero after its PASS lines fails.
set -o pipefail
cd "$FHOOK_ROOT" || exit 2
export FHOOK_SLOW_DISPATCH=1
st=0
for t in "test_regs" "test_stress 300" "test_unwind_tramp"; do
	# shellcheck disable=SC2086
	./build/tests/core/$t | sed 's/^\(PASS\|FAIL\) /\1 slow_/' ||
		{ echo "FAIL slow_${t%% *}: exit status $?"; st=1; }
done
exit $st
