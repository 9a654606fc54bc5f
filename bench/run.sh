#!/bin/bash
# SPDX-License-Identifier: LGPL-2.1-or-later
#
# make bench: fhook against its peers on the same workloads, in one run.
#
#   1. a tight loop calling a tiny function: instructions per call
#      (callgrind, difference of two run lengths) and ns per call (median and
#      min-max over interleaved runs);
#   2. start-up: enabling every site of generated programs with 2,000 and
#      20,000 functions, against `uftrace record -P .`; bytes per site;
#   3. a real program (bzip2, from its Debian source package) compressing a
#      real input with every function traced entry and exit.
#
# Writes bench/RESULTS.md and bench/results.png.  Numbers never fail anything:
# a peer that cannot run here is skipped with the reason.
#
# Knobs: BENCH_ROUNDS (interleaved rounds, default 7), BENCH_NO_INSTALL=1,
# BENCH_ONLY=startup (only workload 2, start-up, whose section then replaces
# section 2 of the existing RESULTS.md; a few minutes), BENCH_ONLY=kprobes
# (only bench/kprobes.sh, which replaces section 5: kprobes on programs not
# built for fhook).

set -u
cd "$(dirname "$0")/.."
ROOT=$PWD
B=$ROOT/build/bench
RES=$ROOT/bench/RESULTS.md
PNG=$ROOT/bench/results.png
ROUNDS=${BENCH_ROUNDS:-7}
ONLY=${BENCH_ONLY:-}
case $ONLY in ""|startup) ;; kprobes) exec bash bench/kprobes.sh ;; kpglob) exec bash bench/kpglob.sh ;;
*) echo "BENCH_ONLY: only 'startup' and 'kprobes' are known" >&2; exit 2 ;; esac
# want N: run workload N (1 tight loop, 2 start-up, 3 real program, 4 recordings)
want() { [ -z "$ONLY" ] || [ "$1" = 2 ]; }
T0=$(date +%s)
mkdir -p "$B"
TMP=$(mktemp -d /tmp/fhook-bench.XXXXXX)
BT_PID=
TRACE_STAT=
BZ_TRACE_STAT=
BZ_REC_STAT=
declare -A REC_READ
SESSIOND_PID=
LTTNG_SESSION=

cleanup()
{
	[ -n "$BT_PID" ] && kill "$BT_PID" 2>/dev/null && wait "$BT_PID" 2>/dev/null
	[ -n "$LTTNG_SESSION" ] && lttng destroy "$LTTNG_SESSION" >/dev/null 2>&1
	[ -n "$SESSIOND_PID" ] && kill "$SESSIOND_PID" 2>/dev/null
	rm -rf "$TMP"
}
trap cleanup EXIT

say() { printf '[bench %3ds] %s\n' $(( $(date +%s) - T0 )) "$*"; }

declare -A IR NS NSMIN NSMAX SKIP LABEL NS_N CMD

# ---------------------------------------------------------------- set-up

PKGS="uftrace lttng-tools liblttng-ust-dev bpftrace gnuplot-nox valgrind dpkg-dev bzip2"
install_deps()
{
	local p missing=""

	for p in $PKGS; do
		dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" ||
			missing="$missing $p"
	done
	[ -z "$missing" ] && return 0
	if [ "$(id -u)" != 0 ] || [ -n "${BENCH_NO_INSTALL:-}" ]; then
		say "missing packages:$missing (not installing: not root); their rows are skipped"
		return 0
	fi
	say "installing$missing"
	export DEBIAN_FRONTEND=noninteractive
	apt-get -o DPkg::Lock::Timeout=300 update -qq >/dev/null 2>&1
	apt-get -o DPkg::Lock::Timeout=300 install -y -qq $missing >/dev/null 2>&1 ||
		say "apt-get install failed; missing peers are skipped"
}

have() { command -v "$1" >/dev/null 2>&1; }

say "fhook bench: $(nproc) cores, kernel $(uname -r), $ROUNDS interleaved rounds"
bash scripts/deps.sh || true
install_deps
say "building fhook (make all)"
if ! make -s all >"$TMP/make.log" 2>&1; then
	if [ -e build/libfhook.so ] && [ -e build/fhook ]; then
		say "make all failed (work in progress elsewhere?); using the existing build/"
		tail -3 "$TMP/make.log" | sed 's/^/    /'
	else
		cat "$TMP/make.log"
		exit 1
	fi
fi
FHOOK=$ROOT/build/fhook
# what was measured: the commit, and whether the library had local changes
REV=$(git rev-parse --short HEAD 2>/dev/null)
git diff --quiet HEAD -- lib include 2>/dev/null || REV="$REV + uncommitted changes in lib/ or include/"
RUNDATE=$(date -u '+%Y-%m-%d %H:%M UTC')
# the machine's load around the run: times stretch with it, counts do not
LOAD0=$(cut -d' ' -f1-3 /proc/loadavg)
CFLAGS_TRACE=$($FHOOK cflags)
CC=${CC:-cc}
LFH="-L$ROOT/build -lfhook -Wl,-rpath,$ROOT/build"

