#!/bin/bash
# A stop signal (SIGTERM, SIGHUP) sent to `fhook record -p` or
# `fhook trace -p` while it attaches for the first time, libfhook being
# loaded into the process by a call the command makes there: the signal
# waits until the process's threads are let go, the command then detaches
# as after any stop, and the process lives on, answering, with its text as
# before and none of the command's memory left open.  (Killed there, the
# command would leave the loading thread to return to address 0.)  Not
# SIGINT: a shell's background commands start with it ignored.
. "$(dirname "$0")/lib.sh"

# traced PID: does a thread of PID have a tracer now?  (builtins only: a
# forked grep takes longer than some of the moments watched for)
traced() {
	local f l
	for f in /proc/"$1"/task/*/status; do
		while read -r l; do
			[[ $l == TracerPid:* ]] || continue
			[[ ${l##*[[:space:]]} != 0 ]] && return 0
			break
		done < "$f" 2>/dev/null
	done
	return 1
}

# spin MICROSECONDS: a busy wait, builtins only
spin() {
	local end=$((${EPOCHREALTIME/./} + $1))
	while [ "${EPOCHREALTIME/./}" -lt "$end" ]; do :; done
}

n=0 dead=0 killed=0 left=0 text_bad=0 during=0
# (from the moment the command stops the process's first thread: the
# loading takes about 20-40 ms from there).  Usually 10-11 of the first
# 12 signals come while the command holds a thread; on a machine busy
# enough that fewer do, the delays are run again (three times at most)
DELAYS="0 500 1000 2000 3000 4000 5000 6000 8000 10000 13000 16000"
for us in $DELAYS $DELAYS $DELAYS; do
	[ "$n" -ge 12 ] && [ "$during" -ge 6 ] && break
	n=$((n + 1))
	if [ $((n % 3)) = 0 ]; then sig=HUP; else sig=TERM; fi
	if [ $((n % 2)) = 0 ]; then cmd=record; else cmd=trace; fi
	start_prog 4
	before=$(text "$pid" work)
	"$FHOOK" "$cmd" -p "$pid" -e 'f work' -e 'f work%return $retval' -o /dev/null --duration 20 \
		2> "$TMP/err.$n" &
	spid=$!
	end=$((${EPOCHREALTIME/./} + 5000000))
	until traced "$pid" || [ "${EPOCHREALTIME/./}" -gt "$end" ]; do :; done
	spin "$us"
	was=0
	traced "$pid" && was=1 during=$((during + 1))
	kill -"$sig" "$spid"
	wait "$spid"
	st=$?
	# sent while the command had a thread of the process, the signal is to
	# wait for the command's own end
	if [ "$was" = 1 ] && { [ "$st" = 129 ] || [ "$st" = 143 ]; }; then
		killed=$((killed + 1))
		echo "# $cmd, $sig after ${us} us: the command was killed mid-attach"
	fi
	sleep 0.2
	if ! kill -0 "$pid" 2>/dev/null; then
		dead=$((dead + 1))
		echo "# $cmd, $sig after ${us} us: the process died; the command said:"
		sed 's/^/#   /' "$TMP/err.$n"
		continue
	fi
	[ "$(ask 'call 7')" = "ping 7 -> 8" ] ||
		{ dead=$((dead + 1)); echo "# $cmd, $sig after ${us} us: no answer"; }
	# the probes go when the command detaches (or its control thread sees it gone)
	for i in $(seq 150); do
		[ "$(text "$pid" work | cut -c1-10)" = "$(echo "$before" | cut -c1-10)" ] ||
		[ "$(text "$pid" work | cut -c1-10)" = 0f1f440000 ] && break
		sleep 0.02
	done
	case "$(text "$pid" work | cut -c1-10)" in
	0f1f440000 | "$(echo "$before" | cut -c1-10)") ;;
	*) text_bad=$((text_bad + 1)); echo "# $cmd, $sig after ${us} us: work() still patched" ;;
	esac
	[ "$(ls -l /proc/"$pid"/fd | grep -c memfd)" = 0 ] ||
		{ left=$((left + 1)); echo "# $cmd, $sig after ${us} us: a memfd left open"; }
	# a later attach records
	"$FHOOK" record -p "$pid" -e 'f work' -o "$TMP/again.rec" --duration 0.1 2> "$TMP/again.err"
	[ $? = 0 ] && grep -q ' 0 lost' "$TMP/again.err" ||
		{ dead=$((dead + 1)); echo "# $cmd, $sig after ${us} us: the next attach: $(tail -1 "$TMP/again.err")"; }
	[ "$(stop_prog)" = "calls ok, bad 0" ] ||
		{ dead=$((dead + 1)); echo "# $cmd, $sig after ${us} us: wrong results"; }
done
expect stopped_mid_attach_process_lives "$dead" 0
expect stopped_mid_attach_not_killed "$killed" 0
expect stopped_mid_attach_text_restored "$text_bad" 0
expect stopped_mid_attach_no_memfd_left "$left" 0
# at least 6 signals came while a thread of the process was the command's
echo "# $during of $n signals while the command held a thread"
expect stopped_mid_attach_while_traced "$([ "$during" -ge 6 ] && echo yes)" yes
