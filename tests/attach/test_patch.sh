#!/bin/bash
# fhook patch / inject / unpatch -p PID on running processes that were
# started without fhook: cycles on 8 busy threads that check their own
# results, a process blocked in read(), a SIGSTOPped one (stays stopped),
# and the list.
. "$(dirname "$0")/lib.sh"
CYCLES=${FHOOK_ATTACH_CYCLES:-25}

# ---- the list and a patch by caller on a process blocked in read() ----
start_prog 0
expect blocked_read_before "$(ask 'call 5')" "ping 5 -> 6"
"$FHOOK" patch -p "$pid" --func ping --with "$R:ping_new" 2>"$TMP/err"
expect blocked_read_patch_status "$?" 0
expect blocked_read_patch_msg "$(cat "$TMP/err")" \
	"fhook: patch: 'ping' applied in process $pid; \`fhook unpatch -p $pid ping\` removes it"
expect blocked_read_patched "$(ask 'call 5')" "ping 5 -> -5"
"$FHOOK" inject -p "$pid" --name fail_work --func work --retval -12 --caller main 2>/dev/null
expect inject_status "$?" 0
expect list "$("$FHOOK" patch -p "$pid" --list)" \
"fail_work: inject work -> return -12
    caller main: 0 calls, 0 taken
    other callers: 0 calls
ping: patch ping -> $R:ping_new
    every caller: 1 calls, 1 taken"
"$FHOOK" patch -p "$pid" --func ping --with "$R:ping_new" 2>"$TMP/err"
expect same_name_refused "$?:$(head -1 "$TMP/err")" \
	"1:fhook: patch: a patch named 'ping' is already applied"
"$FHOOK" patch -p "$pid" --name x --func no_such_fn --with "$R:ping_new" 2>"$TMP/err"
expect unknown_target_refused "$?:$(grep -c "no function named 'no_such_fn'" "$TMP/err")" "1:1"
"$FHOOK" unpatch -p "$pid" nope 2>"$TMP/err"
expect unpatch_unknown "$?:$(cat "$TMP/err")" "1:fhook: unpatch: no patch named 'nope'"
"$FHOOK" unpatch -p "$pid" 2>"$TMP/err"
expect unpatch_all "$?:$(sort "$TMP/err" | tr '\n' '|')" \
	"0:fhook: unpatch: 'fail_work' removed from process $pid|fhook: unpatch: 'ping' removed from process $pid|"
expect unpatched "$(ask 'call 5')" "ping 5 -> 6"
# fault injection with the kernel's attributes, on the running process
"$FHOOK" inject -p "$pid" --func ping --retval -12 --caller main --times 2 2>/dev/null
expect inject_times_status "$?" 0
expect inject_times_1 "$(ask 'call 5')" "ping 5 -> -12"
expect inject_times_2 "$(ask 'call 6')" "ping 6 -> -12"
expect inject_times_used_up "$(ask 'call 7')" "ping 7 -> 8"
expect inject_times_list "$("$FHOOK" patch -p "$pid" --list)" "ping: inject ping -> return -12
    caller main: 3 calls, 2 taken
    other callers: 0 calls"
"$FHOOK" unpatch -p "$pid" ping 2>/dev/null
expect inject_removed "$(ask 'call 5')" "ping 5 -> 6"
expect list_empty "$("$FHOOK" patch -p "$pid" --list)" "no patches in process $pid"
expect blocked_read_exit "$(stop_prog)" "calls ok, bad 0"

# ---- a SIGSTOPped process is patched and stays stopped ----
start_prog 2
kill -STOP "$pid"
sleep 0.1
"$FHOOK" patch -p "$pid" --func ping --with "$R:ping_new" 2>/dev/null
expect stopped_patch_status "$?" 0
sleep 0.1
expect stopped_stays_stopped "$(awk '{ print $3 }' "/proc/$pid/stat")" T
# a second attach (libfhook there now: one thread stopped at a time)
expect stopped_list "$("$FHOOK" patch -p "$pid" --list | head -1)" \
	"ping: patch ping -> $R:ping_new"
sleep 0.1
expect stopped_stays_stopped_2 "$(awk '{ print $3 }' "/proc/$pid/stat")" T
kill -CONT "$pid"
expect stopped_patched "$(ask 'call 7')" "ping 7 -> -7"
# the loader thread, stopped with the process meanwhile, returns from its sleep and ends:
# the program's three threads and the control thread are left
for i in $(seq 100); do
	[ "$(ls /proc/"$pid"/task | wc -l)" = 4 ] && break
	sleep 0.02
