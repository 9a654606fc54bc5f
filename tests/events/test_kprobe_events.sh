#!/bin/bash
# Kprobe events ('p', 'r') on code built without fhook's flags: fhook
# trace on a program with no patchable site (arguments from registers, a
# probe inside a function, return values, memory and strings, exact
# lines), event counts equal to the program's own count of calls, fhook
# record and report, a library loaded later by dlopen(), an address in a
# stripped program and a stripped program's message, and an unmodified
# Debian program (xz, through liblzma): its output unchanged and its
# events equal to an independent count (interposition); events beside
# fprobe events; a program a harness starts; fhook trace -p on a running
# program without sites.
set -o pipefail
. "${FHOOK_ROOT:-$(dirname "$0")/../..}/tests/events/kp_setup.sh" kprobe_events kp_prog_stripped kp_lib.so kp_count.so kp_loop

. tests/events/lib.sh
# the machine's first two argument registers and its return register
case $TEST_ARCH in
aarch64) A0=%x0 A1=%x1 RV=%x0 ;;
*) A0=%di A1=%si RV=%ax ;;
esac
# a function's size, as events print it after its offset: the symbol's (nm -S)
fsize() { printf '0x%x' "0x$(nm -S "$1" | awk -v f="$2" '$4 == f { print $2; exit }')"; }
SZ_ADD=$(fsize "$PROG" kp_add) SZ_ASM=$(fsize "$PROG" kp_asm) SZ_NAME=$(fsize "$PROG" kp_name)

# times, tids and cpus vary; so does where main calls from
normalize() {
	sed -E -e 's/^ *([a-z_]+)-[0-9]+ +\[[0-9]{3}\] +[0-9]+\.[0-9]{6}:/\1:/' \
	    -e 's/main\+0x[0-9a-f]+\/0x[0-9a-f]+/main+OFF/'
}

# ---- fhook trace: exact lines
timeout 60 "$FHOOK" trace -e "p kp_add $A0 $A1" -e 'r kp_add $retval' \
	-e "p:asm/mid kp_asm+4 sum=$RV" -e 'r kp_asm $retval a=$arg1' \
	-e "p kp_name +0($A0):string \$comm" -o "$T/trace" -- "$PROG" \
	> "$T/out" 2> "$T/err"
check trace_status eq "$?" 0
check trace_stdout eq "$(cat "$T/out")" "kp_add 3 kp_asm 3 kp_name 1 sum 344"
check trace_summary eq "$(tail -1 "$T/err")" "fhook: trace: 13 events, 0 nmissed, 0 lost"
check trace_lines eq "$(normalize < "$T/trace")" \
"kp_prog: p_kp_add_0: (kp_add+0x0/$SZ_ADD) arg1=0x0 arg2=0x0
kp_prog: r_kp_add_0: (main+OFF <- kp_add) arg1=0x0
kp_prog: mid: (kp_asm+0x4/$SZ_ASM) sum=0x64
kp_prog: r_kp_asm_0: (main+OFF <- kp_asm) arg1=0x65 a=0x0
kp_prog: p_kp_add_0: (kp_add+0x0/$SZ_ADD) arg1=0x1 arg2=0xa
kp_prog: r_kp_add_0: (main+OFF <- kp_add) arg1=0xb
kp_prog: mid: (kp_asm+0x4/$SZ_ASM) sum=0x65
kp_prog: r_kp_asm_0: (main+OFF <- kp_asm) arg1=0x66 a=0x1
kp_prog: p_kp_add_0: (kp_add+0x0/$SZ_ADD) arg1=0x2 arg2=0x14
kp_prog: r_kp_add_0: (main+OFF <- kp_add) arg1=0x16
kp_prog: mid: (kp_asm+0x4/$SZ_ASM) sum=0x66
kp_prog: r_kp_asm_0: (main+OFF <- kp_asm) arg1=0x67 a=0x2
kp_prog: p_kp_name_0: (kp_name+0x0/$SZ_NAME) arg1=\"hello\" arg2=\"kp_prog\""

# ---- counts: the program's own against the events
N=2000
timeout 60 "$FHOOK" trace -e 'p kp_add' -e 'r kp_add $retval' -e 'p kp_asm+4' \
	-o "$T/many" -- "$PROG" $N > "$T/out" 2> "$T/err"
