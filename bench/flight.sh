#!/bin/bash
# SPDX-License-Identifier: LGPL-2.1-or-later
#
# The flight recorder's cost: bench/flight_prog (2 threads, ~1M calls a
# second each) untraced, under `fhook record` (entry and return of work())
# and under `fhook record --flight-recorder` (the same events kept in
# memory, dumped at the end).  CPU time (user + system, of the program and
# of fhook), the best of 3; ratios to the untraced run.  Target: the flight recorder within 5% of untraced.
# Prints a Markdown table (bench/run.sh appends it to RESULTS.md).
set -u
cd "$(dirname "$0")/.."
ROOT=$PWD
B=$ROOT/build/bench
FHOOK=$ROOT/build/fhook
mkdir -p "$B"
TMP=$(mktemp -d /tmp/fhook-flight-bench.XXXXXX)
trap 'rm -rf "$TMP"' EXIT
prog=$B/flight_prog
if [ ! -e "$prog" ] || [ bench/flight_prog.c -nt "$prog" ]; then
	cc -O2 -fpatchable-function-entry=5 -o "$prog" bench/flight_prog.c -lpthread || exit 1
fi
N=${FLIGHT_CALLS:-2000000}
EV=(-e 'f work' -e 'f work%return')

best() {	# best of 3 CPU seconds of "$@" and what it waited for
	local i t b=
	for i in 1 2 3; do
		/usr/bin/env time -f '%U %S' -o "$TMP/t" "$@" > /dev/null 2> /dev/null
		t=$(awk '{ print $1 + $2 }' "$TMP/t")
		b=$(awk -v a="$b" -v t="$t" 'BEGIN { print (a == "" || t < a) ? t : a }')
	done
	echo "$b"
}
untraced=$(best "$prog" 2 "$N")
record=$(best "$FHOOK" record "${EV[@]}" -o "$TMP/r.rec" -- "$prog" 2 "$N")
flight=$(best "$FHOOK" record --flight-recorder "${EV[@]}" -o "$TMP/f.rec" -- "$prog" 2 "$N")
ratio() { awk -v a="$1" -v b="$untraced" 'BEGIN { printf "%.3f", a / b }'; }
echo "### The flight recorder's cost"
echo
echo "bench/flight_prog: 2 threads, each $N calls of work() about 1 us apart (~1M calls a"
echo "second per thread); entry and return events; CPU seconds (user + system, the program's
and fhook's), the best of 3."
echo
echo "| run | seconds | / untraced | target |"
echo "|---|---|---|---|"
echo "| untraced | $untraced | 1.000 | |"
echo "| \`fhook record\` | $record | $(ratio "$record") | |"
echo "| \`fhook record --flight-recorder\` (2 MB a thread, dumped at the end) | $flight | $(ratio "$flight") | 1.05 |"
echo
echo "Load average (1, 5, 15 min) after the run, on $(nproc) CPUs: $(cut -d' ' -f1-3 /proc/loadavg)."
