#!/bin/bash
# fhook trace -p / record -p on a running process started without fhook:
# attach/detach cycles on 8 busy threads (every event made while attached
# is printed, none after), a process that exits while attached, and a
# recording read back.
. "$(dirname "$0")/lib.sh"
CYCLES=${FHOOK_ATTACH_CYCLES:-20}

# trace_bg ARGS...: fhook trace -p in the background, back once it has attached
trace_bg() {
	local i
	: > "$TMP/terr"
	"$FHOOK" trace "$@" > "$TMP/tout" 2> "$TMP/terr" &
	tpid=$!
	for i in $(seq 250); do
		grep -q 'attached to process\|fhook: trace: .*[eE]rror\|not permitted' "$TMP/terr" && break
		kill -0 "$tpid" 2>/dev/null || break
		sleep 0.02
	done
}

start_prog 8
ok=0
for i in $(seq "$CYCLES"); do
	trace_bg -p "$pid" -e 'f ping x' -o "$TMP/tout"
	ask "call $i" > /dev/null
	ask "call $((i + 1000))" > /dev/null
	kill -INT "$tpid"
	wait "$tpid"
	ask "call $((i + 2000))" > /dev/null	# after detach: not traced
	got=$(sed -E 's/.*ping__entry: \(ping\+0x0\/0x[0-9a-f]+\) //' "$TMP/tout" | tr '\n' ' ')
	if [ "$got" = "x=$i x=$((i + 1000)) " ] &&
	   grep -q "detached from process $pid: every probe removed" "$TMP/terr"; then
		ok=$((ok + 1))
	else
		echo "cycle $i: trace '$got'; $(tr '\n' ' ' < "$TMP/terr")"
	fi
done
expect "cycles_${CYCLES}x_trace_attach_detach" "$ok" "$CYCLES"
expect cycles_no_fd_left "$(ls -l /proc/"$pid"/fd | grep -c memfd)" 0
expect cycles_threads_results "$(ask check)" "bad 0"

# a recording of the busy threads' work() calls while attached, read back
"$FHOOK" record -p "$pid" -e 'f work' -o "$TMP/w.rec" --duration 0.3 2>"$TMP/err"
expect record_status "$?" 0
"$FHOOK" report "$TMP/w.rec" > "$TMP/rep" 2>/dev/null
expect record_report "$(grep -c ' work$' "$TMP/rep")" 1
expect record_lost "$(grep -o '[0-9]* lost' "$TMP/err")" "0 lost"
expect cycles_exit "$(stop_prog)" "calls ok, bad 0"

# the process exits while attached: reported, fhook leaves
start_prog 1
trace_bg -p "$pid" -e 'f ping x'
ask "call 1" > /dev/null
stop_prog > /dev/null
for i in $(seq 200); do kill -0 "$tpid" 2>/dev/null || break; sleep 0.02; done
wait "$tpid"
expect exit_while_attached "$?:$(grep -c "process $pid exited while attached" "$TMP/terr")" "0:1"
expect exit_while_attached_event "$(grep -c 'x=1$' "$TMP/terr")" 1
