#!/bin/bash
# SPDX-License-Identifier: LGPL-2.1-or-later
#
# kprobes on programs not built for fhook: the section "5. kprobes" of
# bench/RESULTS.md (replaced on each run; `make bench` runs it last, or
# alone: `bash bench/kprobes.sh`, as root for bpftrace).
#
#   1. one hit, in ns (median of interleaved rounds, minus the unprobed
#      loop): an empty ftrace_ops on a function with an fhook site, a
#      kprobe on it (site method), a kprobe on the same body without a
#      site (jump), the same as a trap (FHOOK_KPROBE_NOJUMP=1), and a
#      bpftrace uprobe on it; instructions per hit from callgrind;
#   2. unmodified Debian programs with a kprobe on every function of
#      their code (tests/kprobes/kpcover.so): the share of jumps and
#      traps, output unchanged, registration time per function; beside
#      them `uftrace record -P .` on the same code (its patch statistics);
#   3. python3.11's start-up with every function of the executable
#      probed: time and instructions per function, against uftrace -P.
#
# Knobs: BENCH_ROUNDS (default 7), KPROBES_RESULTS (file to update).
set -u
cd "$(dirname "$0")/.."
ROOT=$PWD
B=$ROOT/build
RES=${KPROBES_RESULTS:-$ROOT/bench/RESULTS.md}
ROUNDS=${BENCH_ROUNDS:-7}
TMP=$(mktemp -d /tmp/fhook-kprobes.XXXXXX)
trap 'rm -rf $TMP' EXIT
say() { echo "[kprobes] $*"; }
have() { command -v "$1" >/dev/null 2>&1; }
median() { sort -g | awk '{ v[NR] = $1 } END { if (NR) print v[int((NR + 1) / 2)]; else print "" }'; }

make -s -j2 all "$B/tests/kprobes/kpcover.so" >/dev/null || exit 1
COVER=$B/tests/kprobes/kpcover.so
HIT=$B/bench/kp_hit
mkdir -p "$B/bench"
cc -std=gnu11 -O2 -g -Iinclude -fpatchable-function-entry=5 -o "$HIT" bench/kp_hit.c \
	-L"$B" -lfhook -Wl,-rpath,"$B" || exit 1

# ------------------------------------------------------------ 1. one hit
N=2000000
NTRAP=20000
declare -A NS
uprobe_ok=
if have bpftrace && [ "$(id -u)" = 0 ] &&
   timeout 60 bpftrace -e "uprobe:$HIT:f_plain { }" -c "$HIT none 1000" >/dev/null 2>&1; then
	uprobe_ok=1
fi
say "one hit: $ROUNDS rounds"
for r in $(seq 1 "$ROUNDS"); do
	for m in none ops kp_site kp_jump; do
		echo "$("$HIT" $m $N 2>/dev/null)" >> $TMP/ns.$m
	done
	echo "$(FHOOK_KPROBE_NOJUMP=1 "$HIT" kp_trap $NTRAP 2>/dev/null)" >> $TMP/ns.kp_trap
	echo "$("$HIT" none $NTRAP 2>/dev/null)" >> $TMP/ns.none_short
	[ -n "$uprobe_ok" ] &&
		timeout 120 bpftrace -e "uprobe:$HIT:f_plain { }" -c "$HIT none $NTRAP" 2>/dev/null |
		grep -E '^[0-9.]+$' >> $TMP/ns.uprobe
done
for m in none ops kp_site kp_jump kp_trap none_short uprobe; do
	NS[$m]=$( [ -f $TMP/ns.$m ] && median < $TMP/ns.$m)
done
hit() {	# mode [baseline]
	local v=${NS[$1]} b=${NS[${2:-none}]}
	[ -z "$v" ] && { echo "n/a"; return; }
	awk -v v="$v" -v b="$b" 'BEGIN { printf "%.1f", v - b }'
}
IR=()
if have valgrind; then
	for m in none ops kp_jump; do
		a=$(valgrind --tool=callgrind --smc-check=all --callgrind-out-file=/dev/null \
			"$HIT" $m 100000 2>&1 >/dev/null | sed -n 's/.*Collected : //p')
		b=$(valgrind --tool=callgrind --smc-check=all --callgrind-out-file=/dev/null \
			"$HIT" $m 300000 2>&1 >/dev/null | sed -n 's/.*Collected : //p')
		IR+=("$(( (b - a) / 200000 ))")
	done