say "building the benchmark programs"
cc_q() { "$CC" "$@" 2>>"$TMP/cc.log" || { say "build failed: ${*: -3}"; return 1; }; }
cc_q -O2 -o "$B/cputime" bench/cputime.c || exit 1
T=bench/tight.c
cc_q -O2 -g -o "$B/tight_plain" $T
cc_q -O2 -g $CFLAGS_TRACE -o "$B/tight_pad" $T
cc_q -O2 -g $CFLAGS_TRACE -DTIGHT_FHOOK -Iinclude -o "$B/tight_fhook" $T $LFH
# the same without fhook's assembler front end: no handler proven at build time
cc_q -O2 -g -fpatchable-function-entry=5 -DTIGHT_FHOOK -Iinclude -o "$B/tight_fhook_np" $T $LFH
cc_q -O2 -g -pg -o "$B/tight_pg" $T
cc_q -O2 -g -finstrument-functions -o "$B/tight_cyg" $T bench/cyg_hooks.c
# the floor of a recorded call: hooks that only write each event's 16-byte record
cc_q -O2 -g -finstrument-functions -o "$B/tight_floor" $T bench/tight_floor.c
if echo '#include <lttng/tracepoint.h>' | "$CC" -E -x c - >/dev/null 2>&1; then
	cc_q -O2 -g -DTIGHT_LTTNG -Ibench -o "$B/tight_lttng" $T bench/tight_tp.c -llttng-ust -ldl
fi
# its handlers proven by the assembler front end (no pads: -B alone)
cc_q -O2 -g -fPIC -shared -B"$ROOT/build/gcc-as/" -Iinclude -o "$B/fprobe_all.so" bench/fprobe_all.c $LFH
# The uprobe target is a copy of the pad build, so that the probe (on the
# inode) touches no other run; fhook prepare makes its pad one 5-byte nop.
cp "$B/tight_pad" "$B/tight_uprobe" && $FHOOK prepare "$B/tight_uprobe" >/dev/null

# ---------------------------------------------------------------- helpers

# cg_ir MATCH CMD...: instructions (callgrind Ir) of the processes of CMD
# whose command line starts with MATCH (every process if MATCH is "*").
cg_ir()
{
	local match=$1 d f sum=0 n; shift
	d=$(mktemp -d "$TMP/cg.XXXXXX")
	(cd "$d" && valgrind --tool=callgrind --trace-children=yes \
		--callgrind-out-file="$d/cg.%p" "$@" >/dev/null 2>"$d/log")
	for f in "$d"/cg.*; do
		[ -e "$f" ] || continue
		if [ "$match" = "*" ] || grep -q "^cmd: *$match" "$f"; then
			n=$(sed -n 's/^summary: *//p' "$f")
			sum=$((sum + ${n:-0}))
		fi
	done
	rm -rf "$d"
	echo "$sum"
}

N1=100000
N2=300000
# per_call KEY: instructions per call of CMD[KEY] (with N in place of @N@)
per_call()
{
	local key=$1 a b match
	match=${CGMATCH[$key]:-*}
	a=$(eval "cg_ir \"\$match\" ${CMD[$key]//@N@/$N1}")
	b=$(eval "cg_ir \"\$match\" ${CMD[$key]//@N@/$N2}")
	if [ "${a:-0}" -gt 0 ] && [ "${b:-0}" -gt 0 ]; then
		IR[$key]=$(awk -v a="$a" -v b="$b" -v n=$((N2 - N1)) 'BEGIN { printf "%.1f", (b - a) / n }')
	else
		IR[$key]=
	fi
}

# stats FILE: "median min max" of the numbers in FILE
stats()
{
	sort -g "$1" | awk '{ v[NR] = $1 } END {
		if (!NR) { print "- - -"; exit }
		m = NR % 2 ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2
		printf "%g %g %g\n", m, v[1], v[NR] }'
}

declare -A CGMATCH
# ---------------------------------------------------------------- workload 1

