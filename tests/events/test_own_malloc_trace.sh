#!/bin/bash
# fhook's own calls are never traced: a program with its own allocator under
# `fhook trace -e 'f *' -e 'f *%return'`.  Before main the trace holds only
# what the program's constructor called (fhook's start-up allocates through
# the program's malloc, registering the probes and patching text), and
# nothing is missed, also with a thread that starts and exits.
set -o pipefail
cd "${FHOOK_ROOT:-$(dirname "$0")/../..}" || exit 2
B=${FHOOK_BUILD:-build}
FHOOK=${FHOOK_CLI:-$B/fhook}
PROG=$B/tests/events/own_malloc_prog
[ -x "$PROG" ] || make -s "$PROG" >/dev/null 2>&1
if [ ! -x "$FHOOK" ] || [ ! -x "$PROG" ]; then
	echo "SKIP own_malloc_trace: $FHOOK or $PROG not built"
	exit 0
fi
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

timeout 60 "$FHOOK" trace -e 'f *' -e 'f *%return' -o "$tmp/trace" -- "$PROG" \
	> "$tmp/out" 2> "$tmp/err"
st=$?
if [ $st != 0 ]; then
	echo "FAIL own_malloc_trace: status $st: $(head -3 "$tmp/err")"
	exit 0
fi
# the functions entered before main, in order
pre=$(sed -n '/(main+0x0\//q; s/.*entry: (\([A-Za-z_0-9.]*\)+0x0\/.*/\1/p' "$tmp/trace" | tr '\n' ' ')
want="ctor own_constructor malloc bump free "
if [ "$pre" = "$want" ]; then
	echo "PASS own_malloc_trace/before_main"
else
	echo "FAIL own_malloc_trace/before_main: entered \"$pre\", expected \"$want\""
fi
if grep -q '(main+0x0/' "$tmp/trace" && grep -q '(thread_body+0x0/' "$tmp/trace"; then
	echo "PASS own_malloc_trace/traced"
else
	echo "FAIL own_malloc_trace/traced: main or the thread missing: $(head -3 "$tmp/trace")"
fi
if grep -q ' 0 nmissed' "$tmp/err"; then
	echo "PASS own_malloc_trace/nmissed"
else
	echo "FAIL own_malloc_trace/nmissed: $(tail -1 "$tmp/err")"
fi
