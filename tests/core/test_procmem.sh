#!/bin/bash
# Text writes through /proc/self/mem, the path taken where the system
# refuses writable and executable mappings (forced here).  Skipped where the
# kernel refuses those writes too (proc_mem.force_override=never).
cd "$FHOOK_ROOT" || exit 2
export FHOOK_TEXT_POKE=procmem
out=$(./build/tests/core/test_ops)
if grep -q '^SKIP' <<< "$out"; then
	echo "$out"
	exit 0
fi
sed 's/^\(PASS\|FAIL\) /\1 procmem_/' <<< "$out"
./build/tests/core/test_stress 300 | sed 's/^\(PASS\|FAIL\) /\1 procmem_/'
