#!/bin/bash
# SPDX-License-Identifier: LGPL-2.1-or-later
#
# The tracer killed: a process with 2 threads calling work() in a loop is
# attached to (`fhook record -p` and `fhook trace -p`, entry and return
# events on work), then the command is killed with SIGKILL.  The rate of
# calls is measured before the attach, while attached, and from 1 s after
# the kill: the process must be back at its untraced rate (it removes the
# probes itself when it sees its tracer gone).
# Prints a Markdown table (bench/run.sh appends it to ATTACH.md).
#   bash bench/tracer_killed.sh
set -u
cd "$(dirname "$0")/.."
ROOT=$PWD
B=$ROOT/build/bench
FHOOK=$ROOT/build/fhook
mkdir -p "$B"
TMP=$(mktemp -d /tmp/fhook-killed-bench.XXXXXX)
PID=
trap '[ -n "$PID" ] && kill $PID 2>/dev/null; rm -rf "$TMP"' EXIT
prog=$B/spin_rate
if [ ! -e "$prog" ] || [ bench/spin_rate.c -nt "$prog" ]; then
	cc -O2 -fpatchable-function-entry=5 -o "$prog" bench/spin_rate.c -lpthread || exit 1
fi

# rate FROM_LINE N: the median of N interval counts from line FROM_LINE of the output
rate() {
	local i
	for i in $(seq 100); do
		[ "$(wc -l < "$TMP/out")" -ge $(($1 + $2)) ] && break
		sleep 0.1
	done
	sed -n "$(($1 + 1)),$(($1 + $2))p" "$TMP/out" | sort -n | sed -n "$((($2 + 1) / 2))p"
}

echo "### The tracer killed: the process's own speed afterwards"
echo
echo "bench/spin_rate (2 threads calling work() in a loop), calls per 200 ms, median of 5"
echo "intervals; after the kill: from 1 s on. Target: after / before = 1.0 (within noise)."
echo
echo "| command killed | before attach | attached | after SIGKILL | after / before |"
echo "|---|---|---|---|---|"
for cmd in record trace; do
	"$prog" 2 > "$TMP/out" 2> /dev/null &
	PID=$!
	for i in $(seq 100); do grep -q ready "$TMP/out" && break; sleep 0.02; done
	before=$(rate 3 5)
	"$FHOOK" "$cmd" -p "$PID" -e 'f work' -e 'f work%return' -o "$TMP/x.out" \
		--lossy 2> "$TMP/err" &
	fp=$!
	for i in $(seq 250); do grep -q 'attached to' "$TMP/err" && break; sleep 0.02; done
	at=$(wc -l < "$TMP/out")
	during=$(rate "$at" 5)
	kill -KILL "$fp"
	wait "$fp" 2> /dev/null
	sleep 1
	at=$(wc -l < "$TMP/out")
	after=$(rate "$at" 5)
	kill "$PID"
	wait "$PID" 2> /dev/null
	PID=
	echo "| $cmd -p | $before | $during | $after | $(awk -v a="$after" -v b="$before" \
		'BEGIN { printf "%.2f", b ? a / b : 0 }') |"
done
