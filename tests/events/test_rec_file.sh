#!/bin/bash
# The recording's file: fhook record writes it by direct I/O where the file
# system allows it, through the page cache with --page-cache or where it does
# not (refused at open, or at the first write), and the recording is the
# same every way: every event, the exact call counts, a finished end.  A
# reader sees the file grow while the program runs (within about a second).
set -o pipefail
cd "${FHOOK_ROOT:-$(dirname "$0")/../..}" || exit 2
B=${FHOOK_BUILD:-build}
FHOOK=${FHOOK_CLI:-$B/fhook}
RP=$B/tests/events/rec_prog
SHIM=$PWD/$B/tests/events/no_direct_io.so
[ -x "$RP" ] || make -s "$RP" >/dev/null 2>&1
[ -f "$SHIM" ] || make -s "$SHIM" >/dev/null 2>&1
if [ ! -x "$FHOOK" ] || [ ! -x "$RP" ] || [ ! -f "$SHIM" ]; then
	echo "SKIP rec_file: $FHOOK or the test programs are not built"
	exit 0
fi
tmp=$(mktemp -d)
trap 'umount "$tmp/small" 2>/dev/null; rm -rf "$tmp"' EXIT
pass() { echo "PASS rec_file/$1"; }
fail() { echo "FAIL rec_file/$1: $2"; }

. tests/events/lib.sh

# 2 threads x 300000 calls of leaf(): 1200006 events, 19.5 MB, several of the
# direct writes' 4 MiB buffers and an unaligned tail
N=1200006
# check NAME REC ERR: the recording holds every event, exactly
check() {
	local name=$1 rec=$2 err=$3 info calls lines

	info=$("$FHOOK" info "$rec" 2>&1)
	calls=$("$FHOOK" report "$rec" 2>/dev/null | awk '$NF == "leaf" { print $5 }')
	lines=$("$FHOOK" replay "$rec" 2>/dev/null | wc -l)
	if grep -q "^fhook: record: $N events, 0 nmissed, 0 lost" "$err" &&
	   grep -qx "events: *$N" <<< "$info" && grep -qx "ended: *finished" <<< "$info" &&
	   [ "$calls" = 600000 ] && [ "$lines" = "$N" ]; then
		pass "$name ($(stat -c %s "$rec") bytes)"
	else
		fail "$name" "leaf $calls calls, $lines lines; $(cat "$err"); $info"
	fi
}

# by default, and through the page cache
FHOOK_TEST_DIRECT_IO=count FHOOK_TEST_DIRECT_IO_LOG=$tmp/direct.log LD_PRELOAD=$SHIM \
	"$FHOOK" record -o "$tmp/d.rec" -- "$RP" mt 2 300000 2>"$tmp/d.err"
st=$?
[ $st = 0 ] && check direct "$tmp/d.rec" "$tmp/d.err" || fail direct "exit $st: $(cat "$tmp/d.err")"
# (the file system of the test's directory may have no direct I/O: then it is not asserted)
if [ -s "$tmp/direct.log" ]; then
	if [ "$(cat "$tmp/direct.log")" -ge $((16 * 1024 * 1024)) ]; then
		pass "direct-used ($(cat "$tmp/direct.log") bytes by O_DIRECT)"
	else
		fail direct-used "only $(cat "$tmp/direct.log") bytes by O_DIRECT"
	fi
elif ! dd if=/dev/zero of="$tmp/dd" bs=4096 count=1 oflag=direct 2>/dev/null; then
	echo "SKIP rec_file/direct-used: the test's file system has no direct I/O"
else
	fail direct-used "nothing was written by O_DIRECT"
fi
FHOOK_TEST_DIRECT_IO=count FHOOK_TEST_DIRECT_IO_LOG=$tmp/pc.log LD_PRELOAD=$SHIM \
	"$FHOOK" record --page-cache -o "$tmp/p.rec" -- "$RP" mt 2 300000 2>"$tmp/p.err"
st=$?
if [ $st = 0 ] && [ ! -s "$tmp/pc.log" ]; then
	check page-cache "$tmp/p.rec" "$tmp/p.err"
else
	fail page-cache "exit $st, $(cat "$tmp/pc.log" 2>/dev/null) bytes by O_DIRECT: $(cat "$tmp/p.err")"
fi

# a file system that refuses O_DIRECT at open, and one that refuses the writes
for how in open write; do
	FHOOK_TEST_DIRECT_IO=$how LD_PRELOAD=$SHIM \
		"$FHOOK" record -o "$tmp/$how.rec" -- "$RP" mt 2 300000 2>"$tmp/$how.err"
	st=$?
	[ $st = 0 ] && check "refused-at-$how" "$tmp/$how.rec" "$tmp/$how.err" ||
		fail "refused-at-$how" "exit $st: $(cat "$tmp/$how.err")"
done

# a disk that fills after some of the buffers were written: the file ends with
# a whole block, and every event is either in it or counted as lost
if [ "$(id -u)" = 0 ] && mkdir -p "$tmp/small" && mount -t tmpfs -o size=9m tmpfs "$tmp/small" 2>/dev/null; then
	out=$("$FHOOK" record -o "$tmp/small/r.rec" -- "$RP" mt 2 400000 2>&1 >/dev/null)
	st=$?
	rec=$(sed -nE 's/.*stopped early; ([0-9]+) events recorded, ([0-9]+) lost$/\1 \2/p' <<< "$out")
	n=$("$FHOOK" replay "$tmp/small/r.rec" 2>"$tmp/small.err" | wc -l)
	if [ $st = 1 ] && grep -q 'No space left on device' <<< "$out" && [ -n "$rec" ] &&
	   [ "${rec% *}" = "$n" ] && [ "$n" -gt 100000 ] && [ $((${rec% *} + ${rec#* })) = 1600006 ] &&
	   grep -q 'ends early' "$tmp/small.err"; then
		pass "disk-full ($n events kept, ${rec#* } lost)"
	else
		fail disk-full "exit $st, '$rec', $n events readable: $out"
	fi
	umount "$tmp/small"
else
	echo "SKIP rec_file/disk-full: needs root to mount a small tmpfs"
fi

# standard output is written as it is, whatever it is
"$FHOOK" record -o - -- "$RP" mt 2 300000 >"$tmp/stdout.rec" 2>"$tmp/stdout.err"
st=$?
[ $st = 0 ] && check stdout "$tmp/stdout.rec" "$tmp/stdout.err" ||
	fail stdout "exit $st: $(cat "$tmp/stdout.err")"

# a reader sees the recording grow while the program runs: the events of a
# program that made a few calls and now waits reach the file
"$FHOOK" record -o "$tmp/live.rec" -- "$RP" idle >"$tmp/live.out" 2>"$tmp/live.err" &
fpid=$!
for _ in $(seq 100); do grep -q idle "$tmp/live.out" 2>/dev/null && break; sleep 0.1; done
seen=0
for _ in $(seq 50); do
	seen=$("$FHOOK" replay "$tmp/live.rec" 2>/dev/null | grep -c ' leaf')
	[ "$seen" -ge 10 ] && break
	sleep 0.1
done
ppid=$(pgrep -xf "$EMU_PREFIX$RP idle" | head -1)
[ -n "$ppid" ] && kill "$ppid" 2>/dev/null
wait $fpid 2>/dev/null
if [ "$seen" = 10 ]; then
	pass "grows-while-running (the program's $seen events read while it waited)"
else
	fail grows-while-running "$seen of 10 events in the file after 5 s: $(cat "$tmp/live.err")"
fi
