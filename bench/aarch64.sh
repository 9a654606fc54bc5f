#!/bin/bash
# SPDX-License-Identifier: LGPL-2.1-or-later
#
# Instructions per hooked call on aarch64 beside x86-64's, counted, not
# timed (QEMU's timings mean nothing): bench/tight.c built for aarch64 runs
# under qemu-user in single-step mode with its execution log on, one line
# per instruction executed; x86-64's under callgrind.  Both with 1000 and
# 3000 calls, the difference over 2000 (start-up cancels out).  Needs
# build-aarch64/ (make test-aarch64 builds it) and the cross compiler;
# prints Markdown (bench/run.sh writes it to bench/AARCH64.md).
set -u
cd "$(dirname "$0")/.."
ROOT=$PWD
A=$ROOT/build-aarch64
B=$ROOT/build/bench
CC_A=${FHOOK_AARCH64_CC:-aarch64-linux-gnu-gcc}
QEMU=${FHOOK_QEMU:-qemu-aarch64-static}
if [ -e /lib/ld-linux-aarch64.so.1 ]; then SYSROOT=/; else SYSROOT=/usr/aarch64-linux-gnu; fi
TMP=$(mktemp -d /tmp/fhook-a64-bench.XXXXXX)
trap 'rm -rf "$TMP"' EXIT
mkdir -p "$B"

echo "### aarch64: instructions per hooked call"
echo
if ! command -v "$CC_A" >/dev/null || ! command -v "$QEMU" >/dev/null || [ ! -e "$A/libfhook.so" ]; then
	echo "Not run: needs $CC_A, $QEMU and $A/libfhook.so (make test-aarch64 builds it)."
	exit 0
fi
"$CC_A" -O2 -g -o "$TMP/tight_plain" bench/tight.c &&
"$CC_A" -O2 -g -fpatchable-function-entry=4,2 -DTIGHT_FHOOK -Iinclude -o "$TMP/tight_fhook" \
	bench/tight.c -L"$A" -lfhook -Wl,-rpath,"$A" || { echo "Not run: the aarch64 build failed."; exit 0; }
cc -O2 -g -o "$TMP/x_plain" bench/tight.c &&
cc -O2 -g $("$ROOT/build/fhook" cflags) -DTIGHT_FHOOK -Iinclude -o "$TMP/x_fhook" bench/tight.c \
	-L"$ROOT/build" -lfhook -Wl,-rpath,"$ROOT/build" || { echo "Not run: the x86-64 build failed."; exit 0; }

# a64 N CMD...: instructions the aarch64 CMD (with N in place of @N@) executes
a64() {
	local n=$1; shift
	rm -f "$TMP/q.log"
	"$QEMU" -L "$SYSROOT" -singlestep -d exec,nochain -D "$TMP/q.log" "${@//@N@/$n}" \
		>/dev/null 2>&1 || { echo 0; return; }
	grep -c '^Trace' "$TMP/q.log"
}
# x86 N CMD...: callgrind's instructions of the test program among CMD's processes
x86() {
	local n=$1 f sum=0 v; shift
	rm -f "$TMP"/cg.out.*
	(cd "$TMP" && valgrind --tool=callgrind --trace-children=yes \
		--callgrind-out-file="$TMP/cg.out.%p" "${@//@N@/$n}" >/dev/null 2>&1) ||
		{ echo 0; return; }
	for f in "$TMP"/cg.out.*; do
		grep -q "^cmd: *$TMP/x_" "$f" || continue
		v=$(sed -n 's/^summary: *//p' "$f")
		sum=$((sum + ${v:-0}))
	done
	echo "$sum"
}
per_call() {	# TOOL CMD...
	local a b tool=$1; shift
	a=$($tool 1000 "$@")
	b=$($tool 3000 "$@")
	awk -v a="$a" -v b="$b" 'BEGIN { if (a > 0 && b > a) printf "%.1f", (b - a) / 2000; else print "-" }'
}