check count_stdout grep -q "^kp_add $N kp_asm $N kp_name 1 " "$T/out"
check count_entries eq "$(grep -c ': p_kp_add_0: ' "$T/many")" $N
check count_returns eq "$(grep -c ': r_kp_add_0: ' "$T/many")" $N
check count_offset eq "$(grep -c ': p_kp_asm_4: ' "$T/many")" $N
# the last call's return value: 1999 + 19990
check count_last_retval eq "$(grep ': r_kp_add_0: ' "$T/many" | tail -1 | sed 's/.* //')" \
	"arg1=0x55e5"

# ---- fhook record, report
timeout 60 "$FHOOK" record -o "$T/rec" -e 'p kp_add' -e 'r kp_add' -- "$PROG" 500 \
	> "$T/out" 2> "$T/err"
check record_status eq "$?" 0
check record_calls eq "$(timeout 60 "$FHOOK" report "$T/rec" | awk '$NF == "kp_add" { print $(NF-7) }')" 500

# ---- a library loaded later: resolved when dlopen() brings it
timeout 60 "$FHOOK" trace -e "p kp_lib.so:kp_lib_fn $A0" -e 'r kp_lib.so:kp_lib_fn $retval' \
	-o "$T/lib" -- "$PROG" 2 "$PWD/$D/kp_lib.so" > "$T/out" 2> "$T/err"
check dlopen_stdout eq "$(head -1 "$T/out")" "kp_lib_fn 2"
check dlopen_lines eq "$(normalize < "$T/lib")" \
"kp_prog: p_kp_lib_so_kp_lib_fn_0: (kp_lib_fn+0x0/$(fsize "$D/kp_lib.so" kp_lib_fn)) arg1=0x0
kp_prog: r_kp_lib_so_kp_lib_fn_0: (main+OFF <- kp_lib_fn) arg1=0x1
kp_prog: p_kp_lib_so_kp_lib_fn_0: (kp_lib_fn+0x0/$(fsize "$D/kp_lib.so" kp_lib_fn)) arg1=0x1
kp_prog: r_kp_lib_so_kp_lib_fn_0: (main+OFF <- kp_lib_fn) arg1=0x3"

# ---- a stripped program: its message; an address still works
got=$(timeout 20 "$FHOOK" trace -e 'p kp_add' -- "$D/kp_prog_stripped" 2>&1)
check stripped_message eq "$got" "fhook: error: Invalid probed address or symbol
  Command: p kp_add
             ^
fhook: trace: $D/kp_prog_stripped is stripped: no function in .symtab or .dynsym; probe its libraries' functions (MOD:SYM) or an address (p ADDR)
fhook: trace: for a program $D/kp_prog_stripped starts, name its file: p NAME:SYM"
addr=0x$(nm "$PROG" | awk '$2 == "T" && $3 == "kp_add" { print $1 }')
timeout 60 "$FHOOK" trace -e "p:s/add $addr $A0 $A1" -o "$T/addr" -- "$D/kp_prog_stripped" 2 \
	> "$T/out" 2> "$T/err"
check stripped_addr_status eq "$?: $(grep -v ' events, ' "$T/err")" "0: "
check stripped_addr eq "$(sed -E 's/.*: add: \(0x[0-9a-f]+\)/add:/' "$T/addr")" \
"add: arg1=0x0 arg2=0x0
add: arg1=0x1 arg2=0xa"

# ---- xz, unmodified: output unchanged, lzma_code() calls counted twice
if [ "$TEST_ARCH" != "$(uname -m)" ]; then
	echo "SKIP kprobe_events_xz: xz here is the host's program, not an $TEST_ARCH one"
elif command -v xz >/dev/null; then
	seq 1 60000 > "$T/in"
	want=$(xz -T1 -6 -c "$T/in" | md5sum)
	got=$(KP_COUNT_OUT=$T/count LD_PRELOAD=$PWD/$D/kp_count.so xz -T1 -6 -c "$T/in" | md5sum)
	check xz_interposed_unchanged eq "$got" "$want"
	got=$(timeout 120 "$FHOOK" trace -e 'p liblzma.so.5:lzma_code %si' \
		-e 'r liblzma.so.5:lzma_code $retval' -o "$T/xz" -- xz -T1 -6 -c "$T/in" 2> "$T/err" | md5sum)
	check xz_output_unchanged eq "$got" "$want"
	calls=$(cat "$T/count")
	check xz_calls_counted test "${calls:-0}" -gt 1
	check xz_entries eq "$(grep -c ': p_liblzma_so_5_lzma_code_0: ' "$T/xz")" "$calls"
	check xz_returns eq "$(grep -c ': r_liblzma_so_5_lzma_code_0: ' "$T/xz")" "$calls"
	# LZMA_OK (0) until the last call, LZMA_STREAM_END (1) at LZMA_FINISH (3)
	check xz_last eq "$(grep -o 'arg1=0x[0-9a-f]*$' "$T/xz" | tail -2 | tr '\n' ' ')" \
		"arg1=0x3 arg1=0x1 "