if want 1; then
say "workload 1: the tight loop"
ORDER="plain pad nop empty empty-np empty-gp direct redirect-hit redirect-miss inject-hit inject-miss ipmodify-hit ipmodify-miss ipmodify-np-hit ipmodify-np-miss ipmodify-args-hit ipmodify-args-miss fprobe-entry fprobe-entry-np fprobe-both fprobe-both-np fprobe-args trace record record-args flight floor cyg uftrace-pg uftrace-P lttng uprobe"
LABEL[plain]="untraced (no pad, no libfhook)"
LABEL[pad]="pad, no libfhook (five 1-byte nops)"
LABEL[nop]="fhook: pad, no ops (one 5-byte nop)"
LABEL[empty]="fhook: one ftrace_ops, empty handler (notrace, proven by its build: xmm0-7 not saved)"
LABEL[empty-np]="fhook: the same, built without fhook's assembler front end (not proven: xmm0-7 saved)"
LABEL[empty-gp]="fhook: the same, FHOOK_OPS_FL_GENERAL_REGS_ONLY (xmm0-7 not saved)"
LABEL[direct]="calling the replacement directly"
LABEL[redirect-hit]="fhook: redirect, redirected caller"
LABEL[redirect-miss]="fhook: redirect, caller not redirected"
LABEL[inject-hit]="fhook: fault injection, failing caller"
LABEL[inject-miss]="fhook: fault injection, other caller"
LABEL[ipmodify-hit]="fhook: IPMODIFY ops, the kernel module's handler (SAVE_REGS, parent_ip range test, regs->ip), redirected caller"
LABEL[ipmodify-miss]="fhook: the same, caller not redirected"
LABEL[ipmodify-np-hit]="fhook: the same built without fhook's assembler front end (handler decoded at registration), redirected caller"
LABEL[ipmodify-np-miss]="fhook: the same, caller not redirected"
LABEL[ipmodify-args-hit]="fhook: IPMODIFY ops, the 6.12 way (no SAVE_REGS, ftrace_regs_set_instruction_pointer), redirected caller"
LABEL[ipmodify-args-miss]="fhook: the same, caller not redirected"
LABEL[fprobe-entry]="fhook: fprobe, empty entry handler (notrace, proven by its build: no frame)"
LABEL[fprobe-entry-np]="fhook: the same, built without fhook's assembler front end (a frame of ftrace_regs)"
LABEL[fprobe-both]="fhook: fprobe, empty entry + exit handlers (proven by their build: no frame)"
LABEL[fprobe-both-np]="fhook: the same, built without fhook's assembler front end (frames, xmm and x87 state saved)"
LABEL[fprobe-args]="fhook: fprobe, entry + exit handlers that read their arguments (proven: no frame)"
LABEL[trace]="fhook trace: entry + exit events to the ring buffer"
LABEL[record]="fhook record: the same events written to a file (binary, decoded later, as uftrace record)"
LABEL[record-args]="fhook record: an entry event with \$arg1 and a return event with \$retval (values written straight into the ring)"
LABEL[flight]="fhook record --flight-recorder: the same events kept in memory (its full rings freeing their oldest records)"
LABEL[floor]="the floor: -finstrument-functions hooks that only write a 16-byte record with rdtsc per event (bench/tight_floor.c)"
LABEL[cyg]="-finstrument-functions, empty hooks"
LABEL[uftrace-pg]="uftrace record (-pg build)"
LABEL[uftrace-P]="uftrace record -P . (patchable build)"
LABEL[lttng]="LTTng-UST tracepoint, session recording"
LABEL[uprobe]="bpftrace uprobe on the 5-byte nop, empty action"

CMD[plain]="$B/tight_plain run @N@"
CMD[pad]="$B/tight_pad run @N@"
CMD[direct]="$B/tight_plain direct @N@"
CMD[empty-np]="$B/tight_fhook_np empty @N@"
CMD[fprobe-entry-np]="$B/tight_fhook_np fprobe-entry @N@"
CMD[fprobe-both-np]="$B/tight_fhook_np fprobe-both @N@"
CMD[ipmodify-np-hit]="$B/tight_fhook_np ipmodify-hit @N@"
CMD[ipmodify-np-miss]="$B/tight_fhook_np ipmodify-miss @N@"
for m in nop empty empty-gp redirect-hit redirect-miss inject-hit inject-miss fprobe-entry \
	 fprobe-both fprobe-args ipmodify-hit ipmodify-miss ipmodify-args-hit ipmodify-args-miss; do
	CMD[$m]="$B/tight_fhook $m @N@"
done
CMD[cyg]="$B/tight_cyg run @N@"
CMD[floor]="$B/tight_floor run @N@"
if have uftrace; then
	CMD[uftrace-pg]="uftrace record -d $TMP/ut.data $B/tight_pg run @N@"
	CMD[uftrace-P]="uftrace record -P . -d $TMP/ut.data $B/tight_pad run @N@"
	CGMATCH[uftrace-pg]="$B/tight_pg"
	CGMATCH[uftrace-P]="$B/tight_pad"
else
	SKIP[uftrace-pg]="uftrace not installed"
	SKIP[uftrace-P]="uftrace not installed"
fi

# fhook trace, if it exists in this build
if $FHOOK trace -h >/dev/null 2>&1; then
	CMD[trace]="$FHOOK trace -e 'f:bench/tiny_in tiny' -e 'f:bench/tiny_out tiny%return' -o $TMP/trace.out -- $B/tight_pad run @N@"
	CGMATCH[trace]="$B/tight_pad"
	if ! out=$(eval "${CMD[trace]//@N@/1000}" 2>&1 >/dev/null); then
		SKIP[trace]="fhook trace failed here: $(echo "$out" | head -1)"
		unset 'CMD[trace]'
	fi
else
	SKIP[trace]="pending: \`fhook trace\` is not in this build yet"
fi
CMD[record]="$FHOOK record -e 'f:bench/tiny_in tiny' -e 'f:bench/tiny_out tiny%return' -o $TMP/record.rec -- $B/tight_pad run @N@"
CGMATCH[record]="$B/tight_pad"
CMD[record-args]="$FHOOK record -e 'f:bench/tiny_in tiny \$arg1' -e 'f:bench/tiny_out tiny%return \$retval' -o $TMP/record.rec -- $B/tight_pad run @N@"
CGMATCH[record-args]="$B/tight_pad"
CMD[flight]="$FHOOK record --flight-recorder -e 'f:bench/tiny_in tiny' -e 'f:bench/tiny_out tiny%return' -o $TMP/flight.rec -- $B/tight_pad run @N@"
CGMATCH[flight]="$B/tight_pad"

