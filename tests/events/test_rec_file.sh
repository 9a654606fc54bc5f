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
# (the test's own shell only: a background command's forked shell that a
# signal ends before it execs runs the EXIT trap too)
trap '[ "$BASHPID" = "$$" ] && { umount "$tmp/small" 2>/dev/null; rm -rf "$tmp"; }' EXIT
pass() { echo "PASS rec_file/$1"; }
fail() { echo "FAIL rec_file/$1: $2"; }

. tests/events/lib.sh

# 2 threads x 300000 calls of leaf(): 1200006 events, 19.5 MB, several of the
# direct writes' 4 MiB buffers and an unaligned tail
N=1200006
# check NAME REC ERR [EVENTS CALLS]: the recording holds every event, exactly
check() {
	local name=$1 rec=$2 err=$3 N=${4:-$N} C=${5:-600000} info calls lines

	info=$("$FHOOK" info "$rec" 2>&1)
	calls=$("$FHOOK" report "$rec" 2>/dev/null | awk '$NF == "leaf" { print $5 }')
	lines=$("$FHOOK" replay "$rec" 2>/dev/null | wc -l)
	if grep -q "^fhook: record: $N events, 0 nmissed, 0 lost" "$err" &&
	   grep -qx "events: *$N" <<< "$info" && grep -qx "ended: *finished" <<< "$info" &&
	   [ "$calls" = "$C" ] && [ "$lines" = "$N" ]; then
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

# a file system that refuses O_DIRECT at open, one that refuses the writes,
# and one that refuses them once 8 MiB were written directly
for how in open write write-at; do
	FHOOK_TEST_DIRECT_IO=${how%-at} FHOOK_TEST_DIRECT_IO_AT=$([ $how = write-at ] && echo 8388608) \
		LD_PRELOAD=$SHIM "$FHOOK" record -o "$tmp/$how.rec" -- "$RP" mt 2 300000 2>"$tmp/$how.err"
	st=$?
	[ $st = 0 ] && check "refused-at-$how" "$tmp/$how.rec" "$tmp/$how.err" ||
		fail "refused-at-$how" "exit $st: $(cat "$tmp/$how.err")"
done

# a device slower than the program (64 MB: more than the eight buffers hold):
# the full buffers that wait for it go through the page cache, in order, and
# the recording is the same
if [ -s "$tmp/direct.log" ]; then
	rm -f "$tmp/slow.log"
	FHOOK_TEST_DIRECT_IO=slow FHOOK_TEST_DIRECT_IO_LOG=$tmp/slow.log LD_PRELOAD=$SHIM \
		"$FHOOK" record -o "$tmp/slow.rec" -- "$RP" mt 2 1000000 2>"$tmp/slow.err"
	st=$?
	direct=$(cat "$tmp/slow.log" 2>/dev/null)
	if [ $st = 0 ] && [ -n "$direct" ] && [ "$direct" -lt $((60 * 1024 * 1024)) ]; then
		check "slow-device ($direct bytes direct)" "$tmp/slow.rec" "$tmp/slow.err" 4000006 2000000
	else
		fail slow-device "exit $st, ${direct:-no} bytes direct: $(cat "$tmp/slow.err")"
	fi
	# ... and an error there while direct writes are on their way: the file
	# ends with a whole block, every event is in it or counted as lost
	FHOOK_TEST_DIRECT_IO=eio FHOOK_TEST_DIRECT_IO_AT=41943040 LD_PRELOAD=$SHIM \
		"$FHOOK" record -o "$tmp/eio.rec" -- "$RP" mt 2 1000000 2>"$tmp/eio.err" >/dev/null
	st=$?
	rec=$(sed -nE 's/.*stopped early; ([0-9]+) events recorded, ([0-9]+) lost$/\1 \2/p' "$tmp/eio.err")
	n=$("$FHOOK" replay "$tmp/eio.rec" 2>"$tmp/eio.rerr" | wc -l)
	if [ $st = 1 ] && grep -q 'Input/output error' "$tmp/eio.err" && [ -n "$rec" ] &&
	   [ "${rec% *}" = "$n" ] && [ $((${rec% *} + ${rec#* })) = 4000006 ] &&
	   grep -q 'ends early' "$tmp/eio.rerr" && ! grep -qi 'bad\|damaged' "$tmp/eio.rerr"; then
		pass "error-in-flight ($n events kept, ${rec#* } lost)"
	else
		fail error-in-flight "exit $st, '$rec', $n events readable: $(cat "$tmp/eio.err" "$tmp/eio.rerr")"
	fi
	# ... and fhook killed meanwhile: the file ends early, with no hole of
	# zeros that a reader would take for records
	FHOOK_TEST_DIRECT_IO=slow LD_PRELOAD=$SHIM \
		"$FHOOK" record -o "$tmp/kill.rec" -- "$RP" mt 2 3000000 >/dev/null 2>"$tmp/kill.err" &
	fpid=$!
	for _ in $(seq 100); do
		[ "$(stat -c %s "$tmp/kill.rec" 2>/dev/null || echo 0)" -gt $((8 * 1024 * 1024)) ] && break
		sleep 0.05
	done
	kill -KILL $fpid 2>/dev/null
	wait $fpid 2>/dev/null
	for _ in $(seq 100); do pgrep -xf "$EMU_PREFIX$RP mt 2 3000000" >/dev/null || break; sleep 0.1; done
	n=$("$FHOOK" replay "$tmp/kill.rec" 2>"$tmp/kill.rerr" | tee "$tmp/kill.txt" | wc -l)
	odd=$(grep -cvE '\((leaf|thread_main|main)\+0x0/0x[0-9a-f]+\)|<-' "$tmp/kill.txt")
	if [ "$n" -gt 0 ] && [ "$odd" = 0 ] && grep -q 'ends early' "$tmp/kill.rerr"; then
		pass "killed-while-writing ($n events readable)"
	else
		fail killed-while-writing "$n events, $odd not of the program's functions: $(head -3 "$tmp/kill.rerr"; grep -vE '\((leaf|thread_main|main)\+0x0/0x[0-9a-f]+\)|<-' "$tmp/kill.txt" | head -3)"
	fi
else
	echo "SKIP rec_file/killed-while-writing: no direct I/O here"
	echo "SKIP rec_file/slow-device: no direct I/O here"
	echo "SKIP rec_file/error-in-flight: no direct I/O here"
fi

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