done
expect stopped_loader_ended "$(cat /proc/"$pid"/task/*/comm | sort | uniq -c | tr -s ' ' | tr '\n' ';')" \
	" 3 att_prog; 1 fhook-ctl;"
"$FHOOK" unpatch -p "$pid" ping 2>/dev/null
expect stopped_unpatched "$(ask 'call 7')" "ping 7 -> 8"
expect stopped_exit "$(stop_prog)" "calls ok, bad 0"

# ---- cycles on 8 threads calling the patched function flat out ----
start_prog 8
mask_before=$(program_masks "$pid")
ok=0
for i in $(seq "$CYCLES"); do
	# (a cycle that fails says where and what the command said)
	step=patch1; "$FHOOK" patch -p "$pid" --func work --with "$R:work_new" 2> "$TMP/cerr" &&
	step=patch2 && "$FHOOK" patch -p "$pid" --func ping --with "$R:ping_new" --name p2 \
		2> "$TMP/cerr" &&
	step=patched && got=$(ask "call $i") && [ "$got" = "ping $i -> -$i" ] &&
	step=unpatch && "$FHOOK" unpatch -p "$pid" 2> "$TMP/cerr" &&
	step=unpatched && got=$(ask "call $i") && [ "$got" = "ping $i -> $((i + 1))" ] &&
		ok=$((ok + 1)) && continue
	echo "cycle $i failed at $step: ${got:-} $(tail -2 "$TMP/cerr" | tr '\n' ' ')"
done
expect "cycles_${CYCLES}x_patch_unpatch" "$ok" "$CYCLES"
expect cycles_threads_results "$(ask check)" "bad 0"
expect cycles_signal_masks "$(program_masks "$pid")" "$mask_before"
expect cycles_exit "$(stop_prog)" "calls ok, bad 0"

# ---- first attaches to fresh processes of 8 threads calling work() flat
# out: every result stays right, and the kept thread's priority is put back ----
ok=0
for i in 1 2 3 4; do
	start_prog 8
	"$FHOOK" patch -p "$pid" --func ping --with "$R:ping_new" 2>"$TMP/err"
	st=$?
	# the priority given to the kept thread while it was kept is put back: nice 0, SCHED_OTHER
	[ "$(awk '{ print $19 ":" $41 }' /proc/"$pid"/task/*/stat | sort -u)" = "0:0" ] ||
		echo "FAIL pads_sched_restored: $(awk '{ print $19 ":" $41 }' /proc/"$pid"/task/*/stat)"
	[ "$st:$(ask 'call 3'):$(ask check)" = "0:ping 3 -> -3:bad 0" ] &&
	[ "$(stop_prog)" = "calls ok, bad 0" ] && ok=$((ok + 1))
done
expect pads_first_attaches "$ok" 4

# park_in_pad SIGNAL: att_park single-steps the program's pad thread to
# between two nops of work()'s pad and delivers SIGNAL there
park_in_pad() {
	local tid lo hi
	read -r _ tid lo hi <<< "$(ask padthread)"
	"$PARK" "$pid" "$tid" "$lo" "$hi" "$1" > /dev/null
}

# ---- a thread stopped between two nops of a pad (the process stopped with
# it there) is moved past the rest of it: the pad becomes one 5-byte nop ----
start_prog 8
park_in_pad 19
st=$?
# (the group stop reaches the other threads, the main one in its read(), a moment later)
for i in $(seq 100); do
	[ "$(awk '{ print $3 }' /proc/"$pid"/task/*/stat | sort -u)" = T ] && break
	sleep 0.02
done
expect pads_parked "$st:$(awk '{ print $3 }' /proc/"$pid"/task/*/stat | sort -u)" "0:T"
FHOOK_ATTACH_VERBOSE=1 "$FHOOK" patch -p "$pid" --func ping --with "$R:ping_new" 2>"$TMP/err"
st=$?
n=$(grep -o '; [0-9]* threads moved past the rest of a pad' "$TMP/err" | grep -o '[0-9]*')
expect pads_threads_moved "$st:$((${n:-0} >= 1))" "0:1"
expect pads_stays_stopped "$(awk '{ print $3 }' "/proc/$pid/stat")" T
kill -CONT "$pid"
expect pads_moved_patched "$(ask 'call 3'):$(ask check)" "ping 3 -> -3:bad 0"
expect pads_moved_exit "$(stop_prog)" "calls ok, bad 0"