# LTTng: a session daemon (ours, if none runs) and a session recording the event
if [ -x "$B/tight_lttng" ] && have lttng; then
	if ! lttng list >/dev/null 2>&1; then
		lttng-sessiond --daemonize >/dev/null 2>&1
		sleep 1
		SESSIOND_PID=$(pgrep -n -x lttng-sessiond)
	fi
	LTTNG_SESSION=fhook-bench-$$
	if lttng create "$LTTNG_SESSION" --output="$TMP/lttng" >/dev/null 2>&1 &&
	   lttng enable-channel -u -s "$LTTNG_SESSION" --subbuf-size=4M --num-subbuf=4 ch >/dev/null 2>&1 &&
	   lttng enable-event -u -s "$LTTNG_SESSION" -c ch fhook_bench:tiny >/dev/null 2>&1 &&
	   lttng start "$LTTNG_SESSION" >/dev/null 2>&1; then
		CMD[lttng]="$B/tight_lttng run @N@"
	else
		SKIP[lttng]="could not create an LTTng session (lttng-sessiond)"
		LTTNG_SESSION=
	fi
else
	SKIP[lttng]="liblttng-ust-dev / lttng-tools not installed, or the tracepoint did not build"
fi

# bpftrace: one uprobe on tight_uprobe's tiny(), kept for the whole run
if have bpftrace; then
	bpftrace -e "uprobe:$B/tight_uprobe:tiny { }" >"$TMP/bt.log" 2>&1 &
	BT_PID=$!
	for i in $(seq 30); do
		grep -q "^Attaching" "$TMP/bt.log" && break
		kill -0 "$BT_PID" 2>/dev/null || break
		sleep 0.5
	done
	sleep 0.5
	if kill -0 "$BT_PID" 2>/dev/null && grep -q "^Attaching" "$TMP/bt.log"; then
		CMD[uprobe]="$B/tight_uprobe run @N@"
		SKIP_IR_uprobe="the probe runs in the kernel, which callgrind does not see"
	else
		SKIP[uprobe]="bpftrace could not attach: $(grep -v RLIMIT "$TMP/bt.log" | head -1)"
		BT_PID=
	fi
else
	SKIP[uprobe]="bpftrace not installed"
fi

# instructions per call
for k in $ORDER; do
	[ -n "${CMD[$k]:-}" ] || continue
	[ "$k" = uprobe ] && continue
	per_call "$k"
	say "  $(printf '%-14s' "$k") ${IR[$k]:-?} instructions/call"
	rm -rf "$TMP/ut.data" "$TMP/trace.out" "$TMP/record.rec"
done

# ns per call, interleaved
for k in $ORDER; do
	case $k in
	uftrace-*|uprobe|trace|record|record-args) NS_N[$k]=200000 ;;
	lttng) NS_N[$k]=1000000 ;;
	*) NS_N[$k]=4000000 ;;
	esac
done
say "  ns/call: $ROUNDS interleaved rounds"
for r in $(seq "$ROUNDS"); do
	for k in $ORDER; do
		[ -n "${CMD[$k]:-}" ] || continue
		v=$(cd "$TMP" && eval "${CMD[$k]//@N@/${NS_N[$k]}}" 2>"$TMP/err.$k" | sed -n 's/ ns\/call.*//p' | tail -1)
		[ "$k" = trace ] && TRACE_STAT=$(grep -o '[0-9]* events.*' "$TMP/err.$k" | tail -1)
		[ -n "$v" ] && echo "$v" >>"$TMP/ns.$k"
		rm -rf "$TMP/ut.data" "$TMP/trace.out" "$TMP/record.rec"
	done
	printf '.'
done
echo
for k in $ORDER; do
	[ -e "$TMP/ns.$k" ] || continue
	read -r NS[$k] NSMIN[$k] NSMAX[$k] < <(stats "$TMP/ns.$k")
	say "  $(printf '%-14s' "$k") ${NS[$k]} ns/call (${NSMIN[$k]}-${NSMAX[$k]})"
done
if [ -n "$BT_PID" ]; then
	kill "$BT_PID" 2>/dev/null; wait "$BT_PID" 2>/dev/null; BT_PID=
fi
if [ -n "$LTTNG_SESSION" ]; then
	lttng stop "$LTTNG_SESSION" >/dev/null 2>&1
	LT_DISC=$(lttng list "$LTTNG_SESSION" 2>/dev/null | grep -i "discarded" | head -1)
	lttng destroy "$LTTNG_SESSION" >/dev/null 2>&1
	LTTNG_SESSION=
fi

fi

# ---------------------------------------------------------------- workload 2

