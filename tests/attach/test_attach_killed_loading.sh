#!/bin/bash
# `fhook record -p` killed by SIGKILL (which no command can make wait)
# while libfhook is being loaded into the process, the first time, by the
# loader thread the command started there: the process lives on, the
# loader thread ends by itself (its dlopen() returns into getppid() and
# pthread_exit(), not to address 0; found outside it, the thread sleeps
# out the rest of its 30 s sleep first), the process answers with right
# results, and the next attach records.  FHOOK_ATTACH_NO_LANDING=1 makes
# the command return to address 0 as before: then the process dies
# (FHOOK_TEST_EXPECT_DEATH=1 checks that this test sees it).
. "$(dirname "$0")/lib.sh"

case $(uname -m) in
x86_64) ;;
*)	echo "SKIP killed_loading: the landing is x86-64's (the return address is a register here)"
	exit 0 ;;
esac

# said FILE TEXT: until FILE holds TEXT (5 s at most; builtins only: a
# forked grep or sleep takes longer than the moment watched for)
said() {
	local l end=$((${EPOCHREALTIME/./} + 5000000))
	while [ "${EPOCHREALTIME/./}" -lt "$end" ]; do
		[ -e "$1" ] || continue
		while IFS= read -r l; do
			[[ $l == *"$2"* ]] && return 0
		done < "$1"
	done
	return 1
}

# spin MICROSECONDS: a busy wait, builtins only
spin() {
	local end=$((${EPOCHREALTIME/./} + $1))
	while [ "${EPOCHREALTIME/./}" -lt "$end" ]; do :; done
}

# threads PID: the process's threads but fhook's control thread
threads() {
	cat /proc/"$1"/task/*/comm 2>/dev/null | grep -vc '^fhook-ctl$'
}

n=0 dead=0 loading=0 left=0 why= asleep=0 ended=0
for us in 0 1000 2000 3000 4000 5000 6000 8000 10000 12000; do
	n=$((n + 1))
	start_prog 4
	nth=$(threads "$pid")
	ls /proc/"$pid"/task > "$TMP/tids.$n"
	FHOOK_ATTACH_VERBOSE=1 "$FHOOK" record -p "$pid" -e 'f work' -o /dev/null \
		2> "$TMP/err.$n" &
	spid=$!
	# the loader thread detached in its sleep: its dlopen() begins
	said "$TMP/err.$n" 'loader thread' ||
		echo "# cycle $n: no loader thread: $(tail -1 "$TMP/err.$n")"
	spin "$us"
	kill -KILL "$spid"
	wait "$spid" 2>/dev/null
	# (the command says how long dlopen() took once it has returned)
	inside=0
	grep -q 'dlopen of libfhook' "$TMP/err.$n" || { loading=$((loading + 1)); inside=1; }
	sleep 0.3
	if ! kill -0 "$pid" 2>/dev/null; then
		dead=$((dead + 1))
		echo "# cycle $n (SIGKILL $us us into the loader's dlopen): the process died"
		continue
	fi
	for i in $(seq 50); do
		[ "$(threads "$pid")" = "$nth" ] && break
		sleep 0.02
	done
	[ "$inside" = 1 ] && [ "$(threads "$pid")" = "$nth" ] && ended=$((ended + 1))
	# a loader thread the kill found stopped outside its dlopen() sleeps out
	# its 30 s (then returns from its start routine): in clock_nanosleep
	for t in /proc/"$pid"/task/*; do
		grep -qx "${t##*/}" "$TMP/tids.$n" && continue
		[ "$(cat "$t/comm" 2>/dev/null)" = fhook-ctl ] && continue
		# (clock_nanosleep, or its restart after the stop)
		case $(cut -d' ' -f1 "$t/syscall" 2>/dev/null) in
		230 | 219) asleep=$((asleep + 1)); continue ;;
		esac
		[ -e "$t" ] || continue
		left=$((left + 1))
		echo "# cycle $n: thread ${t##*/} left, in $(cat "$t/syscall" 2>/dev/null)"
	done
	a=$(ask 'call 7')
	[ "$a" = "ping 7 -> 8" ] || why="$why [cycle $n: 'call 7' answered '$a']"
	"$FHOOK" record -p "$pid" -e 'f work' -o "$TMP/again.rec" --duration 0.1 2> "$TMP/again.err"
	st=$?
	[ $st = 0 ] && grep -q ' 0 lost' "$TMP/again.err" ||
		why="$why [cycle $n: the next attach: $st: $(grep -v 'warning' "$TMP/again.err" | tail -2 | tr '\n' ' ')]"
	a=$(stop_prog)
	[ "$a" = "calls ok, bad 0" ] || why="$why [cycle $n: at the end: '$a']"
done
if [ -n "$FHOOK_TEST_EXPECT_DEATH" ]; then
	expect killed_loading_dies_without_landing "$([ "$dead" -gt 0 ] && echo died)" died
	exit 0
fi
expect killed_loading_process_lives "$dead" 0
expect killed_loading_loader_ended "$left" 0
expect killed_loading_results_and_next_attach "$why" ""
echo "# $loading of $n kills before dlopen() returned, $ended of those loaders ended; $asleep asleep"
# kills inside dlopen() (10-20 ms; the kills come 0-12 ms into it) end
# their loader by the landing
expect killed_loading_landing_taken "$([ "$ended" -ge 2 ] && echo yes)" yes
