#!/bin/bash
# FHOOK_SAVE_ALL_ARGS=1: every site's trampoline saves every argument
# register, and nothing loads libcapstone to find out what a function reads.
set -o pipefail
cd "${FHOOK_ROOT:-$(dirname "$0")/../..}" || exit 2
P=$PWD/${FHOOK_BUILD:-build}/tests/core/test_ops_lean
[ -x "$P" ] || { echo "SKIP ops_lean_all: $P not built"; exit 0; }
FHOOK_SAVE_ALL_ARGS=1 timeout 60 "$P" all