say "workload 2: start-up with 2,000 and 20,000 functions"
declare -A SU
for n in 2000 20000; do
	src=$B/gen_$n.c obj=$B/gen_${n}_pad.o
	if [ ! -e "$obj" ] || [ bench/gen_funcs.sh -nt "$obj" ]; then
		say "  compiling $n generated functions"
		bash bench/gen_funcs.sh "$n" >"$src"
		cc_q -O0 -c $CFLAGS_TRACE -o "$obj" "$src"
	fi
	cc_q -O2 $CFLAGS_TRACE -o "$B/startup_${n}_pad" bench/startup.c "$obj"
	cc_q -O2 $CFLAGS_TRACE -DSTARTUP_FHOOK -Iinclude -o "$B/startup_${n}_fhook" \
		bench/startup.c "$obj" $LFH
	cp "$B/startup_${n}_fhook" "$B/startup_${n}_prep"
	$FHOOK prepare "$B/startup_${n}_prep" >/dev/null
	# process CPU time (user + sys, microseconds), interleaved
	for r in $(seq "$ROUNDS"); do
		for v in pad fhook-none fhook-all prep-none prep-all uftrace; do
			case $v in
			pad) c="$B/startup_${n}_pad" ;;
			fhook-none) c="$B/startup_${n}_fhook none" ;;
			prep-none) c="$B/startup_${n}_prep none" ;;
			fhook-all) c="$B/startup_${n}_fhook all" ;;
			prep-all) c="$B/startup_${n}_prep all" ;;
			uftrace) have uftrace || continue
				 c="uftrace record -P . -d $TMP/ut.data $B/startup_${n}_pad" ;;
			esac
			(cd "$TMP" && $B/cputime $c 3>"$TMP/cpu" >"$TMP/out" 2>/dev/null)
			read -r w u s f <"$TMP/cpu"
			echo $((u + s)) >>"$TMP/cpu.$n.$v"
			echo "$w" >>"$TMP/wall.$n.$v"
			echo "$f" >>"$TMP/flt.$n.$v"
			case $v in fhook-all|prep-all)
				awk '{ print $1 / 1000000 }' "$TMP/out" >>"$TMP/en.$n.$v"
				read -r _ hb ha _ <"$TMP/out"
				SU[$n,heap,$v]=$ha ;;
			esac
			rm -rf "$TMP/ut.data"
		done
	done
	for v in pad fhook-none fhook-all prep-none prep-all uftrace; do
		[ -e "$TMP/cpu.$n.$v" ] || continue
		read -r SU[$n,cpu,$v] _ _ < <(stats "$TMP/cpu.$n.$v")
		read -r SU[$n,wall,$v] _ _ < <(stats "$TMP/wall.$n.$v")
		read -r SU[$n,flt,$v] _ _ < <(stats "$TMP/flt.$n.$v")
		[ -e "$TMP/en.$n.$v" ] && read -r SU[$n,en,$v] SU[$n,enmin,$v] SU[$n,enmax,$v] < <(stats "$TMP/en.$n.$v")
	done
	# instructions
	SU[$n,ir,pad]=$(cg_ir "*" "$B/startup_${n}_pad")
	SU[$n,ir,fhook-none]=$(cg_ir "*" "$B/startup_${n}_fhook" none)
	SU[$n,ir,fhook-all]=$(cg_ir "*" "$B/startup_${n}_fhook" all)
	SU[$n,ir,prep-all]=$(cg_ir "*" "$B/startup_${n}_prep" all)
	if have uftrace; then
		SU[$n,ir,uftrace]=$(cg_ir "*" uftrace record -P . -d "$TMP/ut.data" "$B/startup_${n}_pad")
		rm -rf "$TMP/ut.data"
	fi
	say "  $n functions: process CPU us (median) pad ${SU[$n,cpu,pad]}, fhook ${SU[$n,cpu,fhook-all]}, prepared ${SU[$n,cpu,prep-all]}, uftrace -P . ${SU[$n,cpu,uftrace]:-skipped}; register ${SU[$n,en,fhook-all]} ms"
done

