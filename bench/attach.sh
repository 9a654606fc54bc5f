#!/bin/bash
# SPDX-License-Identifier: LGPL-2.1-or-later
#
# Attaching to a running process: a process with
# 20,000 functions and 8 busy threads, started without fhook.
#   - threads stopped per attach: how long every thread is stopped at once
#     (FHOOK_ATTACH_VERBOSE reports it), the first attach (libfhook loaded,
#     pads rewritten) and later ones (the control thread's socket: none);
#   - first event: from starting `fhook trace -p` to its first event line;
#   - detach: from Ctrl-C to `fhook trace -p` having removed every probe
#     and exited; and `fhook unpatch -p`.
# Prints a Markdown table (bench/run.sh appends it to RESULTS.md).
#   bash bench/attach.sh [NFUNCS]
set -u
cd "$(dirname "$0")/.."
ROOT=$PWD
N=${1:-20000}
B=$ROOT/build/bench
FHOOK=$ROOT/build/fhook
mkdir -p "$B"
TMP=$(mktemp -d /tmp/fhook-attach-bench.XXXXXX)
PID=
trap '[ -n "$PID" ] && kill $PID 2>/dev/null; rm -rf "$TMP"' EXIT

stamp=$B/stamp_exec
if [ ! -e "$stamp" ] || [ bench/stamp_exec.c -nt "$stamp" ]; then
	cc -O2 -o "$stamp" bench/stamp_exec.c || exit 1
fi
prog=$B/attach_prog_$N
if [ ! -e "$prog" ] || [ bench/attach_prog.c -nt "$prog" ]; then
	bash bench/gen_funcs.sh "$N" > "$TMP/gen.c"
	cc -O1 -fpatchable-function-entry=5 -o "$prog" bench/attach_prog.c "$TMP/gen.c" -lpthread ||
		exit 1
fi
ms() { echo $(( $(date +%s%N) / 1000 )); }	# microseconds

"$prog" > "$TMP/out" &
PID=$!
for i in $(seq 200); do grep -q ready "$TMP/out" && break; sleep 0.01; done

# attach cost: first (libfhook loaded) and later attaches, by patch/unpatch.
# The first attach of four more fresh processes too: it varies with where the
# busy threads are when they are stopped
first_att() {
	FHOOK_ATTACH_VERBOSE=1 "$FHOOK" patch -p $1 --list 2>&1 >/dev/null |
		grep -E 'stopping [0-9]+ threads took|threads stopped for' > "$TMP/first"
	# in all: every thread stopped together, then one while it starts the loader thread
	w=$(grep -o 'stopped for [0-9.]* ms' "$TMP/first" | head -1 | grep -o '[0-9.]*')
	l=$(grep -o 'then 1 for [0-9.]* ms' "$TMP/first" | head -1 | grep -o '[0-9][0-9.]*' | tail -1)
	awk -v w="${w:-0}" -v l="${l:-0}" 'BEGIN { printf "%.2f\n", w + l }'
	grep -o 'took [0-9.]* ms, the pads [0-9.]* ms ([0-9]* page faults; [0-9]* threads moved' "$TMP/first" |
		sed 's/took //; s/ ms, the pads / + /; s/ ms (/ (/; s/ page faults; / faults, /; s/ threads moved$/ moved)/' |
		tr -d '\n' >&2
	echo " + ${l:-?}" >&2
}
first=$(first_att $PID 2>"$TMP/split")
first_split=$(cat "$TMP/split")
# (the first process is held meanwhile: its 8 threads would double the load)
kill -STOP $PID
for i in 1 2 3 4; do
	"$prog" > "$TMP/out2" &
	p2=$!
	for j in $(seq 200); do grep -q ready "$TMP/out2" && break; sleep 0.01; done
	first="$first $(first_att $p2 2>>"$TMP/split")"
	kill $p2; wait $p2 2>/dev/null
done
kill -CONT $PID
first_sorted=$(printf '%s\n' $first | sort -n | tr '\n' ' ')
first_split=$(tr '\n' ';' < "$TMP/split" | sed 's/;$//; s/;/; /g')
# later attaches: the channel each one used (the control thread's socket, or a ptrace call)
later=() chans=()
for i in 1 2 3 4 5; do
	FHOOK_ATTACH_VERBOSE=1 "$FHOOK" patch -p $PID --list 2>"$TMP/verbose" >/dev/null
	later+=("$(grep -o 'stopped for [0-9.]* ms' "$TMP/verbose" | grep -o '[0-9.]*')")
	chans+=("$(grep -o 'channel: [a-z ]*' "$TMP/verbose" | head -1 | cut -d' ' -f2-)")
done
later_sorted=$(printf '%s\n' "${later[@]}" | sort -n | tr '\n' ' ')
later_chans=$(printf '%s\n' "${chans[@]}" | sort | uniq -c |
	awk '{ n = $1; $1 = ""; printf "%s%s x%d", sep, substr($0, 2), n; sep = ", " }')

