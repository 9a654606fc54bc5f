#!/bin/bash
# fhook trace on the known program, checked line by line in the three
# formats (timestamps, pids, tids, cpus and stack addresses normalized);
# then --caller, following a child, --no-follow, and the program's own
# stdout staying its own.  Every run must exit 0: a crash after the last
# event is a failure too.
cd "${FHOOK_ROOT:-$(dirname "$0")/../..}" || exit 2
B=${FHOOK_BUILD:-build}
FHOOK=${FHOOK_CLI:-$B/fhook}
PROG=$B/tests/events/prog
[ -x "$PROG" ] || make -s "$PROG" >/dev/null 2>&1
if [ ! -x "$FHOOK" ] || [ ! -x "$PROG" ]; then
	echo "SKIP trace: $FHOOK or $PROG not built"
	exit 0
fi
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

. tests/events/lib.sh

check_format() {
	local fmt=$1
	"$FHOOK" trace "${EVENTS[@]}" --format "$fmt" -o "$tmp/$fmt" -- "$PROG" \
		> "$tmp/$fmt.stdout" 2> "$tmp/$fmt.stderr"
	local st=$?
	normalize < "$tmp/$fmt" > "$tmp/$fmt.norm"
	if [ $st != 0 ]; then
		echo "FAIL trace/$fmt: status $st: $(head -3 "$tmp/$fmt.stderr")"
		return
	fi
	local n=0 bad=0
	while IFS= read -r want; do
		n=$((n + 1))
		got=$(sed -n "${n}p" "$tmp/$fmt.norm")
		if [ "$got" != "$want" ]; then
			echo "FAIL trace/$fmt/line$n: got '$got', expected '$want'"
			bad=1
		fi
	done < "$(exp_file "trace.$fmt")"
	if [ "$(wc -l < "$tmp/$fmt.norm")" != "$n" ]; then
		echo "FAIL trace/$fmt/lines: $(wc -l < "$tmp/$fmt.norm") lines, expected $n"
		bad=1
	fi
	[ $bad = 0 ] && echo "PASS trace/$fmt ($n lines)"
	if grep -q '^run 55$' "$tmp/$fmt.stdout"; then
		echo "PASS trace/$fmt/stdout"
	else
		echo "FAIL trace/$fmt/stdout: the program's stdout was '$(cat "$tmp/$fmt.stdout")'"
	fi
	if grep -q '^fhook: trace: 13 events, 0 nmissed, 0 lost$' "$tmp/$fmt.stderr"; then
		echo "PASS trace/$fmt/summary"
	else
		echo "FAIL trace/$fmt/summary: $(tail -1 "$tmp/$fmt.stderr")"
	fi
}

for fmt in text json chrome; do
	check_format $fmt
done
if command -v python3 >/dev/null; then
	if python3 -c 'import json,sys; d=json.load(open(sys.argv[1])); assert len(d["traceEvents"]) == 13' "$tmp/chrome" 2>/dev/null &&
	   python3 -c 'import json,sys; [json.loads(l) for l in open(sys.argv[1])]' "$tmp/json" 2>/dev/null; then
		echo "PASS trace/json-valid"
	else
		echo "FAIL trace/json-valid: the json or chrome output does not parse"
	fi
fi

# --caller: fact's calls from run only (not its recursive calls)
"$FHOOK" trace -e 'f fact n' --caller run -o "$tmp/caller" -- "$PROG" >/dev/null 2>&1
st=$?
if [ $st = 0 ] && [ "$(grep -c fact__entry "$tmp/caller")" = 1 ] && grep -q 'n=3$' "$tmp/caller"; then
	echo "PASS trace/caller"
else
	echo "FAIL trace/caller: exit $st: $(cat "$tmp/caller")"
fi

# a child process is traced, unless --no-follow
if [ -n "$NO_EXEC" ]; then
	echo "SKIP trace/follow: the child execs: $NO_EXEC"
	echo "SKIP trace/no-follow: the child execs: $NO_EXEC"