# What every traced process pays: an empty program, as it is and with
# libfhook or uftrace's libmcount preloaded (CPU time and minor faults of
# the program alone; many short runs, interleaved).
say "  an empty program, preloaded"
printf 'int main(void)\n{\n\treturn 0;\n}\n' >"$B/empty.c"
cc_q -O2 -o "$B/empty" "$B/empty.c"
MCOUNT=$(dpkg -L uftrace 2>/dev/null | grep '/libmcount\.so$' | head -1)
# libmcount writes its maps into UFTRACE_DIR, and stops the program without one
mkdir -p "$TMP/ut.empty"
for r in $(seq $((ROUNDS * 7))); do
	for v in plain fhook mcount; do
		case $v in
		plain) pre= ;;
		fhook) pre=$ROOT/build/libfhook.so ;;
		mcount) [ -n "$MCOUNT" ] || continue
			pre=$MCOUNT ;;
		esac
		(cd "$TMP" && UFTRACE_DIR=$TMP/ut.empty LD_PRELOAD=$pre $B/cputime "$B/empty" \
			3>"$TMP/cpu" >/dev/null 2>&1)
		rm -f "$TMP"/ut.empty/*
		read -r w u s f <"$TMP/cpu"
		echo $((u + s)) >>"$TMP/cpu.empty.$v"
		echo "$f" >>"$TMP/flt.empty.$v"
	done
done
for v in plain fhook mcount; do
	[ -e "$TMP/cpu.empty.$v" ] || continue
	read -r SU[empty,cpu,$v] _ _ < <(stats "$TMP/cpu.empty.$v")
	read -r SU[empty,flt,$v] _ _ < <(stats "$TMP/flt.empty.$v")
done
say "  empty program: CPU us / minor faults: ${SU[empty,cpu,plain]}/${SU[empty,flt,plain]}, libfhook ${SU[empty,cpu,fhook]}/${SU[empty,flt,fhook]}, libmcount ${SU[empty,cpu,mcount]:-}/${SU[empty,flt,mcount]:-}"

# A suite of many short processes: jansson's `make check` (make test-real
# builds it with fhook cflags), untraced and with one function recorded.
JT=$ROOT/build/real/jansson/test
if [ ! -x "$JT/bin/json_process" ] && [ "$(id -u)" = 0 ]; then
	say "  building jansson (tests/real/run.sh)"
	FHOOK_REAL_ONLY=jansson FHOOK_REAL_BUILD_ONLY=1 bash tests/real/run.sh >"$TMP/real.log" 2>&1
fi
SUITE_SKIP=
if [ ! -x "$JT/bin/json_process" ]; then
	SUITE_SKIP="jansson's test suite could not be built (tests/real/run.sh; needs root)"
else
	say "  jansson's make check, 3 interleaved rounds"
	for r in 1 2 3; do
		for v in plain one; do
			case $v in
			plain) c="make check" ;;
			one) c="$FHOOK record -e 'f json_loads' -o $TMP/one.rec -- make check" ;;
			esac
			(cd "$JT" && eval "$B/cputime $c" 3>"$TMP/cpu" >"$TMP/suite.out" 2>&1)
			read -r w u s f <"$TMP/cpu"
			grep -q "^PASS: run-suites" "$TMP/suite.out" ||
				SUITE_SKIP="the suite failed ($v): $(grep -m1 -E 'FAIL|rror' "$TMP/suite.out")"
			[ "$v" = one ] && SUITE_STAT=$(grep -o '[0-9]* events.*' "$TMP/suite.out" | tail -1)
			echo "$w" >>"$TMP/suite.wall.$v"
			echo $((u + s)) >>"$TMP/suite.cpu.$v"
			rm -f "$TMP/one.rec"
		done
	done
	for v in plain one; do
		read -r SU[suite,wall,$v] _ _ < <(stats "$TMP/suite.wall.$v")
		read -r SU[suite,cpu,$v] _ _ < <(stats "$TMP/suite.cpu.$v")
	done
	say "  jansson's suite: wall us ${SU[suite,wall,plain]} untraced, ${SU[suite,wall,one]} recording json_loads (${SUITE_STAT:-})"
fi

# ---------------------------------------------------------------- workload 3

if want 3; then
say "workload 3: bzip2 from its Debian source package"
W3=
SRCLIST=/etc/apt/sources.list.d/fhook-bench-src.sources
BZ=$(ls -d "$B"/src/bzip2-*/ 2>/dev/null | head -1)
if [ -z "$BZ" ] && [ "$(id -u)" = 0 ]; then
	if [ ! -e "$SRCLIST" ]; then
		cat >"$SRCLIST" <<-'EOF'
		# Added by fhook's bench/run.sh: source packages for the real-program benchmark.
		Types: deb-src
		URIs: http://deb.debian.org/debian
		Suites: bookworm
		Components: main
		Signed-By: /usr/share/keyrings/debian-archive-keyring.gpg
		EOF
		apt-get -o DPkg::Lock::Timeout=300 update -qq >/dev/null 2>&1
	fi
	mkdir -p "$B/src"
	(cd "$B/src" && apt-get source -qq bzip2 >/dev/null 2>&1)
	BZ=$(ls -d "$B"/src/bzip2-*/ 2>/dev/null | head -1)
fi
if [ -z "$BZ" ]; then
	W3="could not get the bzip2 source package (apt-get source bzip2)"