declare -A L
L[plain]="untraced"
L[nop]="pad, no ops"
L[empty]="one ftrace_ops, empty handler"
L[fprobe-entry]="fprobe, empty entry handler"
L[fprobe-both]="fprobe, empty entry + exit handlers"
L[redirect-hit]="redirect (livepatch API), redirected caller"
L[redirect-miss]="redirect, caller not redirected"
L[inject-hit]="fault injection, failing caller"
L[inject-miss]="fault injection, other caller"
L[ipmodify-hit]="IPMODIFY ops, the kernel module's handler, redirected caller"
L[ipmodify-miss]="the same, caller not redirected"
echo "bench/tight.c's loop over \`tiny()\`, the same modes as section 1 of RESULTS.md. aarch64:"
echo "\`$QEMU -singlestep -d exec,nochain\` (one log line per instruction executed), the program"
echo "cross-built with \`-fpatchable-function-entry=4,2\` against build-aarch64/libfhook.so;"
echo "x86-64: callgrind, built with \`fhook cflags\`. Runs of 1000 and 3000 calls, the difference"
echo "over 2000."
echo
echo "| mode | aarch64 instr/call | over untraced | x86-64 instr/call | over untraced |"
echo "|---|---:|---:|---:|---:|"
pa=$(per_call a64 "$TMP/tight_plain" run @N@)
px=$(per_call x86 "$TMP/x_plain" run @N@)
over() { awk -v a="$1" -v b="$2" 'BEGIN { if (a == "-" || b == "-") print "-"; else printf "%+.1f", a - b }'; }
echo "| ${L[plain]} | $pa | 0.0 | $px | 0.0 |"
for m in nop empty fprobe-entry fprobe-both redirect-hit redirect-miss inject-hit inject-miss \
	 ipmodify-hit ipmodify-miss; do
	a=$(per_call a64 "$TMP/tight_fhook" "$m" @N@)
	x=$(per_call x86 "$TMP/x_fhook" "$m" @N@)
	echo "| ${L[$m]} | $a | $(over "$a" "$pa") | $x | $(over "$x" "$px") |"
done
# fhook record on aarch64: the command under qemu-user, the program behind the
# counting emulator (FHOOK_EMULATOR), only the program's instructions counted.
# With --clock tsc: the aarch64 counter, which the command picks by itself on
# a machine whose kernel keeps time with it (arch_sys_counter), not on
# qemu-user's x86-64 host, and which the graph records' trampolines need;
# x86-64 picks its TSC by itself.
if [ -x "$A/fhook" ]; then
	rec() {	# N ENV...: the program's instructions for N calls, ENV in its environment
		local n=$1; shift
		rm -f "$TMP/q.log"
		env "$@" FHOOK_EMULATOR="$QEMU -L $SYSROOT -singlestep -d exec,nochain -D $TMP/q.log" \
			"$QEMU" -L "$SYSROOT" "$A/fhook" record --clock tsc -e 'f:bench/tiny_in tiny' \
			-e 'f:bench/tiny_out tiny%return' -o "$TMP/r.rec" -- "$TMP/tight_fhook" run "$n" \
			>/dev/null 2>&1 || { echo 0; return; }
		grep -c '^Trace' "$TMP/q.log"
	}
	ra=$(per_call rec)
	rc=$(per_call rec FHOOK_SLOW_DISPATCH=1)
	rx=$(per_call x86 "$ROOT/build/fhook" record -e 'f:bench/tiny_in tiny' \
	     -e 'f:bench/tiny_out tiny%return' -o "$TMP/r.rec" -- "$TMP/x_fhook" run @N@)
	rxc=$(per_call x86 env FHOOK_SLOW_DISPATCH=1 "$ROOT/build/fhook" record \
	      -e 'f:bench/tiny_in tiny' -e 'f:bench/tiny_out tiny%return' -o "$TMP/r.rec" -- \
	      "$TMP/x_fhook" run @N@)
	echo "| fhook record: entry + exit events (the graph records' trampolines) | $ra | $(over "$ra" "$pa") | $rx | $(over "$rx" "$px") |"
	echo "| the same, every call through C (FHOOK_SLOW_DISPATCH=1) | $rc | $(over "$rc" "$pa") | $rxc | $(over "$rxc" "$px") |"
fi
echo
echo "On aarch64 every handler is taken to read the vector registers (no handler proofs yet)"
echo "and the livepatch redirect runs its ftrace handler (no direct trampolines yet). fhook"
echo "record's rows use the arch's counter for a clock (\`--clock tsc\` on aarch64, where qemu-user's"
echo "x86-64 host would have the command pick CLOCK_MONOTONIC, whose records C writes); its"
echo "entries and returns are written by lib/arch/aarch64/graph_rec.S as x86-64's by graph_rec.S"
echo "and rethook_tramp.S, and FHOOK_SLOW_DISPATCH=1 sends them all through the C fprobe path."
