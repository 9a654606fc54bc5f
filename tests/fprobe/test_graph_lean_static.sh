#!/bin/bash
# FHOOK_GEN=0: no generated copies; the frameless paths' own test through
# trampoline.S's entries and rethook_trampoline, which serve whenever a
# copy cannot be made.
set -o pipefail
cd "${FHOOK_ROOT:-$(dirname "$0")/../..}" || exit 2
P=$PWD/${FHOOK_BUILD:-build}/tests/fprobe/test_graph_lean
[ -x "$P" ] || { echo "SKIP graph_lean_static: $P not built"; exit 0; }
FHOOK_GEN=0 timeout 120 "$P" | sed 's/^\(PASS\|FAIL\|SKIP\) /\1 static_/'