else
	BZVER=$(basename "$BZ")
	for v in plain pad pg; do
		case $v in
		plain) f="" ;;
		pad) f="$CFLAGS_TRACE" ;;
		pg) f="-pg" ;;
		esac
		if [ ! -x "$B/bzip2_$v" ]; then
			rm -rf "$TMP/bz" && cp -r "$BZ" "$TMP/bz"
			# Debian's Makefile links bzip2 to libbz2.so (the system's at
			# run time): link the static library instead, so that every
			# function of the compressor is built with the flags.
			make -s -C "$TMP/bz" libbz2.a bzip2.o CC="$CC" \
				CFLAGS="-Wall -O2 -g -D_FILE_OFFSET_BITS=64 $f" >/dev/null 2>&1 &&
				cc_q -O2 -g $f -o "$B/bzip2_$v" "$TMP/bz/bzip2.o" "$TMP/bz/libbz2.a"
		fi
	done
	# the input: the kernel's UAPI headers, as a tar (real text, stable)
	tar cf "$TMP/input.tar" -C /usr/include linux asm-generic 2>/dev/null
	head -c 4000000 "$TMP/input.tar" >"$TMP/input"
	INSZ=$(stat -c %s "$TMP/input")
	bzip2 -9 -c "$TMP/input" >"$TMP/ref.bz2"
	BZMODES="plain pad nop fprobe-entry fprobe-both uftrace-pg uftrace-P"
	$FHOOK record -h >/dev/null 2>&1 && BZMODES="$BZMODES record record-tsc record-kp"
	$FHOOK trace -h >/dev/null 2>&1 && [ -z "${SKIP[trace]:-}" ] && BZMODES="$BZMODES trace"
	declare -A BZC
	BZC[plain]="$B/bzip2_plain -9 -c $TMP/input"
	BZC[pad]="$B/bzip2_pad -9 -c $TMP/input"
	BZC[fprobe-entry]="env FHOOK_BENCH_ENTRY_ONLY=1 LD_PRELOAD=$B/fprobe_all.so $B/bzip2_pad -9 -c $TMP/input"
	BZC[nop]="env LD_PRELOAD=$ROOT/build/libfhook.so $B/bzip2_pad -9 -c $TMP/input"
	BZC[fprobe-both]="env LD_PRELOAD=$B/fprobe_all.so $B/bzip2_pad -9 -c $TMP/input"
	BZC[uftrace-pg]="uftrace record -d $TMP/ut.data $B/bzip2_pg -9 -c $TMP/input"
	BZC[uftrace-P]="uftrace record -P . -d $TMP/ut.data $B/bzip2_pad -9 -c $TMP/input"
	BZC[trace]="$FHOOK trace -e 'f:bench/in *' -e 'f:bench/out *%return' -o /dev/null -- $B/bzip2_pad -9 -c $TMP/input"
	BZC[record]="$FHOOK record -o $TMP/bz.rec -- $B/bzip2_pad -9 -c $TMP/input"
	BZC[record-tsc]="$FHOOK record --clock tsc -o $TMP/bz.rec -- $B/bzip2_pad -9 -c $TMP/input"
	# the untraced build: no site, so every function through kprobes (jumps)
	BZC[record-kp]="$FHOOK record -o $TMP/bz.rec -- $B/bzip2_plain -9 -c $TMP/input"
	have uftrace || BZMODES=${BZMODES//uftrace-pg uftrace-P/}
	declare -A BZBAD
	set -f	# the globs of fhook trace's events are not file names
	for r in $(seq 3); do
		for v in $BZMODES; do
			(cd "$TMP" && eval "$B/cputime ${BZC[$v]}" 3>"$TMP/cpu" >"$TMP/out.bz2" 2>"$TMP/err")
			read -r w u s f <"$TMP/cpu"
			echo "$w" >>"$TMP/bz.$v"
			cmp -s "$TMP/out.bz2" "$TMP/ref.bz2" || BZBAD[$v]=1
			[ "$v" = trace ] && BZ_TRACE_STAT=$(grep -o '[0-9]* events.*' "$TMP/err" | tail -1)
			[ "$v" = record ] && BZ_REC_STAT=$(grep -o '[0-9]* events.*' "$TMP/err" | tail -1)
			[ "$v" = record-kp ] && BZ_KP_STAT=$(grep -o '[0-9]* events.*' "$TMP/err" | tail -1)
			[ "$v" = record ] && [ "$r" = 3 ] && mv "$TMP/bz.rec" "$TMP/bz.keep.rec"
			rm -rf "$TMP/ut.data" "$TMP/trace.out" "$TMP/record.rec" "$TMP/bz.rec"
		done
		printf '.'
	done
	set +f
	echo
	declare -A BZT BZTMIN BZTMAX
	for v in $BZMODES; do
		read -r BZT[$v] BZTMIN[$v] BZTMAX[$v] < <(stats "$TMP/bz.$v")
		say "  bzip2 $(printf '%-11s' "$v") $(awk -v t="${BZT[$v]}" 'BEGIN { printf "%.1f", t / 1000 }') ms"
	done
	# how many calls every-function tracing sees
	BZCALLS=$(cd "$TMP" && uftrace record -d "$TMP/ut.data" "$B/bzip2_pg" -9 -c "$TMP/input" >/dev/null 2>&1 &&
		uftrace report -d "$TMP/ut.data" 2>/dev/null |
		awk 'NR > 2 && $NF !~ /^linux:/ { c += $(NF - 1) } END { print c + 0 }')
	rm -rf "$TMP/ut.data"
	BZFUNCS=$($FHOOK funcs "$B/bzip2_pad" 2>/dev/null | grep -c .)
	# what a timestamp costs here: a recorded call takes two
	cc_q -O2 -o "$B/tsc_cost" bench/tsc_cost.c && TSC_NS=$("$B/tsc_cost")
fi

else
	W3="not run (BENCH_ONLY=$ONLY)"
fi

# ---------------------------------------------------------------- recording

if want 4; then
say "workload 4: recordings (size, reading speed, many threads)"
# bytes on disk per event, and how fast a recording is read back, on bzip2's
if [ -s "$TMP/bz.keep.rec" ]; then
	REC_EVENTS=$(sed -nE 's/^([0-9]+) events.*/\1/p' <<< "${BZ_REC_STAT:-}")
	REC_BYTES=$(stat -c %s "$TMP/bz.keep.rec")
	for k in replay report; do
		case $k in
		replay) c="$FHOOK replay -o /dev/null $TMP/bz.keep.rec" ;;
		report) c="$FHOOK report $TMP/bz.keep.rec" ;;
		esac
		best=
		for r in 1 2 3; do
			"$B/cputime" $c 3>"$TMP/cpu" >/dev/null 2>&1
			read -r w u s f <"$TMP/cpu"
			t=$((u + s))
			[ -z "$best" ] || [ "$t" -lt "$best" ] && best=$t
		done
		REC_READ[$k]=$best	# CPU µs, the best of three
	done
	UT_BYTES=
	if have uftrace; then
		(cd "$TMP" && uftrace record -d "$TMP/ut.data" "$B/bzip2_pg" -9 -c "$TMP/input" >/dev/null 2>&1)
		UT_BYTES=$(du -sb "$TMP/ut.data" | awk '{ print $1 }')
		rm -rf "$TMP/ut.data"
	fi
	rm -f "$TMP/bz.keep.rec"
