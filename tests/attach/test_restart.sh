#!/bin/bash
# The thread that makes the calls into the process (the only one there is)
# was blocked in a system call: after the attach it goes back to it as if
# nothing had happened.  A read() is restarted; a nanosleep() attached in
# its middle goes on for the time left (restart_syscall), never returning
# early or with EINTR, whether the thread was stopped twice (libfhook
# loaded by the attach: the pads, then the call) or once (libfhook
# preloaded, no control thread yet: the call is made from its first stop).
. "$(dirname "$0")/lib.sh"
P=$ROOT/build/tests/attach/att_sleep
[ -e "$P" ] || { echo "FAIL restart_built: $P missing (make test builds it)"; exit 1; }

# trace_tick: fhook trace -p of tick() in the background, back once attached
trace_tick() {
	local i
	: > "$TMP/terr"
	"$FHOOK" trace -p "$pid" -e 'f tick n' -o "$TMP/tout" 2> "$TMP/terr" &
	tpid=$!
	for i in $(seq 250); do
		grep -q 'attached to process\|[eE]rror\|not permitted' "$TMP/terr" && break
		kill -0 "$tpid" 2>/dev/null || break
		sleep 0.02
	done
}
events() {
	sed -n 's/.* tick__entry: //p' "$TMP/tout" | tr '\n' ' '
}
# start_sleep N MS: att_sleep sleeping N times MS ms (lib.sh's start_prog passes one argument)
start_sleep() {
	local i
	out=$TMP/out.sleep.$RANDOM
	setsid $START_WRAP "$P" "$1" "$2" < /dev/null > "$out" 2>&1 &
	for i in $(seq 100); do
		grep -q '^ready' "$out" 2>/dev/null && break
		sleep 0.05
	done
	pid=$(awk '/^ready/ { print $2 }' "$out")
	[ -n "$pid" ] || { echo "FAIL start_sleep: att_sleep did not start"; exit 1; }
	PIDS+=("$pid")
}
wait_line() {
	local i
	for i in $(seq 300); do
		grep -q "$1" "$out" && return
		sleep 0.02
	done
}

# blocked in read(): the calls are made from it, and it reads on
start_prog read
expect read_before "$(ask x)" "tick 1"
trace_tick
expect read_attached "$(grep -c "attached to process $pid" "$TMP/terr")" 1
expect read_traced "$(ask x)" "tick 2"
kill -INT "$tpid"
wait "$tpid"
expect read_events "$(events)" "(tick+0x0/0xa) n=1 "
expect read_after "$(ask x)" "tick 3"
expect read_exit "$(stop_prog)" "lines 3"

# attached 1 s into a 2 s sleep: one restarted from its start would last 3 s
for how in loaded preloaded; do
	if [ $how = preloaded ]; then
		START_WRAP="env LD_PRELOAD=$ROOT/build/libfhook.so" start_sleep 2 2000
	else
		start_sleep 2 2000
	fi
	sleep 1
	trace_tick
	expect "sleep_${how}_attached" "$(grep -c "attached to process $pid" "$TMP/terr")" 1
	wait_line '^tick 1$'
	kill -INT "$tpid"
	wait "$tpid"
	expect "sleep_${how}_events" "$(events)" "(tick+0x0/0xa) n=0 "
	wait_line '^sleeps'
	expect "sleep_${how}_exit" "$(tail -1 "$out")" "sleeps 2 eintr 0 short 0"
	longest=$(sed -n 's/^longest \([0-9]*\) ms$/\1/p' "$out")
	expect "sleep_${how}_time_left" \
		"$([ -n "$longest" ] && [ "$longest" -lt 2800 ] && echo yes)" yes
done
