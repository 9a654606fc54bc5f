#!/bin/bash
# The fhook command killed (SIGKILL: no detach) while it records or traces
# an attached process, or a program it started: the process removes every
# probe by itself (its control thread sees the command's end), says so,
# goes on with its text as before the attach, and a later attach succeeds.
. "$(dirname "$0")/lib.sh"

# wait_for FILE PATTERN: until FILE holds PATTERN (5 s at most)
wait_for() {
	local i
	for i in $(seq 250); do
		grep -q "$2" "$1" 2>/dev/null && return 0
		sleep 0.02
	done
	return 1
}

for cmd in record trace; do
	start_prog 8
	before=$(text "$pid" work)
	# what a detach leaves: fhook's 5-byte nop
	nop=0f1f440000
	"$FHOOK" "$cmd" -p "$pid" -e 'f work' -e 'f work%return' -o "$TMP/k.out" 2>"$TMP/kerr" &
	kpid=$!
	wait_for "$TMP/kerr" 'attached to process' || echo "FAIL ${cmd}_attached: $(cat "$TMP/kerr")"
	sleep 0.3
	expect "${cmd}_probes_in" "$([ "$(text "$pid" work)" != "$before" ] && echo patched)" patched
	kill -KILL "$kpid"
	wait "$kpid" 2>/dev/null
	wait_for "$out" 'ended without detaching' ||
		echo "FAIL ${cmd}_noticed: $(tail -3 "$out" | tr '\n' ' ')"
	expect "${cmd}_killed_said" "$(grep -c "ended without detaching; every probe removed" "$out")" 1
	expect "${cmd}_killed_text_restored" "$(text "$pid" work | cut -c1-10)" "$nop"
	expect "${cmd}_killed_still_answers" "$(ask 'call 7')" "ping 7 -> 8"
	# a later attach takes over
	"$FHOOK" record -p "$pid" -e 'f ping' -o "$TMP/again.rec" 2>"$TMP/aerr" &
	apid=$!
	wait_for "$TMP/aerr" 'attached to process'
	ask 'call 9' > /dev/null
	kill -INT "$apid"
	wait "$apid"
	expect "${cmd}_second_attach" "$?:$(grep -c 'detached from process' "$TMP/aerr")" "0:1"
	expect "${cmd}_second_attach_recorded" \
		"$("$FHOOK" replay "$TMP/again.rec" | grep -c 'ping__entry')" 1
	expect "${cmd}_killed_correct" "$(stop_prog)" "calls ok, bad 0"
done

# a program the command started: it runs on, probes removed, to its normal end
mkfifo "$TMP/sin"
exec {sin}<> "$TMP/sin"
"$FHOOK" record -o "$TMP/s.rec" -- "$P" 4 < "$TMP/sin" > "$TMP/sout" 2>&1 &
kpid=$!
wait_for "$TMP/sout" '^ready' || echo "FAIL started_ready: $(cat "$TMP/sout")"
spid=$(awk '/^ready/ { print $2 }' "$TMP/sout")
PIDS+=("$spid")
sleep 0.3
kill -KILL "$kpid"
wait "$kpid" 2>/dev/null
wait_for "$TMP/sout" 'ended without detaching'
expect started_killed_said "$(grep -c "ended without detaching; every probe removed" "$TMP/sout")" 1
expect started_killed_text_restored "$(text "$spid" work | cut -c1-10)" "0f1f440000"
echo 'call 5' >&$sin
echo quit >&$sin
for i in $(seq 100); do
	kill -0 "$spid" 2>/dev/null || break
	sleep 0.05
done
expect started_killed_ends_right "$(grep -c '^ping 5 -> 6$\|^calls ok, bad 0$' "$TMP/sout")" 2

# The control thread held by another tracer (strace): the command cannot
# prove itself on the socket, so its requests go by the ptrace call to
# another thread, while the control thread waits for connections with no
# timeout (no watch was set when it began).  The watch the command's
# trace-start sets wakes it, and the command's end is noticed as before.
start_prog 4
"$FHOOK" patch -p "$pid" --list > /dev/null 2>&1
ctid=$(grep -l '^fhook-ctl$' /proc/"$pid"/task/*/comm | cut -d/ -f5)
expect held_thread_started "$([ -n "$ctid" ] && echo yes)" yes
strace -qq -e trace=none -p "$ctid" -o /dev/null &
hold=$!
for i in $(seq 100); do
	[ "$(awk '/^TracerPid/ { print $2 }' /proc/"$pid"/task/"$ctid"/status)" = "$hold" ] &&
		break
	sleep 0.05
done
FHOOK_ATTACH_VERBOSE=1 "$FHOOK" record -p "$pid" -e 'f work' -o "$TMP/h.rec" 2>"$TMP/herr" &
kpid=$!
# (the command tries to seize the control thread for 5 s before it takes the ptrace call)
wait_for "$TMP/herr" 'attached to process' || wait_for "$TMP/herr" 'attached to process' ||
	echo "FAIL held_attached: $(cat "$TMP/herr")"
expect held_by_ptrace "$(grep -c 'cannot seize the control thread.*not permitted' "$TMP/herr"):$(
	grep -c 'channel: ptrace call;' "$TMP/herr")" 1:1
kill -KILL "$kpid"
wait "$kpid" 2>/dev/null
wait_for "$out" 'ended without detaching' ||
	echo "FAIL held_noticed: $(tail -3 "$out" | tr '\n' ' ')"
expect held_killed_said "$(grep -c "ended without detaching; every probe removed" "$out")" 1
expect held_killed_text_restored "$(text "$pid" work | cut -c1-10)" "0f1f440000"
kill "$hold"
wait "$hold" 2>/dev/null
expect held_killed_correct "$(stop_prog)" "calls ok, bad 0"

# A daemon that closes every descriptor while it is recorded (the control
# thread's socket and the pidfd it watches with: their numbers are now the
# program's /dev/null): a new control thread watches the command, whose end
# is noticed as before.
start_prog 4
"$FHOOK" record -p "$pid" -e 'f work' -o "$TMP/c.rec" 2>"$TMP/cerr" &
kpid=$!
wait_for "$TMP/cerr" 'attached to process' || echo "FAIL closed_attached: $(cat "$TMP/cerr")"
ctid=$(grep -l '^fhook-ctl$' /proc/"$pid"/task/*/comm | cut -d/ -f5)
expect closed_fds "$(ask closefds)" closed
for i in $(seq 100); do
	new=$(grep -l '^fhook-ctl$' /proc/"$pid"/task/*/comm 2>/dev/null | cut -d/ -f5)
	[ -n "$new" ] && [ "$new" != "$ctid" ] && break
	sleep 0.05
done
expect closed_new_thread "$([ -n "$new" ] && [ "$new" != "$ctid" ] && echo yes)" yes
kill -KILL "$kpid"
wait "$kpid" 2>/dev/null
wait_for "$out" 'ended without detaching' ||
	echo "FAIL closed_noticed: $(tail -3 "$out" | tr '\n' ' ')"
expect closed_killed_said "$(grep -c "ended without detaching; every probe removed" "$out")" 1
expect closed_killed_text_restored "$(text "$pid" work | cut -c1-10)" "0f1f440000"
expect closed_killed_correct "$(stop_prog)" "calls ok, bad 0"