fi
# many threads: every call recorded, none lost; fhook's own peak memory
cc_q -O2 -g $CFLAGS_TRACE -o "$B/threads" bench/threads.c -lpthread
MT_N=64 MT_CALLS=1000000
"$FHOOK" record -o "$TMP/mt.rec" -- "$B/threads" $MT_N $MT_CALLS >/dev/null 2>"$TMP/mt.err" &
fpid=$!
MT_HWM=0
while kill -0 $fpid 2>/dev/null; do
	h=$(awk '/^VmHWM/ { print $2 }' /proc/$fpid/status 2>/dev/null)
	[ -n "$h" ] && [ "$h" -gt "$MT_HWM" ] && MT_HWM=$h
	sleep 0.05
done
wait $fpid
MT_STAT=$(grep -o '[0-9]* events.*' "$TMP/mt.err" | tail -1)
rm -f "$TMP/mt.rec"
say "  $MT_N threads x $MT_CALLS calls: $MT_STAT; fhook peak RSS $((MT_HWM / 1024)) MB"
fi

# ---------------------------------------------------------------- report

if [ -z "$ONLY" ]; then
	say "writing bench/RESULTS.md and bench/results.png"
else
	say "writing section 2 of bench/RESULTS.md"
fi
LOAD1=$(cut -d' ' -f1-3 /proc/loadavg)
declare -p IR NS NSMIN NSMAX SKIP LABEL NS_N SU >"$B/results.vars"
declare -p BZT BZTMIN BZTMAX BZBAD 2>/dev/null >>"$B/results.vars"
declare -p REC_READ 2>/dev/null >>"$B/results.vars"
for v in ONLY SUITE_SKIP SUITE_STAT ORDER ROUNDS N1 N2 W3 BZVER INSZ BZCALLS BZFUNCS BZMODES LT_DISC SKIP_IR_uprobe TRACE_STAT BZ_TRACE_STAT \
	 BZ_REC_STAT TSC_NS REC_EVENTS REC_BYTES UT_BYTES MT_N MT_CALLS MT_HWM MT_STAT REV RUNDATE LOAD0 LOAD1; do
	declare -p "$v" 2>/dev/null >>"$B/results.vars"
done
if [ -z "$ONLY" ]; then
	. bench/report.sh
else
	# only section 2 was measured: it replaces section 2 of RESULTS.md
	RES_KEEP=$RES PNG_KEEP=$PNG
	RES=$TMP/full.md PNG=$TMP/full.png
	# the other sections' figures were never set
	set +u
	. bench/report.sh >/dev/null
	set -u
	RES=$RES_KEEP PNG=$PNG_KEEP
	awk -v new="$TMP/full.md" '
		function section(   l, on) {
			while ((getline l < new) > 0) {
				if (l ~ /^## 2\./) on = 1
				else if (l ~ /^## /) on = 0
				if (on) print l
			}
		}
		/^## 2\./ { section(); skip = 1; next }
		/^## / { skip = 0 }
		!skip' "$RES" >"$TMP/res.md" && cp "$TMP/res.md" "$RES"
fi
if [ -z "$ONLY" ]; then
	say "kprobes on programs not built for fhook (bench/kprobes.sh -> section 5)"
	bash bench/kprobes.sh
	say "attaching to a running process (bench/attach.sh -> bench/ATTACH.md)"
	bash bench/attach.sh > "$ROOT/bench/ATTACH.md.new" &&
		{ echo; bash bench/tracer_killed.sh; } >> "$ROOT/bench/ATTACH.md.new" &&
		mv "$ROOT/bench/ATTACH.md.new" "$ROOT/bench/ATTACH.md"
	say "the flight recorder's cost (bench/flight.sh -> bench/FLIGHT.md)"
	bash bench/flight.sh > "$ROOT/bench/FLIGHT.md.new" && mv "$ROOT/bench/FLIGHT.md.new" "$ROOT/bench/FLIGHT.md"
	say "a two-thread compressor recorded whole (bench/compressor.sh -> bench/COMPRESSOR.md)"
	bash bench/compressor.sh > "$ROOT/bench/COMPRESSOR.md.new" &&
		mv "$ROOT/bench/COMPRESSOR.md.new" "$ROOT/bench/COMPRESSOR.md"
	say "aarch64: instructions per hooked call beside x86-64's (bench/aarch64.sh -> bench/AARCH64.md)"
	bash bench/aarch64.sh > "$ROOT/bench/AARCH64.md.new" && mv "$ROOT/bench/AARCH64.md.new" "$ROOT/bench/AARCH64.md"
	say "reading a recording beside uftrace (bench/reading.sh -> bench/READING.md)"
	bash bench/reading.sh > "$ROOT/bench/READING.md.new" && mv "$ROOT/bench/READING.md.new" "$ROOT/bench/READING.md"
fi
say "done in $(( $(date +%s) - T0 )) s"
