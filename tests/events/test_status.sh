#!/bin/bash
# The status line: with the trace going to a file and stderr on a terminal,
# fhook trace rewrites one line with the counts while the program runs.
# Each run must exit 0: a crash after the last event is a failure too.
cd "$FHOOK_ROOT" || exit 2
T=$(mktemp -d)
trap 'rm -rf $T' EXIT
if ! gcc -O1 $(build/fhook cflags) -o $T/p tests/events/status_prog.c; then
	echo "FAIL status_build: gcc failed"
	exit 1
fi
if ! command -v script >/dev/null; then
	echo "SKIP status_line: no script(1) for a terminal"
	exit 0
fi
script -qec "build/fhook trace -o $T/trace.txt -e 'f tick \$arg1' -- $T/p" $T/tty.txt >/dev/null 2>&1
st=$?
[ "$st" = 0 ] && echo "PASS status_run" || echo "FAIL status_run: exit $st"
n=$(grep -c 'tick__entry' $T/trace.txt)
[ "$n" = 50 ] && echo "PASS status_trace_complete" || echo "FAIL status_trace_complete: $n lines"
if tr '\r' '\n' < $T/tty.txt | grep -Eq '^fhook: trace: [0-9]+ events, 0 nmissed, 0 lost'; then
	echo "PASS status_line_shown"
else
	echo "FAIL status_line_shown: $(tr '\r' '|' < $T/tty.txt | head -c 300)"
fi
grep -q 'fhook: trace: 50 events, 0 nmissed, 0 lost' $T/tty.txt &&
	echo "PASS status_summary" || echo "FAIL status_summary"
# not on a terminal: no status line
build/fhook trace -o $T/t2.txt -e 'f tick' -- $T/p 2>$T/err.txt
st=$?
if [ $st != 0 ]; then
	echo "FAIL no_status_without_tty: exit $st: $(tail -2 $T/err.txt)"
elif grep -q $'\r' $T/err.txt; then
	echo "FAIL no_status_without_tty"
else
	echo "PASS no_status_without_tty"
fi
