#!/bin/bash
# SPDX-License-Identifier: LGPL-2.1-or-later
#
# Reading a recording, beside uftrace: one program (bench/reading_prog.c,
# about 51 million events) recorded by `fhook record` and by `uftrace
# record` (built with -pg), then each reading command of both timed on its
# own recording, and its private memory (anonymous pages, the mapped
# recording aside) sampled at its peak:
#   report    fhook report                  uftrace report
#   graph     fhook replay --format graph   uftrace replay
#   tree      fhook report --format tree    uftrace graph
#   folded    fhook report --format folded  uftrace dump --flame-graph
# Prints a Markdown section (bench/run.sh writes it to bench/READING.md).
#   [TMPDIR=DIR] bash bench/reading.sh [ROUNDS]
set -u
cd "$(dirname "$0")/.."
ROOT=$PWD
ROUNDS=${1:-150000}
B=$ROOT/build/bench
FHOOK=$ROOT/build/fhook
mkdir -p "$B"
# the two recordings (~1.6 GB): in $TMPDIR when set (a tmpfs, when /tmp is short)
TMP=$(mktemp -d -t fhook-reading-bench.XXXXXX)
trap 'rm -rf "$TMP"' EXIT
command -v uftrace >/dev/null || { echo "uftrace is not installed: nothing to compare"; exit 0; }

cc -O1 $("$FHOOK" cflags) -o "$B/reading_prog" bench/reading_prog.c || exit 1
cc -O1 -pg -o "$B/reading_prog_pg" bench/reading_prog.c || exit 1

[ -x "$B/cputime" ] && [ "$B/cputime" -nt bench/cputime.c ] || cc -O2 -o "$B/cputime" bench/cputime.c || exit 1

# run CMD...: "SECONDS PEAK_ANON_KB" of its CPU time (user + system, from
# wait4) and its largest anonymous resident size, sampled every 10 ms
run()
{
	local pid peak=0 a c w u s f
	"$B/cputime" "$@" 3>"$TMP/cpu" >/dev/null 2>"$TMP/err" &
	pid=$!
	while kill -0 $pid 2>/dev/null; do
		for c in $(pgrep -P $pid); do
			a=$(awk '/^RssAnon/ { print $2 }' /proc/$c/status 2>/dev/null)
			[ -n "$a" ] && [ "$a" -gt "$peak" ] && peak=$a
		done
		sleep 0.01
	done
	wait $pid || echo "FAILED: $* ($(head -2 "$TMP/err"))" >&2
	read -r w u s f <"$TMP/cpu"
	echo "$(awk -v u="$u" -v s="$s" 'BEGIN { printf "%.2f", (u + s) / 1e6 }') $peak"
}

(cd "$TMP" && "$FHOOK" record -o "$TMP/f.rec" -- "$B/reading_prog" "$ROUNDS" >/dev/null 2>"$TMP/rec.err")
EVENTS=$(sed -nE 's/^fhook: record: ([0-9]+) events.*/\1/p' "$TMP/rec.err")
(cd "$TMP" && uftrace record -d "$TMP/u.data" "$B/reading_prog_pg" "$ROUNDS" >/dev/null 2>&1)
FSIZE=$(stat -c %s "$TMP/f.rec")
USIZE=$(du -sb "$TMP/u.data" | awk '{ print $1 }')

declare -A FC UC FT FM UT UM
FC[report]="$FHOOK report $TMP/f.rec"
FC[graph]="$FHOOK replay --format graph $TMP/f.rec"
FC[tree]="$FHOOK report --format tree $TMP/f.rec"
FC[folded]="$FHOOK report --format folded $TMP/f.rec"
UC[report]="uftrace report -d $TMP/u.data"
UC[graph]="uftrace replay -d $TMP/u.data"
UC[tree]="uftrace graph -d $TMP/u.data"
UC[folded]="uftrace dump --flame-graph -d $TMP/u.data"
for k in report graph tree folded; do
	# the best of two runs each, the page cache warm for both
	for r in 1 2; do
		read -r t m < <(run ${FC[$k]})
		{ [ -z "${FT[$k]:-}" ] || awk -v a="$t" -v b="${FT[$k]}" 'BEGIN { exit !(a < b) }'; } &&
			FT[$k]=$t && FM[$k]=$m
		read -r t m < <(run ${UC[$k]})
		{ [ -z "${UT[$k]:-}" ] || awk -v a="$t" -v b="${UT[$k]}" 'BEGIN { exit !(a < b) }'; } &&
			UT[$k]=$t && UM[$k]=$m
	done
done

echo "## Reading a recording, beside uftrace"
echo
echo "Produced by \`bash bench/reading.sh\` (part of \`make bench\`) on $(date -u '+%Y-%m-%d %H:%M UTC'):"
echo "bench/reading_prog.c, $ROUNDS rounds: fhook recorded $EVENTS events ($((FSIZE / 1048576)) MB),"
echo "uftrace $(uftrace --version 2>/dev/null | head -1 | awk '{ print $2 }') recorded the same program built with -pg ($((USIZE / 1048576)) MB)."
echo "CPU time (user + system, the best of two) and the peak of anonymous memory (the mapped"
echo "recording aside). Target: each fhook view at least 3× faster than uftrace's."
echo
echo "| view | fhook | uftrace | uftrace / fhook | target met | fhook memory | uftrace memory |"
echo "|---|---|---|---|---|---|---|"
for k in report graph tree folded; do
	f=${FT[$k]} u=${UT[$k]}
	ratio=$(awk -v f="$f" -v u="$u" 'BEGIN { if (f > 0) printf "%.1f×", u / f; else print "–" }')
	met=$(awk -v f="$f" -v u="$u" 'BEGIN { print (f > 0 && u / f >= 3) ? "yes" : "**no**" }')
	fc=${FC[$k]%% $TMP*}
	echo "| $k (\`fhook${fc#$FHOOK}\` / \`${UC[$k]%% -d*}\`) | $f s | $u s | $ratio | $met | $(awk -v k="${FM[$k]}" 'BEGIN { printf "%.1f", k / 1024 }') MB | $(awk -v k="${UM[$k]}" 'BEGIN { printf "%.1f", k / 1024 }') MB |"
done
