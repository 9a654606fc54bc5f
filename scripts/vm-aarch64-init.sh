#!/bin/busybox sh
# /init of the arm64 VM's initramfs (scripts/vm-aarch64.sh): busybox, the
# aarch64 fhook command, libfhook.so and the attach tests' programs in /u.
# Runs the checks that need a kernel running arm64 code (ptrace: attach),
# writes one "@@ PASS name" / "@@ FAIL name" line per check on the console
# ("@@ #" lines are details for humans, "@@ DONE" marks a full run), then
# powers off.

/bin/busybox mkdir -p /proc /sys /dev /tmp /sbin /usr/bin /usr/sbin
/bin/busybox --install -s
export PATH=/bin:/sbin:/usr/bin:/usr/sbin
mount -t proc proc /proc
mount -t sysfs sysfs /sys
mount -t devtmpfs devtmpfs /dev 2>/dev/null
chmod 1777 /tmp
F=/u/fhook
T=/tmp
npass=0
nfail=0

say() { echo "@@ $*"; }
pass() { npass=$((npass + 1)); say "PASS $1"; }
fail() {
	nfail=$((nfail + 1))
	say "FAIL $1"
	shift
	for l in "$@"; do say "#   $l"; done
}
# check NAME EXPECTED ACTUAL: exact comparison
check() {
	if [ "$2" = "$3" ]; then pass "$1"; else fail "$1" "expected: $2" "got: $3"; fi
}
# wait_for FILE PATTERN [TENTHS]: until FILE has a line matching PATTERN
wait_for() {
	i=0
	while [ "$i" -lt "${3:-300}" ]; do
		grep -q "$2" "$1" 2>/dev/null && return 0
		sleep 0.1
		i=$((i + 1))
	done
	return 1
}
# start_prog ARGS...: /u/att_prog (or what $PROG names, with $PRELOAD preloaded)
# with a FIFO on fd 3
# as its stdin; sets $pid and $out
start_prog() {
	out=$T/out.$#.$RANDOM
	rm -f $T/in
	mkfifo $T/in
	setsid ${PRELOAD:+env LD_PRELOAD=$PRELOAD} ${PROG:-/u/att_prog} "$@" < $T/in > "$out" 2>&1 &
	exec 3> $T/in
	wait_for "$out" '^ready' 100
	pid=$(sed -n 's/^ready \([0-9]*\)$/\1/p' "$out")
}
# ask LINE: send a line to the program, print its next line of output
ask() {
	before=$(wc -l < "$out")
	echo "$1" >&3
	i=0
	while [ "$i" -lt 300 ] && [ "$(wc -l < "$out")" -le "$before" ]; do
		sleep 0.05
		i=$((i + 1))
	done
	sed -n "$((before + 1))p" "$out"
}
# trace_bg ARGS...: fhook trace in the background, back once it has attached
trace_bg() {
	: > $T/terr
	$F trace "$@" > $T/tout 2> $T/terr &
	tpid=$!
	wait_for $T/terr 'attached to process\|[eE]rror\|not permitted\|not built' 600
}
# events FUNC FILE: FUNC's entry events in FILE, without the thread and time;
# the site is the second word of the function (-fpatchable-function-entry=4,2)
events() {
	sed -n "s/.* $1__entry: //p" "$2" | tr '\n' ' '
}
# threads_state PID: the process's threads' states and masks, fhook's control thread left out
threads_state() {
	for t in /proc/"$1"/task/*; do
		[ "$(cat "$t/comm")" = fhook-ctl ] ||
			grep -E '^(State|SigBlk|SigIgn)' "$t/status" | sed 's/(.*)//' | tr '\n' ' '
	done
}

say "# $(uname -r) $(uname -m), $(grep -c ^processor /proc/cpuinfo) CPUs"

# --- fhook trace -p: attach to a running 2-thread process, trace, detach ---
start_prog 2
check attach_target_started yes "$([ -n "$pid" ] && echo yes || echo no)"
before=$(threads_state "$pid")
t0=$(cut -d' ' -f1 /proc/uptime)
trace_bg -p "$pid" -e 'f ping x' -o $T/tout
t1=$(cut -d' ' -f1 /proc/uptime)
check trace_attached 1 "$(grep -c "attached to process $pid" $T/terr)"
[ "$(grep -c "attached to process $pid" $T/terr)" = 1 ] || say "#   $(cat $T/terr)"
say "# attach took $(echo "$t1 $t0" | awk '{ printf "%.1f", $1 - $2 }') s"
check trace_call1 "ping 7 -> 8" "$(ask 'call 7')"
check trace_call2 "ping 1007 -> 1008" "$(ask 'call 1007')"
wait_for $T/tout 'x=1007' 100
kill -INT "$tpid"
wait "$tpid"
check trace_status 0 "$?"
check trace_after_detach "ping 2007 -> 2008" "$(ask 'call 2007')"
check trace_events "(ping+0x4/0x10) x=7 (ping+0x4/0x10) x=1007 " "$(events ping $T/tout)"
check trace_detached 1 "$(grep -c "detached from process $pid: every probe removed" $T/terr)"
check trace_threads_results "bad 0" "$(ask check)"
# every thread is back as it was: states (sleeping in read(), running) and masks
check trace_threads_unchanged "$before" "$(threads_state "$pid")"

# a second attach goes through the control thread the first one started
trace_bg -p "$pid" -e 'f ping x' -o $T/tout
check trace2_call "ping 3 -> 4" "$(ask 'call 3')"
wait_for $T/tout 'x=3' 100
kill -INT "$tpid"
wait "$tpid"
check trace2_events "(ping+0x4/0x10) x=3 " "$(events ping $T/tout)"

# --- fhook record -p: the worker threads' work() calls, read back ---
$F record -p "$pid" -e 'f work' -o $T/w.rec --duration 0.5 2> $T/rerr
check record_status 0 "$?"
$F report $T/w.rec > $T/rep 2> /dev/null
check record_report 1 "$(grep -c ' work$' $T/rep)"
check record_lost "0 lost" "$(grep -o '[0-9]* lost' $T/rerr)"
[ "$(grep -c ' work$' $T/rep)" = 1 ] || say "#   $(cat $T/rerr) $(head -5 $T/rep)"
check record_threads_results "bad 0" "$(ask check)"
echo quit >&3
exec 3>&-
i=0
while [ "$i" -lt 100 ] && kill -0 "$pid" 2>/dev/null; do sleep 0.1; i=$((i + 1)); done
check prog_exit "calls ok, bad 0" "$(tail -1 "$out")"

# --- a thread inside a signal handler is never the one that makes the calls:
# found by the vdso's __kernel_rt_sigreturn, where the handler returns ---
start_prog 1
check handler_entered "in handler" "$(ask handler)"
export FHOOK_ATTACH_VERBOSE=1
trace_bg -p "$pid" -e 'f ping x' -o $T/tout
unset FHOOK_ATTACH_VERBOSE
check handler_attached 1 "$(grep -c "attached to process $pid" $T/terr)"
check handler_seen 1 "$(grep -c ': thread [0-9]*: in a signal handler$' $T/terr)"
[ "$(grep -c ': thread [0-9]*: in a signal handler$' $T/terr)" = 1 ] ||
	say "#   $(grep ': thread [0-9]*: ' $T/terr | tr '\n' ' ')"
check handler_call "ping 5 -> 6" "$(ask 'call 5')"
wait_for $T/tout 'x=5' 100
kill -INT "$tpid"
wait "$tpid"
check handler_released "released" "$(ask release)"
echo quit >&3
exec 3>&-
i=0
while [ "$i" -lt 100 ] && kill -0 "$pid" 2>/dev/null; do sleep 0.1; i=$((i + 1)); done
check handler_exit "calls ok, bad 0" "$(tail -1 "$out")"

# --- a thread blocked in read() is the one that makes the calls ---
PROG=/u/att_sleep start_prog read
check read_tick0 "tick 1" "$(ask x)"
trace_bg -p "$pid" -e 'f tick n' -o $T/tout
check read_attached 1 "$(grep -c "attached to process $pid" $T/terr)"
check read_tick1 "tick 2" "$(ask x)"
wait_for $T/tout 'n=1' 100
kill -INT "$tpid"
wait "$tpid"
check read_tick2 "tick 3" "$(ask x)"
check read_events "(tick+0x4/0x10) n=1 " "$(events tick $T/tout)"
echo quit >&3
exec 3>&-
i=0
while [ "$i" -lt 50 ] && kill -0 "$pid" 2>/dev/null; do sleep 0.1; i=$((i + 1)); done
check read_exit "lines 3" "$(tail -1 "$out")"

# --- a thread blocked in nanosleep() makes the calls, then sleeps on for the
# time left (restart_syscall), never less: attached 2 s into a 4 s sleep,
# a sleep restarted from its start would last 6 s.  (Stopped twice, for the
# pads and for the call, it is already in restart_syscall at the second.) ---
PROG=/u/att_sleep start_prog 2 4000
sleep 2
trace_bg -p "$pid" -e 'f tick n' -o $T/tout
check sleep_attached 1 "$(grep -c "attached to process $pid" $T/terr)"
# (the first sleep over: the next ends 4 s later)
wait_for "$out" '^tick 1$' 100
kill -INT "$tpid"
wait "$tpid"
check sleep_traced "(tick+0x4/0x10) n=0 " "$(events tick $T/tout)"
i=0
while [ "$i" -lt 150 ] && kill -0 "$pid" 2>/dev/null; do sleep 0.1; i=$((i + 1)); done
check sleep_exit "sleeps 2 eintr 0 short 0" "$(tail -1 "$out")"
longest=$(sed -n 's/^longest \([0-9]*\) ms$/\1/p' "$out")
check sleep_time_left yes "$([ -n "$longest" ] && [ "$longest" -lt 6000 ] && echo yes || echo no)"
say "# longest sleep: $longest ms of 4000"
exec 3>&-

# --- the same with libfhook already loaded (LD_PRELOAD, no control thread
# yet): the one stop of the sleeping thread is the one it makes the call
# from, and it must go on through restart_syscall, not from its start ---
PROG=/u/att_sleep PRELOAD=/u/libfhook.so start_prog 2 4000
sleep 2
trace_bg -p "$pid" -e 'f tick n' -o $T/tout
check preload_attached 1 "$(grep -c "attached to process $pid" $T/terr)"
wait_for "$out" '^tick 1$' 100
kill -INT "$tpid"
wait "$tpid"
check preload_traced "(tick+0x4/0x10) n=0 " "$(events tick $T/tout)"
i=0
while [ "$i" -lt 150 ] && kill -0 "$pid" 2>/dev/null; do sleep 0.1; i=$((i + 1)); done
check preload_exit "sleeps 2 eintr 0 short 0" "$(tail -1 "$out")"
longest=$(sed -n 's/^longest \([0-9]*\) ms$/\1/p' "$out")
check preload_time_left yes "$([ -n "$longest" ] && [ "$longest" -lt 6000 ] && echo yes || echo no)"
say "# longest sleep, libfhook preloaded: $longest ms of 4000"
exec 3>&-

# --- kprobes where /proc shows the real masks: a thread with SIGTRAP blocked
# gets -EBUSY (the whole program: real signal frames, SVE state, threads) ---
# run_kp: the program, 60 s at most (it takes 1-2 s); a run that hangs
# prints each of its threads' state first, for the record
run_kp() {
	(cd /u && LD_LIBRARY_PATH=/u exec ./test_kprobes_a64 > $T/kp 2>&1) &
	kp=$!
	i=0
	while [ "$i" -lt 600 ] && kill -0 "$kp" 2>/dev/null; do sleep 0.1; i=$((i + 1)); done
	if kill -0 "$kp" 2>/dev/null; then
		say "# test_kprobes_a64 hung after: $(tail -1 $T/kp)"
		for t in /proc/$kp/task/*; do
			say "#   task ${t##*/}: $(cut -d' ' -f3,14,15 $t/stat 2>/dev/null) syscall $(cat $t/syscall 2>/dev/null) $(grep SigBlk $t/status 2>/dev/null)"
		done
		grep ' r-xp ' /proc/$kp/maps | while read -r l; do say "#   $l"; done
		kill -9 "$kp"
		wait "$kp"
		return 124
	fi
	wait "$kp"
}
t0=$(cut -d' ' -f1 /proc/uptime)
run_kp
rc=$?
# A hang was seen twice in about 60 runs of this VM (in the threads case,
# the first run after boot): it is reported above, and a second hang fails
if [ "$rc" = 124 ]; then
	run_kp
	rc=$?
