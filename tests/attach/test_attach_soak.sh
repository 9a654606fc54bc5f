#!/bin/bash
# Attach soak: record -p and trace -p (entry and return events on work(),
# which 8 threads call without pause; --lossy: the threads never wait for
# the command) stopped by SIGTERM at a random moment (before, during or
# after the attach; before the command has its handler, the signal kills
# it) and now and then by SIGKILL, cycle after cycle, with a patch applied
# and removed between some of them.  (Not SIGINT: a shell's background
# commands start with it ignored, and the first moments would not stop.)  The process never crashes,
# every result it checks stays right, it keeps no descriptor of ours, and
# its text after the last detach is its text after the first.
#   FHOOK_ATTACH_SOAK_CYCLES (default 150; `make test-asan` runs fewer)
. "$(dirname "$0")/lib.sh"
CYCLES=${FHOOK_ATTACH_SOAK_CYCLES:-150}
RANDOM=${FHOOK_ATTACH_SOAK_SEED:-7}

# threads_where PID: each thread's state, wait channel and system call
threads_where() {
	local t
	for t in /proc/"$1"/task/*; do
		echo -n "[${t##*/} $(cut -d' ' -f3 "$t/stat" 2>/dev/null)" \
			"$(cat "$t/wchan" 2>/dev/null) $(cut -d' ' -f1 "$t/syscall" 2>/dev/null)] "
	done
}

start_prog 8
k0=$(dmesg 2>/dev/null | wc -l)
first= crashed=0 refused=0
for i in $(seq "$CYCLES"); do
	if [ $((i % 2)) = 0 ]; then cmd=record; else cmd=trace; fi
	"$FHOOK" "$cmd" -p "$pid" -e 'f work' -e 'f work%return $retval' --lossy -o /dev/null \
		2> "$TMP/serr" &
	spid=$!
	# a random moment: 0 to 400 ms after the start (the attach takes some of it)
	sleep "0.$(printf '%03d' $((RANDOM % 400)))"
	if [ $((i % 7)) = 3 ]; then sig=KILL; else sig=TERM; fi
	kill -$sig "$spid" 2>/dev/null
	# a command that does not end within 60 s is reported with where its
	# threads and the process's are, then killed (not left to the suite's timeout)
	for w in $(seq 600); do
		kill -0 "$spid" 2>/dev/null || break
		sleep 0.1
	done
	if kill -0 "$spid" 2>/dev/null; then
		crashed=$((crashed + 1))
		echo "cycle $i: fhook $cmd still running 60 s after SIG$sig; its threads:" \
			"$(threads_where "$spid"); the process's: $(threads_where "$pid");" \
			"it said: $(tail -2 "$TMP/serr" | tr '\n' ' ')"
		kill -KILL "$spid" 2>/dev/null
	fi
	wait "$spid"
	st=$?
	# killed by the signal sent is an end; a fault of its own is not
	if [ "$st" -ge 128 ] && [ "$st" != 143 ] && [ "$st" != 137 ]; then
		crashed=$((crashed + 1))
		echo "cycle $i: fhook $cmd ended with status $st: $(tail -2 "$TMP/serr" | tr '\n' ' ')"
	fi
	grep -q 'being recorded or traced by' "$TMP/serr" && refused=$((refused + 1))
	grep -q 'AddressSanitizer\|runtime error:' "$TMP/serr" &&
		{ crashed=$((crashed + 1)); echo "cycle $i: $(grep -m1 'ERROR\|runtime error' "$TMP/serr")"; }
	if ! kill -0 "$pid" 2>/dev/null; then
		# what there is to know of its end: the kernel's line on a fault, its last output
		echo "FAIL soak_alive: process gone at cycle $i (fhook $cmd stopped by SIG$sig;" \
			"kernel: $(dmesg 2>/dev/null | tail -n +$((k0 + 1)) | grep -a 'att_prog\[' | tail -1);" \
			"its last output: $(tail -3 "$out" | tr '\n' ' '); the command's:" \
			"$(tail -2 "$TMP/serr" | tr '\n' ' '))"
		exit 1
	fi
	if [ -z "$first" ] && grep -q 'detached from process' "$TMP/serr"; then
		first=$(text "$pid" work)
	fi
	if [ $((i % 10)) = 5 ]; then
		timeout 60 "$FHOOK" patch -p "$pid" --func work --with "$R:work_new" 2>/dev/null
		[ $? = 124 ] && { crashed=$((crashed + 1)); echo "cycle $i: patch -p hung:" \
			"the process's threads: $(threads_where "$pid")"; }
		timeout 60 "$FHOOK" unpatch -p "$pid" work 2>/dev/null
		[ $? = 124 ] && { crashed=$((crashed + 1)); echo "cycle $i: unpatch -p hung:" \
			"the process's threads: $(threads_where "$pid")"; }
	fi
done
expect "soak_${CYCLES}_cycles_commands_ended" "$crashed" 0
expect soak_none_refused "$refused" 0
expect soak_results "$(ask check)" "bad 0"
# (the last cycle's command may have been SIGKILLed: the process removes its
# probes by itself when its control thread sees that, a moment later: up
# to seconds on a machine whose CPUs many busy threads fill)
for i in $(seq 1500); do
	[ "$(text "$pid" work)" = "$first" ] && break
	sleep 0.02
done
expect soak_text_as_after_first_detach "$(text "$pid" work)" "$first"
# still attachable, and recording right
"$FHOOK" record -p "$pid" -e 'f work' -o "$TMP/last.rec" --duration 0.2 2> "$TMP/serr"
expect soak_last_record "$?:$(grep -o '[0-9]* lost' "$TMP/serr")" "0:0 lost"
# (a command killed between its two requests leaves the memory until the next attach)
expect soak_no_fd_left "$(ls -l /proc/"$pid"/fd | grep -c memfd)" 0
expect soak_exit "$(stop_prog)" "calls ok, bad 0"
