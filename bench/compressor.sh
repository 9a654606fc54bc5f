#!/bin/bash
# SPDX-License-Identifier: LGPL-2.1-or-later
#
# A real two-thread program recorded whole: xz from its Debian source
# package (liblzma linked statically, so that every function of the
# compressor is built with the flags), compressing the kernel's UAPI headers
# with two threads (xz -T2 --block-size=1MiB -6: both threads busy on 2
# cores, the case where the recorder's consumer competes with the program
# for CPU).  Untraced, with fhook's pad, under `fhook record` (every
# function's entry and exit), its flight recorder, and `uftrace record`
# (-pg and -P builds).  Wall time and CPU time (user + system of the whole
# process tree, fhook's consumer included), median of 3 interleaved runs;
# every output compared with the system xz's.  Prints Markdown (bench/run.sh
# writes it to bench/COMPRESSOR.md).  Needs root to add a deb-src line the
# first time; the builds are kept in build/bench/.
set -u
cd "$(dirname "$0")/.."
ROOT=$PWD
B=$ROOT/build/bench
FHOOK=$ROOT/build/fhook
ROUNDS=${COMPRESSOR_ROUNDS:-3}
mkdir -p "$B/src"
TMP=$(mktemp -d /tmp/fhook-xz-bench.XXXXXX)
trap 'rm -rf "$TMP"' EXIT
say() { echo "[compressor] $*" >&2; }
have() { command -v "$1" >/dev/null 2>&1; }

[ -x "$B/cputime" ] || cc -O2 -o "$B/cputime" bench/cputime.c || exit 1

# the source: Debian's xz-utils, through a deb-src line for bookworm if none is there
XZ=$(ls -d "$B"/src/xz-utils-*/ 2>/dev/null | head -1)
if [ -z "$XZ" ]; then
	if ! (cd "$B/src" && apt-get source -qq xz-utils >/dev/null 2>&1) && [ "$(id -u)" = 0 ]; then
		cat >/etc/apt/sources.list.d/fhook-bench-src.sources <<-'EOF'
		# Added by fhook's bench: source packages for the real-program benchmarks.
		Types: deb-src
		URIs: http://deb.debian.org/debian
		Suites: bookworm
		Components: main
		Signed-By: /usr/share/keyrings/debian-archive-keyring.gpg
		EOF
		apt-get -o DPkg::Lock::Timeout=300 update -qq >/dev/null 2>&1
		(cd "$B/src" && apt-get source -qq xz-utils >/dev/null 2>&1)
	fi
	XZ=$(ls -d "$B"/src/xz-utils-*/ 2>/dev/null | head -1)
fi
if [ -z "$XZ" ]; then
	echo "### A two-thread compressor recorded whole"
	echo
	echo "Not run: could not get the xz-utils source package (apt-get source xz-utils)."
	exit 0
fi
XZVER=$(basename "$XZ")

# untraced, with fhook's flags, with -pg: one configure, three builds
CFLAGS_TRACE=$($FHOOK cflags)
for v in plain pad pg; do
	[ -x "$B/xz_$v" ] && continue
	case $v in
	plain) f="" ;;
	pad) f="$CFLAGS_TRACE" ;;
	pg) f="-pg" ;;
	esac
	say "building $XZVER ($v)"
	rm -rf "$TMP/xz" && cp -r "$XZ" "$TMP/xz"
	(cd "$TMP/xz" && ./configure -q --disable-shared --enable-static --disable-nls \
		--disable-doc --disable-scripts --disable-xzdec --disable-lzmadec \
		--disable-lzmainfo CFLAGS="-O2 -g $f" >/dev/null 2>&1 &&
	 make -s -j2 >/dev/null 2>&1) && cp "$TMP/xz/src/xz/xz" "$B/xz_$v" ||
		{ say "build failed ($v)"; exit 1; }
done

# the input: the kernel's UAPI headers, as a tar (real text, stable)
tar cf "$TMP/input" -C /usr/include linux asm-generic 2>/dev/null
ARGS="-T2 --block-size=1MiB -6 -c $TMP/input"
xz $ARGS >"$TMP/ref.xz"

declare -A C L
MODES="plain pad record record-pc flight"
C[plain]="$B/xz_plain $ARGS"
C[pad]="$B/xz_pad $ARGS"
C[record]="$FHOOK record -o $TMP/r.rec -- $B/xz_pad $ARGS"
C[record-pc]="$FHOOK record --page-cache -o $TMP/r.rec -- $B/xz_pad $ARGS"
C[flight]="$FHOOK record --flight-recorder -o $TMP/r.rec -- $B/xz_pad $ARGS"
if have uftrace; then
	MODES="$MODES uftrace-pg uftrace-P"
	C[uftrace-pg]="uftrace record -d $TMP/ut.data $B/xz_pg $ARGS"
	C[uftrace-P]="uftrace record -P . -d $TMP/ut.data $B/xz_pad $ARGS"
