#!/bin/bash
# Another tool's breakpoints beside fhook's kprobes, with bpftrace's
# uprobes (the kernel's) on four functions whose first instruction is 1
# to 4 bytes long: placed after fhook's jumps, they take the calls while
# they are there and the program runs on right; when they go, the
# functions' bytes are the file's again (not half a jump) and fhook can
# probe them anew.  Placed before, fhook refuses those functions, naming
# the breakpoint, and the program runs on right.  Skipped where bpftrace
# is missing or cannot place a uprobe (a container without BPF).
set -o pipefail
cd "${FHOOK_ROOT:-$(dirname "$0")/../..}" || exit 2
F=$PWD/build/fhook
T=$(mktemp -d)
P=
# (the test's own shell only: a background command's forked shell that a
# signal ends before it execs runs the EXIT trap too)
trap '[ "$BASHPID" = "$$" ] && { [ -n "$P" ] && kill -9 $P 2>/dev/null; rm -rf "$T"; }' EXIT
CHECK_PREFIX=uprobe_coexist
. tests/check.sh

if ! command -v bpftrace > /dev/null; then
	echo "SKIP uprobe_coexist: bpftrace is not installed"
	exit 0
fi
gcc -O2 -o $T/prog tests/kprobes/uprobe_prog.c || exit 2
FUNCS="up_f1 up_f2 up_f3 up_f4"
UP="uprobe:$T/prog:up_f1, uprobe:$T/prog:up_f2, uprobe:$T/prog:up_f3, uprobe:$T/prog:up_f4"

start() {
	$T/prog > $T/out &
	P=$!
	for i in $(seq 100); do grep -q ready $T/out && return; sleep 0.05; done
}
stop() {
	kill -TERM $P
	wait $P
	echo "status $?: $(tail -1 $T/out)"
	P=
}
# the 5 bytes at each function, in the process
bytes() {
	local base addrs
	base=$(awk -v p=$T/prog '$6 == p && $3 == "00000000" { split($1, r, "-"); print r[1]; exit }' \
		/proc/$P/maps)
	addrs=$(for f in $FUNCS; do nm $T/prog | awk -v f=$f '$3 == f { printf "0x%s,", $1 }'; done)
	python3 -c "
f = open('/proc/$P/mem', 'rb', buffering=0)
for a in ($addrs):
    f.seek(0x$base + a)
    print(f.read(5).hex())"
}
# wait_bytes CUT WANT: until the first CUT characters of every function's bytes are WANT
wait_bytes() {
	for i in $(seq 300); do
		[ "$(bytes | cut -c1-$1 | sort -u)" = "$2" ] && return 0
		sleep 0.05
	done
	return 1
}
file_bytes() {
	local f a
	for f in $FUNCS; do
		objdump -d --start-address=0x$(nm $T/prog | awk -v f=$f '$3 == f { print $1 }') \
			$T/prog | awk '/^ +[0-9a-f]+:/ { for (i = 2; i <= NF && $i ~ /^[0-9a-f][0-9a-f]$/; i++) printf "%s", $i }
				      END { print "" }' | cut -c1-10
	done
}

start
# can bpftrace place a uprobe here at all?
if ! timeout 30 bpftrace -e "uprobe:$T/prog:up_f1 { @n = count(); } interval:ms:300 { exit(); }" \
	> $T/bt 2>&1 || ! grep -q '@n: [1-9]' $T/bt; then
	echo "SKIP uprobe_coexist: bpftrace cannot place a uprobe here: $(grep -v '^$' $T/bt | tail -1)"
	exit 0
fi
orig=$(bytes)
check file_bytes_read eq "$orig" "$(file_bytes)"

# ---- fhook first: its jumps, then the uprobes on them, then the uprobes gone
$F trace -p $P -e 'p up_f1' -e 'p up_f2' -e 'p up_f3' -e 'p up_f4' --duration 60 -o $T/t1 \
	2> $T/e1 &
FP=$!
check jumps_placed wait_bytes 2 e9
timeout 60 bpftrace -e "$UP { @n = count(); } interval:s:2 { exit(); }" > $T/bt 2>&1 &
BP=$!
# a uprobe's int3 on each jump's first byte
check uprobes_on_jumps wait_bytes 2 cc
wait $BP
check uprobes_took_calls grep -q '@n: [1-9]' $T/bt
sleep 0.2
check alive_after_uprobes kill -0 $P
check bytes_are_the_files_after_uprobes eq "$(bytes)" "$orig"
kill -INT $FP
wait $FP
check first_trace_status eq "$?" 0
check first_trace_events eq "$(grep -o 'p_up_f[1-4]_0' $T/t1 | sort -u | tr '\n' ' ')" \
	"p_up_f1_0 p_up_f2_0 p_up_f3_0 p_up_f4_0 "
# probed again afterwards: every function
timeout 30 $F trace -p $P -e 'p up_f1' -e 'p up_f2' -e 'p up_f3' -e 'p up_f4' --duration 0.5 \
	-o $T/t2 2> $T/e2
check again_status eq "$?" 0
check again_events eq "$(grep -o 'p_up_f[1-4]_0' $T/t2 | sort -u | tr '\n' ' ')" \
	"p_up_f1_0 p_up_f2_0 p_up_f3_0 p_up_f4_0 "
check bytes_after_again eq "$(bytes)" "$orig"

# ---- the uprobes first: fhook refuses those functions, naming why
timeout 60 bpftrace -e "$UP { @n = count(); } interval:s:3 { exit(); }" > $T/bt 2>&1 &
BP=$!
check uprobes_placed wait_bytes 2 cc
timeout 30 $F trace -p $P -e 'p up_f3' --duration 0.3 -o $T/t3 2> $T/e3
check refused_status eq "$?" 1
check refused_why grep -q "a uprobe's or a debugger's breakpoint" $T/e3
wait $BP
check alive_after_second_uprobes kill -0 $P
check bytes_after_all eq "$(bytes)" "$orig"
stop > $T/end
check program_right eq "$(sed 's/calls [0-9]*/calls N/' $T/end)" "status 0: calls N, bad 0"
exit 0
