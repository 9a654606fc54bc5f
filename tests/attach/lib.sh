# Helpers of tests/attach/test_*.sh: start att_prog as an ordinary process
# (no libfhook, no fhook parent) with a FIFO as its stdin, talk to it.
set -o pipefail
ROOT=${FHOOK_ROOT:-$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)}
# (FHOOK_CLI: another build of the command, `make test-asan`'s)
FHOOK=${FHOOK_CLI:-$ROOT/build/fhook}
P=$ROOT/build/tests/attach/att_prog
R=$ROOT/build/tests/attach/att_repl.so
PARK=$ROOT/build/tests/attach/att_park
for f in "$FHOOK" "$P" "$R" "$PARK"; do
	[ -e "$f" ] || { echo "FAIL attach_built: $f missing (make test builds it)"; exit 1; }
done
TMP=$(mktemp -d)
PIDS=()
LIB_SHELL=$BASHPID
cleanup() {
	local p
	# only the test's own shell: a background command's forked shell that a
	# signal ends before it execs the command runs the EXIT trap too (bash
	# keeps its handlers there), and would kill the process under test
	[ "$BASHPID" = "$LIB_SHELL" ] || return 0
	for p in "${PIDS[@]}"; do
		kill -CONT "$p" 2>/dev/null
		kill -KILL "$p" 2>/dev/null
	done
	rm -rf "$TMP"
}
trap cleanup EXIT

# start_prog THREADS: sets $pid, $in (a fd to its stdin) and $out (its stdout file)
start_prog() {
	local n=$1 i
	out=$TMP/out.$RANDOM
	mkfifo "$TMP/in.$$.$n.$RANDOM" 2>/dev/null
	local fifo=$(ls -t "$TMP"/in.* | head -1)
	# setsid: the program is nobody's child but init's, as a real service
	setsid $START_WRAP "$P" "$n" < "$fifo" > "$out" 2>&1 &
	exec {in}> "$fifo"
	for i in $(seq 100); do
		grep -q '^ready' "$out" 2>/dev/null && break
		sleep 0.05
	done
	pid=$(awk '/^ready/ { print $2 }' "$out")
	[ -n "$pid" ] || { echo "FAIL start_prog: att_prog did not start"; exit 1; }
	PIDS+=("$pid")
}

# ask LINE: send a line, print the program's answer (the next line of output
# that is not one of libfhook's notices, "fhook: ...", which its control
# thread may write at any moment: a command killed without detaching)
ask() {
	local before i line=
	before=$(wc -l < "$out")
	echo "$1" >&$in
	for i in $(seq 200); do
		line=$(sed -n "$((before + 1)),\$p" "$out" | grep -v -m1 '^fhook: ')
		[ -n "$line" ] && break
		sleep 0.02
	done
	echo "$line"
}

# stop_prog: quit, wait, print the last line; the exit status in $prog_status
stop_prog() {
	local i
	echo quit >&$in
	exec {in}>&-
	for i in $(seq 200); do
		kill -0 "$pid" 2>/dev/null || break
		sleep 0.02
	done
	tail -1 "$out"
}

# program_masks PID: every thread's SigBlk but that of fhook's control
# thread (started by the first attach, it blocks what it does not raise itself)
program_masks() {
	local t
	for t in /proc/"$1"/task/*; do
		[ "$(cat "$t/comm" 2>/dev/null)" = fhook-ctl ] || grep -h '^SigBlk' "$t/status"
	done | sort | tr '\n' ' '
}

# ctl_threads PID: how many control threads the process has (0 or 1)
ctl_threads() {
	cat /proc/"$1"/task/*/comm 2>/dev/null | grep -c '^fhook-ctl$'
}

# expect NAME GOT WANT
expect() {
	if [ "$2" = "$3" ]; then
		echo "PASS $1"
	else
		echo "FAIL $1: got '$2', expected '$3'"
	fi
}

# text PID FUNC: the first 16 bytes of FUNC (a function of att_prog) in process PID, in hex
text() {
	local base addr
	base=$(awk -v p="$P" '$6 == p && $3 == "00000000" { split($1, a, "-"); print a[1]; exit }' \
		/proc/"$1"/maps)
	addr=$(nm "$P" | awk -v f="$2" '$3 == f { print $1 }')
	[ -n "$base" ] && [ -n "$addr" ] || { echo "no $2"; return; }
	dd if=/proc/"$1"/mem bs=1 skip=$((0x$base + 0x$addr)) count=16 2>/dev/null | od -An -tx1 |
		tr -d ' \n'
}