fi
L[plain]="untraced"
L[pad]="pad, no libfhook"
L[record]="\`fhook record\` (every function's entry and exit, to a file)"
L[record-pc]="\`fhook record --page-cache\` (the same, written through the page cache)"
L[flight]="\`fhook record --flight-recorder\` (the same, kept in memory, written at the end)"
L[uftrace-pg]="\`uftrace record\` (-pg build)"
L[uftrace-P]="\`uftrace record -P .\` (patchable build)"

LOAD0=$(cut -d' ' -f1-3 /proc/loadavg)
declare -A BAD
for r in $(seq "$ROUNDS"); do
	for v in $MODES; do
		(cd "$TMP" && $B/cputime ${C[$v]} 3>"$TMP/cpu" >"$TMP/out.xz" 2>"$TMP/err")
		read -r w u s f <"$TMP/cpu"
		echo "$w" >>"$TMP/wall.$v"
		echo $((u + s)) >>"$TMP/cpu.$v"
		cmp -s "$TMP/out.xz" "$TMP/ref.xz" || BAD[$v]=1
		[ "$v" = record ] && STAT=$(grep -o '[0-9]* events.*' "$TMP/err" | tail -1 | sed 's/ in .*//')
		rm -rf "$TMP/ut.data" "$TMP/r.rec"
	done
	say "round $r of $ROUNDS"
done
# a series: after a pause with nothing running (the host may take back the
# guest's free memory meanwhile), three recordings in a row, each way, each
# kept until its bytes are on the disk (sync, timed apart: the page cache
# writes them after the program, a recording deleted before that never)
PAUSE=${COMPRESSOR_PAUSE:-30}
declare -A SER
for v in record record-pc; do
	sync
	sleep "$PAUSE"
	for i in 1 2 3; do
		(cd "$TMP" && $B/cputime ${C[$v]} 3>"$TMP/cpu" >"$TMP/out.xz" 2>"$TMP/err")
		read -r w u s f <"$TMP/cpu"
		t0=$(date +%s%N)
		sync
		t1=$(date +%s%N)
		SER[$v]="${SER[$v]:-}$((w / 1000)) ms ($(((u + s) / 1000)) ms CPU), sync $(((t1 - t0) / 1000000)) ms|"
		rm -f "$TMP/r.rec"
	done
	say "series of $v"
done
median() { sort -g "$1" | awk '{ v[NR] = $1 } END { print NR % 2 ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2 }'; }
declare -A W P
for v in $MODES; do
	W[$v]=$(median "$TMP/wall.$v")
	P[$v]=$(median "$TMP/cpu.$v")
done
ratio() { awk -v a="$1" -v b="$2" 'BEGIN { if (a == "" || b == "" || b == 0) print "-"; else printf "%.2f×", a / b }'; }
ms() { awk -v t="$1" 'BEGIN { printf "%.0f", t / 1000 }'; }

echo "### A two-thread compressor recorded whole"
echo
echo "\`$XZVER\` from \`apt-get source xz-utils\` (Debian 12), liblzma linked statically, built"
echo "untraced, with \`fhook cflags\` and with \`-pg\`; \`xz $(sed "s|$TMP/||" <<< "$ARGS")\` of a tar of the kernel's"
echo "UAPI headers ($(( $(stat -c %s "$TMP/input") / 1024 )) KiB): two threads compressing. Wall and CPU time (user + system of the"
echo "whole process tree: fhook's consumer and uftrace's writers included), median of $ROUNDS interleaved runs."
echo
echo "| run | wall ms | / untraced | CPU ms | / untraced | uftrace -pg ÷ this (wall) | output |"
echo "|---|---:|---:|---:|---:|---:|---|"
for v in $MODES; do
	echo "| ${L[$v]} | $(ms "${W[$v]}") | $(ratio "${W[$v]}" "${W[plain]}") | $(ms "${P[$v]}") | $(ratio "${P[$v]}" "${P[plain]}") | $(ratio "${W[uftrace-pg]:-}" "${W[$v]}") | $([ -n "${BAD[$v]:-}" ] && echo "**differs**" || echo same) |"
done
echo
echo "fhook record (last run): ${STAT:-?}. Targets: \`fhook record\` ≤ 1.4× untraced, ≥ 2.5× faster than \`uftrace record\`."
echo
echo
echo "A series: after $PAUSE s with nothing running, three recordings in a row, each kept until a"
echo "\`sync\` after it has put its bytes on the disk (wall time and CPU time of the whole tree; the"
echo "\`sync\`'s wall time apart):"
echo
echo "| run | first | second | third |"
echo "|---|---:|---:|---:|"
for v in record record-pc; do
	IFS='|' read -r a b c _ <<< "${SER[$v]}"
	echo "| ${L[$v]} | $a | $b | $c |"
done
echo
echo "Load average (1, 5, 15 min) on $(nproc) CPUs: $LOAD0 at the start, $(cut -d' ' -f1-3 /proc/loadavg) at the end."
