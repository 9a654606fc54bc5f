#!/bin/bash
# SPDX-License-Identifier: LGPL-2.1-or-later
#
# Kprobe globs on programs not built for fhook: the start-up cost of a
# probe on every function of a real binary's library (fhook record -e
# 'p MOD:*'), in microseconds per function, and how the functions are
# probed (jump, trap, skipped: fhook funcs --why MOD '*').
#
# The start-up is the wall time of a run that does next to nothing
# (--version, /bin/true) with the glob, less the same run with one probe,
# divided by the functions probed; best of BENCH_ROUNDS (default 7) each
# (the few functions such a run calls add their hits).  Also the
# same with 'r MOD:*' (kretprobes) and with FHOOK_KPROBE_NOJUMP=1 (traps
# only).  Prints a table; numbers fail nothing.
#
#   bash bench/kpglob.sh
set -u
cd "$(dirname "$0")/.."
FHOOK=$PWD/build/fhook
ROUNDS=${BENCH_ROUNDS:-7}
TMP=$(mktemp -d /tmp/fhook-kpglob.XXXXXX)
trap 'rm -rf "$TMP"' EXIT
[ -x "$FHOOK" ] || { echo "build fhook first (make)" >&2; exit 1; }

# best wall time, in microseconds, of ROUNDS runs of "$@"
best_us() {
	local i t0 t1 best=
	for ((i = 0; i < ROUNDS; i++)); do
		t0=$(date +%s%N)
		"$@" > /dev/null 2>&1
		t1=$(date +%s%N)
		t1=$(((t1 - t0) / 1000))
		[ -z "$best" ] || [ "$t1" -lt "$best" ] && best=$t1
	done
	echo "$best"
}

printf '%-22s %-16s %7s %6s %5s %5s %9s %9s %9s\n' program object funcs jump trap skip \
	"p us/fn" "r us/fn" "trap us/fn"
# program, object (as MOD), a function of it that --version calls or not, command...
row() {
	local name=$1 mod=$2 one=$3 path why n jump trap skip base p r nj
	shift 3
	command -v "$1" > /dev/null || { echo "$name: not installed, skipped"; return; }
	path=$(command -v "$1")
	# the executable itself, named by its file name, or one of its libraries
	[ "$mod" = "$(basename "$path")" ] ||
		path=$(ldd "$path" 2> /dev/null | awk -v m="$mod" '$1 == m { print $3 }')
	[ -n "$path" ] || { echo "$name: no $mod, skipped"; return; }
	why=$("$FHOOK" funcs --why "$path" '*' | tail -1)
	n=$(sed -n 's/^# \([0-9]*\) functions.*/\1/p' <<< "$why")
	[ "${n:-0}" -gt 0 ] || { echo "$name: no function in $path, skipped"; return; }
	jump=$(sed -n 's/.*: \([0-9]*\) jump.*/\1/p' <<< "$why")
	trap=$(sed -n 's/.* \([0-9]*\) trap,.*/\1/p' <<< "$why")
	skip=$(sed -n 's/.* \([0-9]*\) skipped$/\1/p' <<< "$why")
	base=$(best_us "$FHOOK" record -o "$TMP/r" -e "p $mod:$one" -- "$@")
	p=$(best_us "$FHOOK" record -o "$TMP/r" -e "p $mod:*" -- "$@")
	r=$(best_us "$FHOOK" record -o "$TMP/r" -e "r $mod:*" -- "$@")
	nj=$(FHOOK_KPROBE_NOJUMP=1 best_us "$FHOOK" record -o "$TMP/r" -e "p $mod:*" -- "$@")
	printf '%-22s %-16s %7d %6d %5d %5d %9.1f %9.1f %9.1f\n' "$name" "$mod" "$n" "$jump" \
		"$trap" "$skip" "$(bc -l <<< "($p - $base) / ($n - $skip)")" \
		"$(bc -l <<< "($r - $base) / ($n - $skip)")" \
		"$(bc -l <<< "($nj - $base) / ($n - $skip)")"
}

# runs that call few of the functions probed: the difference is the start-up
row "xz --version" liblzma.so.5 lzma_code xz --version
row "sqlite3 --version" libsqlite3.so.0 sqlite3_open sqlite3 --version
row "python3.11 --version" python3.11 Py_Initialize /usr/bin/python3.11 --version
row "true (libc)" libc.so.6 malloc /bin/true
