#!/bin/bash
# The control thread (docs/attach.md): the first attach starts it, and the
# later ones go through its socket without stopping any thread (a thread
# blocked in read() is never woken); a connection that has not proven the
# ptrace permission is refused with nothing done; a squatter on the
# socket's name leaves the ptrace call as the channel; a fork child has no
# control thread and can itself be attached to; commands at once take
# turns; a daemon that closes its descriptors, a stopped process and an
# exec are reached with the ptrace call, which starts a thread again; a
# process under a seccomp filter never gets one.
. "$(dirname "$0")/lib.sh"
C=$ROOT/build/tests/attach/att_ctl_client
[ -e "$C" ] || { echo "FAIL attach_built: $C missing (make test builds it)"; exit 1; }
CYCLES=${FHOOK_ATTACH_CYCLES:-25}

# the channel line of FHOOK_ATTACH_VERBOSE, without the times
channel() {
	grep -o 'channel: [^;]*; [0-9]* threads stopped' "$1" | sed 's/thread [0-9]*)/thread T)/'
}
# a thread's context switches: a thread stopped by ptrace, even inside a
# blocking read(), is woken and switches
switches() {
	awk '/ctxt_switches/ { printf "%s ", $2 }' /proc/"$1"/task/"$2"/status
}
SOCK="channel: control socket (thread T); 0 threads stopped"
# a first attach: one ptrace call starts the control thread, the requests go to it
FIRST="channel: control socket (thread T) after a ptrace call"

# ---- never attached to: no thread; the first attach starts it ----
start_prog 0
expect no_thread_before "$(ctl_threads "$pid")" 0
expect no_socket_before "$(grep -c "@fhook-ctl-$pid\$" /proc/net/unix)" 0
FHOOK_ATTACH_VERBOSE=1 "$FHOOK" patch -p "$pid" --func ping --with "$R:ping_new" 2>"$TMP/err"
expect first_status "$?" 0
expect first_channel "$(channel "$TMP/err" | cut -d';' -f1)" "$FIRST"
expect thread_started "$(ctl_threads "$pid")" 1
# libfhook was loaded by a thread of fhook's, which the program's kept thread
# only started, and which ended afterwards: the program's thread and the control thread
expect loader_thread "$(grep -c 'then 1 for [0-9.]* ms (it started the loader thread)' "$TMP/err")" 1
for i in $(seq 100); do
	[ "$(ls /proc/"$pid"/task | wc -l)" = 2 ] && break
	sleep 0.02