fi
ir() { [ ${#IR[@]} = 3 ] && echo "$(( IR[$1] - IR[0] ))" || echo "n/a"; }

# ------------------------------------------------------------ 2. coverage
: > $TMP/in
seq 1 100000 | sed 's/$/ kprobes on every function/' > $TMP/in
cat > $TMP/script.sh <<'SH'
s=0; for i in $(seq 1 2000); do s=$((s + i * i % 7)); done; echo $s
f() { local x=$1; [ $x -le 1 ] && echo 1 && return; echo $(( x * $(f $((x-1))) )); }; f 10
SH
cat > $TMP/sql <<'SQL'
create table t(a integer primary key, b text);
with recursive n(i) as (select 1 union all select i+1 from n where i < 20000)
  insert into t select i, 'v' || (i*7 % 1000) from n;
select count(*), max(b) from t;
SQL
cat > $TMP/work.py <<'PY'
import json, hashlib
s = json.dumps({str(i): list(range(i % 50)) for i in range(3000)}, sort_keys=True)
print(hashlib.sha256(s.encode()).hexdigest())
PY
ROWS=
# name, objects (kpcover), uftrace -P pattern, stdin, command...
cover() {
	local name=$1 objects=$2 upat=$3 stdin=$4 want got rep uf share
	shift 4
	if ! have "$1"; then
		ROWS+="| $name | not installed | | | | |"$'\n'
		return
	fi
	want=$(timeout 120 "$@" < "$stdin" 2>/dev/null | md5sum)
	rm -f $TMP/rep
	got=$(env KPCOVER_OUT=$TMP/rep KPCOVER_OBJECTS=$objects LD_PRELOAD=$COVER \
		timeout 300 "$@" < "$stdin" 2>/dev/null | md5sum)
	rep=$(grep "^kpcover: [0-9]" $TMP/rep 2>/dev/null | head -1)
	say "$name: $rep"
	share=$(sed -n 's/^kpcover: \([0-9]*\) functions: \([0-9]*\) jump, \([0-9]*\) trap, [0-9]* site, \([0-9]*\) failed;.*(\([0-9.]*\) us per function).*/\1 \2 \3 \4 \5/p' <<< "$rep" |
		awk '{ printf "%d | %.2f%% | %.2f%% | %d | %s", $1, 100 * $2 / $1, 100 * $3 / $1, $4, $5 }')
	uf="not run"
	if have uftrace; then
		rm -rf $TMP/uf
		timeout 300 uftrace record -d $TMP/uf -P "$upat" --force -vv "$@" < "$stdin" \
			> /dev/null 2> $TMP/uf.err
		uf=$(awk '/patched:/ { p = $3 " " $4 } /total:/ { t = $3 } END { if (t) print p " of " t }' \
			$TMP/uf.err)
		[ -z "$uf" ] && uf="failed"
	fi
	ROWS+="| $name | ${share:-no report} | $([ "$got" = "$want" ] && echo yes || echo NO) | $uf |"$'\n'
}
have xz && cover "xz (liblzma)" liblzma ".@liblzma.so.5" /dev/null xz -6 -c $TMP/in
have bash && cover "bash" main "." /dev/null bash $TMP/script.sh
have sqlite3 && cover "sqlite3 (libsqlite3)" libsqlite3 ".@libsqlite3.so.0" $TMP/sql sqlite3 :memory:
[ -x /usr/bin/python3.11 ] && cover "python3.11" main "." /dev/null /usr/bin/python3.11 $TMP/work.py

# ------------------------------------------------------------ 3. start-up
PY=/usr/bin/python3.11
STARTUP="not run"
if [ -x $PY ]; then
	for r in $(seq 1 "$ROUNDS"); do
		rm -f $TMP/rep
		KPCOVER_OUT=$TMP/rep KPCOVER_OBJECTS=main LD_PRELOAD=$COVER $PY -c 1
		sed -n 's/.*registered in \([0-9]*\) us.*/\1/p' $TMP/rep >> $TMP/kp_us
		/usr/bin/time -f %e $PY -c 1 2>> $TMP/base_s >/dev/null
		if have uftrace; then
			rm -rf $TMP/uf
			/usr/bin/time -f %e uftrace record -d $TMP/uf -P . --force $PY -c 1 \
				2>> $TMP/uf_s >/dev/null
			rm -rf $TMP/uf
			/usr/bin/time -f %e uftrace record -d $TMP/uf $PY -c 1 2>> $TMP/uf0_s >/dev/null
		fi
	done
	nf=$(sed -n 's/^kpcover: \([0-9]*\) functions.*/\1/p' $TMP/rep)
	kp_us=$(median < $TMP/kp_us)
	kp_ir="n/a"
	if have valgrind; then
		# the baseline loads libfhook too: the difference is the probing
		a=$(KPCOVER_OUT=/dev/null LD_PRELOAD=$COVER valgrind \
			--tool=callgrind --smc-check=all --callgrind-out-file=/dev/null \
			$PY -c 1 2>&1 | sed -n 's/.*Collected : //p')
		b=$(KPCOVER_OBJECTS=main KPCOVER_OUT=/dev/null LD_PRELOAD=$COVER valgrind \
			--tool=callgrind --smc-check=all --callgrind-out-file=/dev/null \
			$PY -c 1 2>&1 | sed -n 's/.*Collected : //p')
		[ -n "$a" ] && [ -n "$b" ] && kp_ir=$(( (b - a) / nf ))
	fi
	uf_us="n/a"
	if [ -s $TMP/uf_s ]; then
		rm -rf $TMP/uf
		uftrace record -d $TMP/uf -P . --force -vv $PY -c 1 2>$TMP/uf.err >/dev/null
		ufn=$(awk '/patched:/ { print $3 }' $TMP/uf.err)
		uf_us=$(awk -v a="$(median < $TMP/uf_s)" -v b="$(median < $TMP/uf0_s)" -v n="$ufn" \
			'BEGIN { if (n) printf "%.1f", (a - b) * 1e6 / n; else print "n/a" }')
	fi
	STARTUP="| fhook kprobes (kpcover.so) | $nf | $(awk -v u="$kp_us" -v n="$nf" \
		'BEGIN { printf "%.1f", u / n }') | $kp_ir |"$'\n'
	STARTUP+="| uftrace record -P . | ${ufn:-n/a} patched | $uf_us (the run minus one without -P: patching, and recording the calls of the functions patched) | n/a (callgrind cannot follow its patching) |"
fi

# ------------------------------------------------------------ the section
{
	echo "## 5. kprobes on programs not built for fhook"
	echo
	echo "\`bash bench/kprobes.sh\` ($(date -u +%Y-%m-%d), $(nproc) CPUs, rounds: $ROUNDS)."
	echo
	echo "### One hit (bench/kp_hit.c, an empty handler, ns over the unprobed loop, median)"
	echo
	echo "| probe | ns per hit | instructions per hit |"
	echo "|---|---|---|"
	echo "| ftrace_ops on an fhook site (reference) | $(hit ops) | $(ir 1) |"
	echo "| kprobe, site method (SAVE_REGS) | $(hit kp_site) | |"
	echo "| kprobe, jump | $(hit kp_jump) | $(ir 2) |"
	echo "| kprobe, trap (FHOOK_KPROBE_NOJUMP=1) | $(hit kp_trap none_short) | |"
	echo "| bpftrace uprobe | $([ -n "$uprobe_ok" ] && hit uprobe none_short || echo "not run (needs root and bpftrace)") | |"
	echo
	echo "### Every function probed (tests/kprobes/kpcover.so), against \`uftrace record -P\`"
	echo
	echo "| program (code probed) | functions | jump | trap | failed | registration, us per function | output unchanged | uftrace -P patched |"
	echo "|---|---|---|---|---|---|---|---|"
	printf '%s' "$ROWS"
	echo
	echo "### python3.11 start-up, every function of the executable probed"
	echo
	echo "| | functions | us per function | instructions per function |"
	echo "|---|---|---|---|"
	echo "$STARTUP"
	echo
} > $TMP/section.md
cat $TMP/section.md
if [ -f "$RES" ]; then
	awk -v f=$TMP/section.md '
		/^## 5\. kprobes/ { skip = 1; while ((getline l < f) > 0) print l; next }
		/^## / && skip { skip = 0 }
		!skip' "$RES" > $TMP/res
	grep -q '^## 5\. kprobes' "$RES" || cat $TMP/section.md >> $TMP/res
	cp $TMP/res "$RES"
else
	cp $TMP/section.md "$RES"
fi
say "section 5 of $RES written"