else
	echo "SKIP kprobe_events_xz: xz is not installed"
fi

# ---- beside fprobe events, on a function with a site: both kinds, both hooks of the return
EPROG=$D/prog
[ -x "$EPROG" ] || make -s "$EPROG" >/dev/null 2>&1
timeout 60 "$FHOOK" trace -e 'f add%return $retval' -e 'r add $retval' -e 'f add $arg1' \
	-e "p add $A0" -o "$T/mixed" -- "$EPROG" > "$T/out" 2> "$T/err"
check mixed_status eq "$?" 0
check mixed_lines eq "$(normalize < "$T/mixed" | sed -E 's/run\+0x[0-9a-f]+\/0x[0-9a-f]+/run+OFF/')" \
"prog: p_add_0: (add+0x0/$(fsize "$EPROG" add)) arg1=0x2
prog: add__entry: (add+$SITE_OFF/$(fsize "$EPROG" add)) a=2
prog: add__exit: (run+OFF <- add) arg1=42
prog: r_add_0: (run+OFF <- add) arg1=42"

# ---- libc's glob on threads that start and exit: what runs with every
# signal blocked there (clone, the new thread's first calls, the exit's
# stack release) is left out where probes are traps (aarch64): a trap
# there would kill the thread
timeout 120 "$FHOOK" record -o "$T/thr.rec" -e 'p libc.so.6:*' -e 'r libc.so.6:*' -- \
	"$EPROG" threads 3 > "$T/out" 2> "$T/err"
check libc_threads_status eq "$?: $(cat "$T/out")" "0: sum 6"
check libc_threads_summary grep -q '^fhook: record: [0-9]* events, 0 nmissed, 0 lost' "$T/err"

# ---- a program a harness starts: named by its file
if [ "$TEST_ARCH" != "$(uname -m)" ]; then
	echo "SKIP kprobe_events_harness: sh here is the host's program, not an $TEST_ARCH one"
else
	timeout 60 "$FHOOK" trace -e 'p kp_prog:kp_add %di' -o "$T/harness" -- sh -c "$PROG 2; true" \
		> "$T/out" 2> "$T/err"
	check harness_status eq "$?" 0
	check harness_lines eq "$(normalize < "$T/harness")" \
"kp_prog: p_kp_prog_kp_add_0: (kp_add+0x0/$SZ_ADD) arg1=0x0
kp_prog: p_kp_prog_kp_add_0: (kp_add+0x0/$SZ_ADD) arg1=0x1"
fi

# ---- fhook trace -p: a running program without sites, until it exits
if [ -n "$NO_PTRACE" ]; then
	echo "SKIP kprobe_events_attach: $NO_PTRACE"
else
	mkfifo "$T/fifo"
	"$D/kp_loop" < "$T/fifo" > "$T/loop" &
	pid=$!
	exec 3> "$T/fifo"
	# (the command must not hold the pipe open: the program ends at its end)
	timeout 60 "$FHOOK" trace -p $pid -e "p kp_add $A0 $A1" -e 'r kp_add $retval' -o "$T/att" \
		2> "$T/atterr" 3>&- &
	tpid=$!
	for i in $(seq 1 400); do
		grep -q 'attached to process' "$T/atterr" && break
		sleep 0.05
	done
	echo one >&3
	echo two >&3
	exec 3>&-
	wait $pid
	wait $tpid
	check attach_status eq "$?: $(grep -v 'attached to\|detached from\| events, ' "$T/atterr")" \
		"0: fhook: trace: process $pid exited while attached"
	check attach_output eq "$(cat "$T/loop")" "3
3"
	check attach_lines eq "$(normalize < "$T/att")" \
"kp_loop: p_kp_add_0: (kp_add+0x0/$(fsize "$D/kp_loop" kp_add)) arg1=0x1 arg2=0x2
kp_loop: r_kp_add_0: (main+OFF <- kp_add) arg1=0x3
kp_loop: p_kp_add_0: (kp_add+0x0/$(fsize "$D/kp_loop" kp_add)) arg1=0x1 arg2=0x2
kp_loop: r_kp_add_0: (main+OFF <- kp_add) arg1=0x3"
fi
