#!/bin/bash
# make demo's live part (examples/attach_demo.sh): the memcg server started
# as an ordinary process, the memcg redirect patched in from outside,
# listed, and removed; the table must be exactly this.
set -o pipefail
ROOT=${FHOOK_ROOT:-$(cd "$(dirname "$0")/../.." && pwd)}
out=$(timeout 60 bash "$ROOT/examples/attach_demo.sh" 2>&1)
status=$?
table=$(sed -n '/^Results/,$p' <<< "$out" | tail -3)
want='before patch     | low 0 / high 0 / max 0 / oom 0 / oom_kill 0          | low 0 / high 0 / max 0 / oom 0 / oom_kill 0
patch -p         | "This is from __memory_events_show_new" <- REDIRECTED | original five lines <- UNTOUCHED
unpatch -p       | low 0 / high 0 / max 0 / oom 0 / oom_kill 0          | low 0 / high 0 / max 0 / oom 0 / oom_kill 0'
if [ "$status" = 0 ] && [ "$table" = "$want" ]; then
	echo "PASS attach_demo_table"
else
	echo "FAIL attach_demo_table: status $status; $(tail -5 <<< "$out")"
fi
list=$(grep -A2 '^__memory_events_show: patch' <<< "$out")
want_list="__memory_events_show: patch __memory_events_show -> $ROOT/build/examples/memcg/memcg_patch.so:__memory_events_show_new
    caller memory_events_show: 1 calls, 1 taken
    other callers: 1 calls"
if [ "$list" = "$want_list" ]; then
	echo "PASS attach_demo_list"
else
	echo "FAIL attach_demo_list: '$list'"
fi
