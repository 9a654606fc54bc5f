#!/bin/bash
# Text writes through /proc/self/mem, the path taken where the system
# refuses writable and executable mappings (forced here).
cd "$FHOOK_ROOT" || exit 2
export FHOOK_TEXT_POKE=procmem
./build/tests/core/test_ops | sed 's/^\(PASS\|FAIL\) /\1 procmem_/'
./build/tests/core/test_stress 300 | sed 's/^\(PASS\|FAIL\) /\1 procmem_/'