fi
t1=$(cut -d' ' -f1 /proc/uptime)
sed -n 's/^\(PASS\|FAIL\|SKIP\) /\1 kprobes_a64\//p' $T/kp | while read -r l; do say "$l"; done
check kprobes_a64_exit 0 "$rc"
say "# test_kprobes_a64: $(echo "$t1 $t0" | awk '{ printf "%.1f", $1 - $2 }') s"
grep -q trap_blocked_refused $T/kp || say "#   $(tail -3 $T/kp)"

# --- a thread held by a tracer between a site's call and its trampoline
# while its ops' memory becomes another ops: it runs no handler of the
# second for its own function (the program's own PASS/FAIL lines; 80 s at most) ---
(cd /u && LD_LIBRARY_PATH=/u exec ./test_stub_stalled_ptrace > $T/ss 2>&1) &
ss=$!
i=0
while [ "$i" -lt 800 ] && kill -0 "$ss" 2>/dev/null; do sleep 0.1; i=$((i + 1)); done
kill -9 "$ss" 2>/dev/null
wait "$ss"
rc=$?
sed -n 's/^\(PASS\|FAIL\|SKIP\) /\1 stub_stalled\//p' $T/ss | while read -r l; do say "$l"; done
check stub_stalled_exit 0 "$rc"
[ "$rc" = 0 ] || say "#   $(tail -3 $T/ss)"

say "# $npass passed, $nfail failed"
say DONE
poweroff -f