done
expect loader_thread_ended "$(ls /proc/"$pid"/task | wc -l)" 2
expect socket_bound "$(grep -c "@fhook-ctl-$pid\$" /proc/net/unix)" 1
ctid=$(grep -l '^fhook-ctl$' /proc/"$pid"/task/*/comm | cut -d/ -f5)
# blocks every signal but those a thread raises itself (ILL TRAP BUS FPE SEGV)
expect thread_mask "$(awk '/^SigBlk/ { print $2 }' /proc/"$pid"/task/"$ctid"/status)" \
	fffffffe7ffbfa27

# ---- later attaches: no thread stopped, the one blocked in read() not woken ----
before=$(switches "$pid" "$pid")
FHOOK_ATTACH_VERBOSE=1 "$FHOOK" patch -p "$pid" --list >"$TMP/out" 2>"$TMP/err"
expect later_list "$?:$(cat "$TMP/out")" "0:ping: patch ping -> $R:ping_new
    every caller: 0 calls, 0 taken"
expect later_list_channel "$(channel "$TMP/err")" "$SOCK"
FHOOK_ATTACH_VERBOSE=1 "$FHOOK" inject -p "$pid" --name fail_work --func work --retval -12 \
	2>"$TMP/err"
expect later_inject "$?:$(channel "$TMP/err")" "0:$SOCK"
FHOOK_ATTACH_VERBOSE=1 "$FHOOK" unpatch -p "$pid" 2>"$TMP/err"
expect later_unpatch "$?:$(channel "$TMP/err")" "0:$SOCK"
FHOOK_ATTACH_VERBOSE=1 "$FHOOK" trace -p "$pid" -e 'f ping' --duration 0.2 -o "$TMP/ev" \
	2>"$TMP/err"
# trace -p attaches twice: to start (memfd, trace-start) and to stop
expect later_trace "$?:$(channel "$TMP/err" | sort -u):$(grep -c 'detached from' "$TMP/err")" \
	"0:$SOCK:1"
expect later_thread_not_woken "$(switches "$pid" "$pid")" "$before"
expect later_answers "$(ask 'call 5')" "ping 5 -> 6"

# ---- commands at once: each proves its permission in turn (a thread has one tracer) ----
jobs=()
for i in 1 2 3 4; do
	FHOOK_ATTACH_VERBOSE=1 "$FHOOK" patch -p "$pid" --list >"$TMP/par$i" 2>"$TMP/pare$i" &
	jobs+=($!)
done
wait "${jobs[@]}"
par=
for i in 1 2 3 4; do par="$par$(cat "$TMP/par$i"):$(channel "$TMP/pare$i")|"; done
expect parallel "$par" "no patches in process $pid:$SOCK|no patches in process $pid:$SOCK|no patches in process $pid:$SOCK|no patches in process $pid:$SOCK|"

# ---- a connection that did not seize the control thread: refused, nothing done ----
"$FHOOK" patch -p "$pid" --func ping --with "$R:ping_new" 2>/dev/null
"$C" connect "$pid" unpatch >"$TMP/out" 2>&1
cpid=$(awk '/^pid/ { print $2 }' "$TMP/out")
expect stranger_refused "$(cat "$TMP/out")" "pid $cpid
error
fhook: control connection refused: process $cpid has not seized the control thread (PTRACE_SEIZE first: the kernel's ptrace rule decides)"
expect stranger_nothing_done "$(ask 'call 5')" "ping 5 -> -5"
expect stranger_then_fhook "$("$FHOOK" unpatch -p "$pid" ping 2>&1)" \
	"fhook: unpatch: 'ping' removed from process $pid"
expect blocked_read_exit "$(stop_prog)" "calls ok, bad 0"

# ---- a squatter on the name: the ptrace call stays the channel ----
start_prog 0
sq_in=$TMP/sq_in
mkfifo "$sq_in"
"$C" squat "$pid" <"$sq_in" >"$TMP/sq" 2>&1 &
sqpid=$!
exec {sq}>"$sq_in"
for i in $(seq 100); do grep -q bound "$TMP/sq" && break; sleep 0.02; done
expect squatter_bound "$(cat "$TMP/sq")" bound
"$FHOOK" patch -p "$pid" --func ping --with "$R:ping_new" 2>/dev/null
expect squatted_patch "$?:$(ctl_threads "$pid")" "0:0"
FHOOK_ATTACH_VERBOSE=1 "$FHOOK" patch -p "$pid" --list >"$TMP/out" 2>"$TMP/err"
expect squatted_list "$?:$(head -1 "$TMP/out"):$(channel "$TMP/err" | cut -d';' -f1)" \
	"0:ping: patch ping -> $R:ping_new:channel: ptrace call"
expect squatted_patched "$(ask 'call 6')" "ping 6 -> -6"
# the squatter gone, the next call starts the thread, and the next one uses it
exec {sq}>&-
wait "$sqpid"
"$FHOOK" unpatch -p "$pid" ping 2>/dev/null
expect squatter_gone_thread "$?:$(ctl_threads "$pid")" "0:1"
FHOOK_ATTACH_VERBOSE=1 "$FHOOK" patch -p "$pid" --list >"$TMP/out" 2>"$TMP/err"
expect squatter_gone_list "$?:$(cat "$TMP/out"):$(channel "$TMP/err")" \
	"0:no patches in process $pid:$SOCK"

# ---- a fork child: no control thread, attached to on its own ----
child=$(ask fork | awk '/^child/ { print $2 }')
PIDS+=("$child")
expect fork_child_threads "$(ls /proc/"$child"/task | wc -l):$(ctl_threads "$child")" "1:0"
FHOOK_ATTACH_VERBOSE=1 "$FHOOK" patch -p "$child" --func ping --with "$R:ping_new" 2>"$TMP/err"
expect fork_child_first "$?:$(channel "$TMP/err" | cut -d';' -f1):$(ctl_threads "$child")" \
	"0:$FIRST:1"
FHOOK_ATTACH_VERBOSE=1 "$FHOOK" unpatch -p "$child" ping 2>"$TMP/err"
expect fork_child_later "$?:$(channel "$TMP/err")" "0:$SOCK"
expect fork_parent_unchanged "$(ask 'call 6')" "ping 6 -> 7"
kill -KILL "$child"

# ---- a daemon closes every descriptor: the thread serves what it was
# accepting, leaves, and the next ptrace call starts another ----
expect closefds "$(ask closefds)" closed
FHOOK_ATTACH_VERBOSE=1 "$FHOOK" patch -p "$pid" --list >"$TMP/out" 2>"$TMP/err"
expect closefds_last_request "$?:$(cat "$TMP/out"):$(channel "$TMP/err")" \
	"0:no patches in process $pid:$SOCK"
chans=
for i in 1 2 3; do
	FHOOK_ATTACH_VERBOSE=1 "$FHOOK" patch -p "$pid" --list >/dev/null 2>"$TMP/err"
	chans="$chans$(channel "$TMP/err" | cut -d';' -f1 |
		sed 's/.*after a ptrace call$/ptrace+control/; s/^channel: \([a-z]*\).*/\1/');"
	[ "${chans%control;}" != "$chans" ] && break
done
# the program's /dev/null under the old number was not touched
expect closefds_restarted "$chans:$(ctl_threads "$pid")" "ptrace+control;:1"
expect closefds_program_fds "$(ls -l /proc/"$pid"/fd | grep -c ' -> /dev/null$')" 61

# ---- a stopped process: its control thread cannot answer, the ptrace call does ----
kill -STOP "$pid"
sleep 0.1
FHOOK_ATTACH_VERBOSE=1 "$FHOOK" patch -p "$pid" --list >"$TMP/out" 2>"$TMP/err"
expect stopped_list "$?:$(cat "$TMP/out"):$(channel "$TMP/err" | cut -d';' -f1)" \
	"0:no patches in process $pid:channel: ptrace call"
expect stopped_stays_stopped "$(awk '{ print $3 }' /proc/"$pid"/stat)" T
kill -CONT "$pid"

# ---- an exec: the new image has neither the thread nor the socket ----
expect exec_ready "$(ask exec)" "ready $pid"
expect exec_no_thread "$(ctl_threads "$pid"):$(grep -c "@fhook-ctl-$pid\$" /proc/net/unix)" "0:0"
FHOOK_ATTACH_VERBOSE=1 "$FHOOK" patch -p "$pid" --list >"$TMP/out" 2>"$TMP/err"
expect exec_first "$?:$(cat "$TMP/out"):$(channel "$TMP/err" | cut -d';' -f1):$(ctl_threads "$pid")" \
	"0:no patches in process $pid:$FIRST:1"
FHOOK_ATTACH_VERBOSE=1 "$FHOOK" patch -p "$pid" --list >/dev/null 2>"$TMP/err"
expect exec_later "$(channel "$TMP/err")" "$SOCK"
expect squatter_exit "$(stop_prog)" "calls ok, bad 0"

# ---- under a seccomp filter (a sandboxed service): no control thread, the
# system calls it would make may be what the filter kills for; every
# attach is the ptrace call ----
START_WRAP=$ROOT/build/tests/attach/att_seccomp start_prog 0
expect seccomp_filtered "$(awk '/^Seccomp:/ { print $2 }' /proc/"$pid"/status)" 2
FHOOK_ATTACH_VERBOSE=1 "$FHOOK" patch -p "$pid" --func ping --with "$R:ping_new" 2>"$TMP/err"
expect seccomp_first "$?:$(ctl_threads "$pid")" "0:0"
# nor a loader thread: the thread kept loads libfhook itself
expect seccomp_no_loader "$(grep -c '^fhook: patch: no loader thread (under a seccomp filter); libfhook is loaded on thread' "$TMP/err"):$(grep -c '(libfhook loaded)' "$TMP/err"):$(ls /proc/"$pid"/task | wc -l)" "1:1:1"
FHOOK_ATTACH_VERBOSE=1 "$FHOOK" patch -p "$pid" --list >"$TMP/out" 2>"$TMP/err"
expect seccomp_later "$?:$(channel "$TMP/err" | cut -d';' -f1):$(ctl_threads "$pid")" \
	"0:channel: ptrace call:0"
expect seccomp_patched "$(ask 'call 5')" "ping 5 -> -5"
expect seccomp_exit "$(stop_prog)" "calls ok, bad 0"

# ---- cycles on 8 busy threads, every later attach through the socket ----
start_prog 8
"$FHOOK" patch -p "$pid" --list >/dev/null 2>&1
ok=0
for i in $(seq "$CYCLES"); do
	FHOOK_ATTACH_VERBOSE=1 "$FHOOK" patch -p "$pid" --func work --with "$R:work_new" \
		2>"$TMP/e1" &&
	[ "$(ask "call $i")" = "ping $i -> $((i + 1))" ] &&
	FHOOK_ATTACH_VERBOSE=1 "$FHOOK" unpatch -p "$pid" 2>"$TMP/e2" &&
	[ "$(channel "$TMP/e1"; channel "$TMP/e2")" = "$SOCK
$SOCK" ] && ok=$((ok + 1))
done
expect "cycles_${CYCLES}x_socket" "$ok" "$CYCLES"
expect cycles_results "$(ask check)" "bad 0"
expect cycles_exit "$(stop_prog)" "calls ok, bad 0"