# first event and detach, trace -p on a function the threads call: the
# first event's time stamp (CLOCK_MONOTONIC) against the command's start
# (stamp_exec takes it, then becomes the command)
lat=() det=()
for i in 1 2 3; do
	: > "$TMP/ev"
	FHOOK_ATTACH_VERBOSE=1 "$stamp" "$FHOOK" trace -p $PID -e 'f f123' \
		-o "$TMP/ev" --lossy 2>"$TMP/err" &
	tp=$!
	while ! grep -q 'attached to' "$TMP/err" && kill -0 $tp 2>/dev/null; do sleep 0.01; done
	sleep 0.3
	kill -INT $tp
	wait $tp
	t0=$(awk '/^stamp / { print $2; exit }' "$TMP/err")
	t1=$(awk '/__entry/ { sub(":", "", $3); print $3; exit }' "$TMP/ev")
	lat+=($(awk -v a="$t0" -v b="$t1" 'BEGIN { printf "%.0f", (b - a) * 1000 }'))
	det+=($(grep -o 'detach took [0-9.]*' "$TMP/err" | grep -o '[0-9.]*$'))
done
echo "| attach (process with $N functions, 8 busy threads) | this run | target |"
echo "|---|---|---|"
echo "| threads stopped in all, first attach of 5 processes (pads rewritten, libfhook loaded; ms, sorted) | $first_sorted(each: stopping all + pads with all stopped (page faults then, threads moved past the rest of a pad) + the thread kept for the calls, from its stop until it is let go (it starts fhook's loader thread, which then loads libfhook and starts the control thread while every thread of the program runs): $first_split) | 10 ms |"
echo "| threads stopped, later attaches (ms, sorted; channel) | $later_sorted($later_chans) | 10 ms |"
echo "| first event after \`fhook trace -p\` starts (ms) | ${lat[*]} | 100 ms |"
echo "| detach: Ctrl-C to every probe removed and the process let go (ms) | ${det[*]} | 50 ms |"

# the matrix: 1k and 20k functions, 1, 8 and 64 busy threads; one sample each
echo
echo "| functions | threads | first attach: threads stopped (ms) | second attach: threads stopped (ms; channel) | first event after \`fhook trace -p\` starts (ms) |"
echo "|---|---|---|---|---|"
for n in 1000 20000; do
	mprog=$B/attach_prog_$n
	if [ ! -e "$mprog" ] || [ bench/attach_prog.c -nt "$mprog" ]; then
		bash bench/gen_funcs.sh "$n" > "$TMP/gen.c"
		cc -O1 -fpatchable-function-entry=5 -o "$mprog" bench/attach_prog.c "$TMP/gen.c" \
			-lpthread || exit 1
	fi
	for t in 1 8 64; do
		"$mprog" "$t" > "$TMP/mout" &
		mp=$!
		for i in $(seq 200); do grep -q ready "$TMP/mout" && break; sleep 0.01; done
		f1=$(first_att $mp 2>/dev/null)
		FHOOK_ATTACH_VERBOSE=1 "$FHOOK" patch -p $mp --list 2>"$TMP/verbose" >/dev/null
		s2=$(grep -o 'stopped for [0-9.]* ms' "$TMP/verbose" | grep -o '[0-9.]*' | head -1)
		c2=$(grep -o 'channel: [a-z ]*' "$TMP/verbose" | head -1 | cut -d' ' -f2-)
		: > "$TMP/ev"
		FHOOK_ATTACH_VERBOSE=1 "$stamp" "$FHOOK" trace -p $mp -e 'f f123' -o "$TMP/ev" \
			--lossy 2>"$TMP/err" &
		tp=$!
		while ! grep -q 'attached to' "$TMP/err" && kill -0 $tp 2>/dev/null; do
			sleep 0.01
		done
		sleep 0.3
		kill -INT $tp
		wait $tp
		t0=$(awk '/^stamp / { print $2; exit }' "$TMP/err")
		t1=$(awk '/__entry/ { sub(":", "", $3); print $3; exit }' "$TMP/ev")
		ev=$(awk -v a="$t0" -v b="$t1" 'BEGIN { if (b == "") print "none"; else printf "%.0f", (b - a) * 1000 }')
		kill $mp; wait $mp 2>/dev/null
		echo "| $n | $t | $f1 | ${s2:-0.00} ($c2) | $ev |"
	done
done
echo
echo "Target: no thread stopped for longer than 1 ms once a process has been attached before"
echo "(the second attach); the first attach stops every thread while the pads are rewritten."

# the times are mostly waits for a CPU: how busy the machine was says how to read them
echo
echo "Load average (1, 5, 15 min) after the run, on $(nproc) CPUs: $(cut -d' ' -f1-3 /proc/loadavg)."
