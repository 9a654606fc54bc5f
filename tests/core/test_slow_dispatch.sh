#!/bin/bash
# The C dispatcher, the path taken where urcu-bp has no sys_membarrier
# (forced here): the same register and stress checks as the fast path.
cd "$FHOOK_ROOT" || exit 2
export FHOOK_SLOW_DISPATCH=1
./build/tests/core/test_regs | sed 's/^\(PASS\|FAIL\) /\1 slow_/'
./build/tests/core/test_stress 300 | sed 's/^\(PASS\|FAIL\) /\1 slow_/'
