#!/bin/bash
# Text writes through /proc/self/mem, the path taken where the system
# refuses writable and executable mappings (forced here).  Skipped where the
# kernel refuses those writes too (proc_mem.force_override=never).  A
# program that crashes or exits non-zero after its PASS lines fails.
set -o pipefail
cd "$FHOOK_ROOT" || exit 2
export FHOOK_TEXT_POKE=procmem
out=$(./build/tests/core/test_ops)
rc=$?
if grep -q '^SKIP' <<< "$out"; then
	echo "$out"
	exit 0
fi
sed 's/^\(PASS\|FAIL\) /\1 procmem_/' <<< "$out"
st=0
[ $rc = 0 ] || { echo "FAIL procmem_test_ops: exit status $rc"; st=1; }
./build/tests/core/test_stress 300 | sed 's/^\(PASS\|FAIL\) /\1 procmem_/' ||
	{ echo "FAIL procmem_test_stress: exit status $?"; st=1; }
exit $st
