#!/bin/bash
# The caller-selective redirect module's results, exactly: both memcg
# files before, with and after the ported module, loaded into and unloaded
# from the running server (twice), over real counters; and `make demo` itself.
ROOT=${FHOOK_ROOT:-$(cd "$(dirname "$0")/../.." && pwd)}
MEMCG=$ROOT/build/examples/memcg/memcg
MODULE=$ROOT/build/examples/caller-redirect/caller_redirect.so
if [ ! -x "$MEMCG" ] || [ ! -e "$MODULE" ]; then
	echo "FAIL caller_redirect_built: run make first"
	exit 1
fi

orig='low 0
high 0
max 0
oom 0
oom_kill 0
--end--'
new="This is from __memory_events_show_new
$orig"
oom1='low 0
high 0
max 0
oom 1
oom_kill 0
--end--'
ack='--end--'
expected="$orig
$orig
$ack
$new
$orig
$ack
$orig
$orig
$ack
$ack
This is from __memory_events_show_new
$oom1
$oom1
$ack
$oom1
$oom1"

errf=$(mktemp)
trap 'rm -f "$errf"' EXIT
out=$(timeout 30 "$MEMCG" 2>"$errf" <<IN
cat memory.events
cat memory.events.local
load $MODULE
cat memory.events
cat memory.events.local
unload
cat memory.events
cat memory.events.local
event oom
load $MODULE
cat memory.events
cat memory.events.local
unload
cat memory.events
cat memory.events.local
IN
)
status=$?
if [ "$out" = "$expected" ] && [ $status = 0 ]; then
	echo "PASS caller_redirect_outputs_exact"
else
	echo "FAIL caller_redirect_outputs_exact: status $status, diff:"
	diff <(echo "$expected") <(echo "$out") | head -20
fi

if grep -q '^parent_symbol = memory_events_show, start_addr = 0x[0-9a-f]*, end_addr = 0x[0-9a-f]*, buffer = memory_events_show+0x0/0x[0-9a-f]*$' "$errf" &&
   [ "$(grep -c '^test hook init$' "$errf")" = 2 ] &&
   [ "$(grep -c '^test hook exit$' "$errf")" = 2 ]; then
	echo "PASS caller_redirect_messages"
else
	echo "FAIL caller_redirect_messages: $(head -c 600 "$errf")"
fi

demo=$(cd "$ROOT" && FHOOK_DEMO_NO_KERNEL=1 timeout 60 bash examples/demo.sh 2>&1)
if [ $? = 0 ] && grep -q 'module loaded.*REDIRECTED.*UNTOUCHED' <<< "$demo" &&
   ! grep -q MISMATCH <<< "$demo"; then
	echo "PASS make_demo_table"
else
	echo "FAIL make_demo_table: $(tail -8 <<< "$demo")"
fi