# ---- a thread whose signal handler interrupted it between two nops of a
# pad goes back there by its signal frame: the frame's pc is moved past the
# rest of the pad too (else it would return into the middle of the 5-byte nop) ----
start_prog 0
park_in_pad 12
expect padsig_in_pad "$?:$(ask padwait)" "0:in pad"
FHOOK_ATTACH_VERBOSE=1 "$FHOOK" patch -p "$pid" --func ping --with "$R:ping_new" 2>"$TMP/err"
expect padsig_first "$?:$(grep -o '; [0-9]* threads moved past the rest of a pad' "$TMP/err")" \
	"0:; 1 threads moved past the rest of a pad"
expect padsig_release "$(ask release)" "released"
sleep 0.2
expect padsig_patched "$(ask 'call 5'):$(ask check)" "ping 5 -> -5:bad 0"
expect padsig_exit "$(stop_prog)" "calls ok, bad 0"

# ---- a process whose threads are made by a pthread_create() of its own (a
# sanitizer's runtime, a preloaded library): no thread is made behind its
# back, a thread of the program loads libfhook ----
START_WRAP="env LD_PRELOAD=$ROOT/build/tests/attach/att_wrap.so" start_prog 2
FHOOK_ATTACH_VERBOSE=1 "$FHOOK" patch -p "$pid" --func ping --with "$R:ping_new" 2>"$TMP/err"
expect wrapped_first "$?:$(grep -c 'no loader thread (att_wrap.so has its own pthread_create()); libfhook is loaded on thread' "$TMP/err"):$(grep -c '(libfhook loaded)' "$TMP/err")" "0:1:1"
expect wrapped_patched "$(ask 'call 5'):$(ask check)" "ping 5 -> -5:bad 0"
expect wrapped_exit "$(stop_prog)" "calls ok, bad 0"

# ---- a thread inside a signal handler is not the one that runs the call ----
start_prog 0
expect handler_entered "$(ask handler)" "in handler"
htid=$(ls /proc/"$pid"/task | sort -n | tail -1)
FHOOK_ATTACH_VERBOSE=1 "$FHOOK" patch -p "$pid" --func ping --with "$R:ping_new" 2>"$TMP/err"
expect handler_patch_status "$?" 0
expect handler_thread_skipped "$(grep -c "thread $htid: in a signal handler" "$TMP/err")" 1
expect handler_patched "$(ask 'call 4')" "ping 4 -> -4"
expect handler_released "$(ask release)" "released"
"$FHOOK" unpatch -p "$pid" 2>/dev/null
expect handler_unpatched "$(ask 'call 4')" "ping 4 -> 5"
expect handler_exit "$(stop_prog)" "calls ok, bad 0"

# ---- a thread that blocks every signal, SIGTRAP too, under patch cycles ----
start_prog 2
expect masked_started "$(ask masked)" "masked"
mtid=$(ls /proc/"$pid"/task | sort -n | tail -1)
"$FHOOK" patch -p "$pid" --func work --with "$R:work_new" 2>"$TMP/err"
expect masked_sigtrap_note "$?:$(grep -c "thread $mtid blocked SIGTRAP; it is unblocked" "$TMP/err")" "0:1"
ok=0
for i in $(seq 10); do
	"$FHOOK" unpatch -p "$pid" 2>/dev/null &&
	"$FHOOK" patch -p "$pid" --func work --with "$R:work_new" 2>/dev/null && ok=$((ok + 1))
done
"$FHOOK" unpatch -p "$pid" 2>/dev/null
expect masked_cycles "$ok" 10
expect masked_exit "$(stop_prog)" "calls ok, bad 0"

# ---- another thread in the middle of dlopen (the loader's lock held) ----
start_prog 2
expect dlopen_started "$(ask "dlopen $ROOT/build/tests/attach/att_slow.so")" "dlopen started"
"$FHOOK" patch -p "$pid" --func ping --with "$R:ping_new" 2>/dev/null
expect dlopen_patch_status "$?" 0
expect dlopen_patched "$(ask 'call 9')" "ping 9 -> -9"
expect dlopen_finished "$(ask dlwait)" "dlopen done"
"$FHOOK" unpatch -p "$pid" 2>/dev/null
expect dlopen_unpatched "$(ask 'call 9')" "ping 9 -> 10"
expect dlopen_exit "$(stop_prog)" "calls ok, bad 0"