else
	"$FHOOK" trace -e 'f add a b' -o "$tmp/follow" -- "$PROG" child >/dev/null 2>&1
	st_follow=$?
	"$FHOOK" trace -e 'f add a b' --no-follow -o "$tmp/nofollow" -- "$PROG" child >/dev/null 2>&1
	st_nofollow=$?
	pids=$(sed -E 's/.*prog-([0-9]+).*/\1/' "$tmp/follow" | sort -u | wc -l)
	if [ $st_follow = 0 ] && [ "$(grep -c add__entry "$tmp/follow")" = 2 ] && [ "$pids" = 2 ]; then
		echo "PASS trace/follow"
	else
		echo "FAIL trace/follow: exit $st_follow: $(cat "$tmp/follow")"
	fi
	if [ $st_nofollow = 0 ] && [ "$(grep -c add__entry "$tmp/nofollow")" = 1 ]; then
		echo "PASS trace/no-follow"
	else
		echo "FAIL trace/no-follow: exit $st_nofollow: $(cat "$tmp/nofollow")"
	fi
fi

# many events: every one is either printed or counted as lost
"$FHOOK" trace -e 'f add a b' -e 'f add%return $retval' -o "$tmp/loop" -- "$PROG" loop 200000 \
	> /dev/null 2> "$tmp/loop.err"
st=$?
printed=$(wc -l < "$tmp/loop")
sum=$(sed -nE 's/^fhook: trace: ([0-9]+) events, ([0-9]+) nmissed, ([0-9]+) lost$/\1 \3/p' "$tmp/loop.err")
ev=${sum% *} lost=${sum#* }
if [ $st = 0 ] && [ -n "$sum" ] && [ "$printed" = "$ev" ] && [ $((ev + lost)) = 400000 ]; then
	echo "PASS trace/accounting ($ev printed, $lost lost)"
else
	echo "FAIL trace/accounting: exit $st, printed $printed, summary '$(tail -1 "$tmp/loop.err")'"
fi

# more threads and processes than the trace has rings (256) and process
# mailboxes (256): rings of threads that are gone are reused, every
# process is symbolized, every event is printed or counted as lost
many() {	# many MODE N
	local mode=$1 n=$2 out ev lost raw st
	"$FHOOK" trace -e 'f add a b' -o "$tmp/$mode" -- "$PROG" "$mode" "$n" \
		> "$tmp/$mode.stdout" 2> "$tmp/$mode.err"
	st=$?
	out=$(sed -nE 's/^fhook: trace: ([0-9]+) events, 0 nmissed, ([0-9]+) lost$/\1 \2/p' "$tmp/$mode.err")
	ev=${out% *} lost=${out#* }
	raw=$(grep -vc ": add__entry: (add+$SITE_OFF/0x" "$tmp/$mode")
	if [ $st != 0 ]; then
		echo "FAIL trace/many-$mode: exit $st: $(tail -2 "$tmp/$mode.err")"
	elif [ -z "$out" ]; then
		echo "FAIL trace/many-$mode: summary '$(tail -1 "$tmp/$mode.err")'"
	elif [ $((ev + lost)) != "$n" ] || [ "$(wc -l < "$tmp/$mode")" != "$ev" ]; then
		echo "FAIL trace/many-$mode: $ev events + $lost lost, $(wc -l < "$tmp/$mode") lines, for $n calls"
	elif [ "$ev" -le $((n / 2)) ]; then
		echo "FAIL trace/many-$mode: only $ev of $n calls recorded (rings or mailboxes not reused?)"
	elif [ "$raw" != 0 ]; then
		echo "FAIL trace/many-$mode: $raw events not symbolized: $(grep -vm1 "add+$SITE_OFF" "$tmp/$mode")"
	else
		echo "PASS trace/many-$mode ($ev of $n recorded, $lost lost, all symbolized)"
	fi
}
many threads 1000
many forks 600
