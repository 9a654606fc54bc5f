#!/bin/bash
# fhook report and replay's views of calls (docs/report.md), on small
# programs with known calls (tests/events/report/), built with `fhook
# cflags` and recorded:
#
#   recurse.c   fib(10) (177 calls), is_even(7)/is_odd mutual recursion,
#               touch() N times, extra() when asked: the table, the tree,
#               folded stacks, -s, -F/-N/-D/-t, --diff of two runs
#   ends.c      exit() three frames below main (and an atexit handler run
#               inside it), a thread still blocked when main returns,
#               raise(SIGKILL) three frames down, longjmp out of four frames
#   threads.c   two threads inside the same recursion at the same time,
#               --by thread, --tid
#   phases.c    calls 100 ms apart: -t and --time-range
#   args.c      arguments of every type class in the graph
#   unwind.cc   an exception through four frames (unwound, not unfinished)
#
# What is defined is compared exactly: names, calls, call paths, the
# unfinished and unwound markers, the graph's lines without their times.
# Times are not, but what is arithmetic about them is, in nanoseconds:
# every tree node's total is the sum of the folded self times under its
# path, its self time the folded line's; every table row's calls, self,
# total (outermost frames of a recursion only, per thread), and average
# follow from the tree and the folded stacks; siblings are sorted by total
# then name. A hidden call's time is its caller's own: checked with the
# folded stacks of the same recording with and without the filter.
#
# Where uftrace defines the answer (the program built with -pg, `uftrace
# record`), the call paths with their calls and the calls per function
# must be uftrace's, for the functions the program defines (uftrace also
# shows PLT calls into libc, which fhook does not trace). uftrace is
# installed with apt-get when missing and root, else those tests SKIP.
#
# Every run is bounded by a timeout; a crash, or a wrong exit status, is a
# FAIL. About 30 s (most of it python3 and uftrace starting).
set -u -o pipefail
cd "${FHOOK_ROOT:-$(dirname "$0")/../..}" || exit 2
ROOT=$PWD
B=${FHOOK_BUILD:-build}
FHOOK=${FHOOK_CLI:-$ROOT/$B/fhook}
SRC=$ROOT/tests/events/report
NORM=$ROOT/tests/events/vs_uftrace/normalize.py
LIMIT=${REPORT_TIMEOUT:-30}
CC=${CC:-gcc}
CXX=${CXX:-g++}

if [ ! -x "$FHOOK" ]; then
	echo "SKIP report: $FHOOK is not built"
	exit 0
fi
CFLAGS_FHOOK=$("$FHOOK" cflags) || { echo "FAIL report: fhook cflags failed"; exit 1; }

tmp=$(mktemp -d)
if [ -n "${REPORT_KEEP:-}" ]; then
	echo "# files kept in $tmp"
else
	trap 'rm -rf "$tmp"' EXIT
fi

pass() { echo "PASS report/$1"; }
fail() { echo "FAIL report/$1: $2"; }
# check NAME WHY: PASS when WHY is empty
check() { if [ -z "$2" ]; then pass "$1"; else fail "$1" "$2"; fi; }

have_uftrace=
if command -v python3 >/dev/null; then
	if ! command -v uftrace >/dev/null && [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null; then
		timeout 600 apt-get install -y -q uftrace >/dev/null 2>&1
	fi
	command -v uftrace >/dev/null && have_uftrace=1
fi

# ---- running ----------------------------------------------------------------

# run LOG WANT CMD...: bounded; false, with the reason in LOG.why, when it
# times out, is killed, says it crashed or exits with a status not WANT.
run() {
	local log=$1 want=$2 st
	shift 2
	timeout -k 5 "$LIMIT" "$@" >"$log.out" 2>"$log.err" </dev/null
	st=$?
	if [ "$st" = 124 ] || [ "$st" = 137 -a "$want" != 137 ]; then
		echo "timed out or killed (status $st): ${*##*/}" >"$log.why"
	elif [ "$st" -gt 128 ] && [ "$st" != "$want" ]; then
		echo "killed by signal $((st - 128)): $*" >"$log.why"
	elif grep -qiE 'terminated by signal|segmentation fault|core dumped|aborted|sanitizer' "$log.err"; then
		echo "crashed: $(grep -iE -m1 'terminated by signal|segmentation fault|core dumped|aborted|sanitizer' "$log.err")" >"$log.why"
	elif [ "$st" != "$want" ]; then
		echo "exit status $st, not $want: $* ($(tail -1 "$log.err"))" >"$log.why"
	else
		return 0
	fi
	return 1
}

# rd OUT ARGS...: fhook ARGS (a reading command) into OUT, its stderr in
# OUT.err; false, with a FAIL line's reason in OUT.why, unless it exits 0.
rd() {
	local out=$1
	shift
	run "$out" 0 "$FHOOK" "$@" || return 1
	mv "$out.out" "$out"
}

# build NAME SOURCE: $tmp/NAME.f (fhook) and, with uftrace, $tmp/NAME.u (-pg)
build() {
	local name=$1 src=$SRC/$2 cc=$CC std=-std=gnu11 libs=-lpthread
	case $2 in *.cc) cc=$CXX std=-std=gnu++17 libs= ;; esac
	if ! $cc $std -O0 -g $CFLAGS_FHOOK -o "$tmp/$name.f" "$src" $libs 2>"$tmp/$name.build.err"; then
		fail "$name" "build failed: $(head -3 "$tmp/$name.build.err")"
		return 1
	fi
	if [ -n "$have_uftrace" ] &&
	   ! $cc $std -O0 -g -pg -o "$tmp/$name.u" "$src" $libs 2>>"$tmp/$name.build.err"; then
		fail "$name" "build with -pg failed: $(head -3 "$tmp/$name.build.err")"
		return 1
	fi
}

# record TEST REC WANT PROG [ARGS...]: fhook record into $tmp/REC.rec
# (events given in the array EV), the program's exit status WANT
record() {
	local t=$1 rec=$2 want=$3 prog=$4
	shift 4
	if ! run "$tmp/$rec.run" "$want" "$FHOOK" record ${EV[@]+"${EV[@]}"} -o "$tmp/$rec.rec" \
		-- "$tmp/$prog.f" "$@"; then
		fail "$t" "fhook record: $(cat "$tmp/$rec.run.why")"
		return 1
	fi
}
EV=()

# ---- reading what fhook prints ---------------------------------------------

# A graph without its times, durations and tids.
strip() { sed -E 's/^ *[0-9]+\.[0-9]+ +([0-9]+\.[0-9]{3} (us|ms|  s))? +\[ *[0-9]+\] \| //'; }

# The table as "name calls[ (N unfinished)]", sorted by name.
rows() {
	awk '/^ +Total time/ || /^ +=====/ || /^#/ || !NF { next }
	     { print substr($0, 85) " " (substr($0, 31, 10) + 0) }' "$1" |
	sed -E 's/^(.*) (\([0-9]+ unfinished\)) ([0-9]+)$/\1 \3 \2/' | LC_ALL=C sort
}

# The table's function names in their order.
names() { awk '/^ +Total time/ || /^ +=====/ || /^#/ || !NF { next } { print substr($0, 85) }' "$1"; }

# The tree as "path calls[ (N unfinished)]" per node, sorted by path.
paths() {
	awk 'NR <= 2 { next }
	     { rest = substr($0, 43); calls = substr($0, 31, 10) + 0
	       i = index(rest, "+-")
	       if (i == 0) { d = 0; name = rest } else { d = (i - 1) / 2 + 1; name = substr(rest, i + 2) }
	       unf = ""
	       if (match(name, / \([0-9]+ unfinished\)$/)) { unf = substr(name, RSTART); name = substr(name, 1, RSTART - 1) }
	       st[d] = name; p = st[0]
	       for (j = 1; j <= d; j++) p = p ";" st[j]
	       print p " " calls unf }' "$1" | LC_ALL=C sort
}

# A graph's calls as "path calls[ (N unfinished)]", sorted: paths by
# indentation per thread, names without their arguments.
graph_paths() {
	awk 'function path(t, d,   p, j) { p = st[t, 0]; for (j = 1; j <= d; j++) p = p ";" st[t, j]; return p }
	     !match($0, /\[ *[0-9]+\] \| /) { next }
	     { t = substr($0, RSTART, RLENGTH); b = substr($0, RSTART + RLENGTH)
	       match(b, /^ */); d = RLENGTH / 2; b = substr(b, RLENGTH + 1)
	       if (b ~ /^}/) { if (b ~ / \(unfinished\) \*\/$/) unf[path(t, d)]++; next }
	       name = b; sub(/\(.*/, "", name); st[t, d] = name; c[path(t, d)]++ }
	     END { for (p in c) print p " " c[p] (unf[p] ? " (" unf[p] " unfinished)" : "") }' "$1" |
	LC_ALL=C sort
}

# Normalized ENTER/EXIT sequences ('THREAD ENTER name') as call paths:
# "path calls", sorted.
seq_paths() {
	awk '{ t = $1; name = $3
	       if ($2 == "ENTER") { n[t]++; st[t, n[t]] = name; p = st[t, 1]
	                            for (j = 2; j <= n[t]; j++) p = p ";" st[t, j]
	                            c[p]++ }
	       else if (n[t] && st[t, n[t]] == name) n[t]-- }
	     END { for (p in c) print p " " c[p] }' "$1" | LC_ALL=C sort
}

# consistent TABLE TREE FOLDED: empty when the three views of one
# recording agree to the nanosecond, else the first disagreement.
consistent() {
	awk -v TAB="$1" -v TREE="$2" -v FOLD="$3" '
	function fmt(ns) {
		if (ns < 1000) return sprintf("%d ns", ns)
		if (ns < 1000000) return sprintf("%.3f us", ns / 1e3)
		if (ns < 1000000000) return sprintf("%.3f ms", ns / 1e6)
		return sprintf("%.3f  s", ns / 1e9)
	}
	function trim(s) { sub(/^ +/, "", s); sub(/ +$/, "", s); return s }
	function ns(s,   v, u) {
		s = trim(s); v = s; sub(/ .*/, "", v); u = s; sub(/^[^ ]+ +/, "", u)
		return v * (u == "s" ? 1e9 : u == "ms" ? 1e6 : u == "us" ? 1e3 : 1)
	}
	function bad(msg) { if (!why) why = msg }
	BEGIN {
		while ((getline l < FOLD) > 0) {
			self = l; sub(/.* /, "", self); path = substr(l, 1, length(l) - length(self) - 1)
			if (self !~ /^[0-9]+$/ || self == 0) bad("folded line \"" l "\"")
			fself[path] += self; all += self
			k = split(path, p, ";"); pre = p[1]; under[pre] += self
			for (i = 2; i <= k; i++) { pre = pre ";" p[i]; under[pre] += self }
		}
		ln = 0
		while ((getline l < TREE) > 0) {
			if (++ln <= 2) continue
			tot = trim(substr(l, 3, 12)); sf = trim(substr(l, 17, 12)); calls = substr(l, 31, 10) + 0
			rest = substr(l, 43); i = index(rest, "+-")
			if (i == 0) { d = 0; name = rest } else { d = (i - 1) / 2 + 1; name = substr(rest, i + 2) }
			unf = 0
			if (match(name, / \([0-9]+ unfinished\)$/)) { unf = substr(name, RSTART + 2) + 0; name = substr(name, 1, RSTART - 1) }
			st[d] = name; path = st[0]
			for (j = 1; j <= d; j++) path = path ";" st[j]
			parent = d ? substr(path, 1, length(path) - length(name) - 1) : "(root)"
			if (path in seen) bad("path " path " twice in the tree")
			seen[path] = 1
			if (fmt(under[path] + 0) != tot) bad(path ": tree total " tot ", folded stacks under it " fmt(under[path] + 0))
			if (fmt(fself[path] + 0) != sf) bad(path ": tree self " sf ", folded " fmt(fself[path] + 0))
			if (calls < 1) bad(path ": " calls " calls")
			if (parent in last) {
				if (last[parent] < under[path] + 0 || (last[parent] == under[path] + 0 && lastn[parent] > name))
					bad("siblings under " parent " not sorted by total then name: " lastn[parent] " before " name)
			}
			last[parent] = under[path] + 0; lastn[parent] = name
			if (!d) roots += under[path]
			ncalls[name] += calls; nunf[name] += unf; sum[name] += under[path]; sself[name] += fself[path]
			outer = 1
			for (j = 0; j < d; j++) if (st[j] == name) outer = 0
			if (outer) out[name] += under[path]
		}
		for (q in fself) if (!(q in seen)) bad("folded path " q " is not in the tree")
		if (all != roots) bad("folded stacks add up to " all " ns, the roots of the tree to " roots)
		while ((getline l < TAB) > 0) {
			if (l ~ /^ +Total time/ || l ~ /^ +=====/ || l ~ /^#/ || l == "") continue
			tot = trim(substr(l, 3, 12)); sf = trim(substr(l, 17, 12)); calls = substr(l, 31, 10) + 0
			avg = trim(substr(l, 43, 12)); mi = trim(substr(l, 57, 12)); ma = trim(substr(l, 71, 12))
			name = substr(l, 85); unf = 0
			if (match(name, / \([0-9]+ unfinished\)$/)) { unf = substr(name, RSTART + 2) + 0; name = substr(name, 1, RSTART - 1) }
			intab[name] = 1
			if (!(name in ncalls)) { bad("table row " name " is not in the tree"); continue }
			if (calls != ncalls[name]) bad(name ": " calls " calls in the table, " ncalls[name] " in the tree")
			if (unf != nunf[name]) bad(name ": " unf " unfinished in the table, " nunf[name] " in the tree")
			if (sf != fmt(sself[name])) bad(name ": self " sf " in the table, " fmt(sself[name]) " in the folded stacks")
			if (tot != fmt(out[name])) bad(name ": total " tot " in the table, " fmt(out[name]) " for its outermost frames in the tree")
			if (avg != fmt(int(sum[name] / ncalls[name]))) bad(name ": avg " avg " in the table, " fmt(int(sum[name] / ncalls[name])) " from the tree")
			if (ns(mi) > ns(avg) || ns(avg) > ns(ma)) bad(name ": min " mi ", avg " avg ", max " ma)
			if (calls == 1 && (mi != tot || ma != tot)) bad(name ": one call, total " tot ", min " mi ", max " ma)
		}
		for (n in ncalls) if (!(n in intab)) bad(n " is in the tree, not in the table")
		print why
	}' || echo "awk failed"
}

# views TEST REC [FILTERS...]: table, tree, folded and graph of
# $tmp/REC.rec with FILTERS into $tmp/TEST.{tab,tree,fold,graph}; the
# tests TEST/views (the report's three agree) and TEST/graph (replay's graph
# shows the tree's calls, with the same filters). False when a read fails.
views() {
	local t=$1 rec=$tmp/$2.rec o=$tmp/${1//\//_}
	shift 2
	rd "$o.tab" report "$@" "$rec" && rd "$o.tree" report --format tree "$@" "$rec" &&
	rd "$o.fold" report --format folded "$@" "$rec" &&
	rd "$o.graph" replay --format graph "$@" "$rec" || {
		fail "$t" "$(cat "$o".*.why)"
		return 1
	}
	check "$t/views" "$(consistent "$o.tab" "$o.tree" "$o.fold")"
	graph_paths "$o.graph" >"$o.gpaths"
	paths "$o.tree" | sed -E 's/\(([a-z, ]*)\)(;| )/\2/g' >"$o.tpaths"
	check "$t/graph" "$(diff "$o.tpaths" "$o.gpaths" | grep '^[<>]' | head -4 | sed 's/^</tree:/; s/^>/graph:/' | tr '\n' '|')"
}
# The files of views TEST
V() { echo "$tmp/${1//\//_}.$2"; }

# expect TEST GOT-FILE: GOT-FILE's lines (it may be a <(command)) are
# exactly standard input's
expect() {
	local want=$tmp/want got=$tmp/got
	cat >"$want"
	cat "$2" >"$got"
	if cmp -s "$want" "$got"; then
		pass "$1"
	else
		fail "$1" "$(diff "$want" "$got" | head -12 | tr '\n' '|')"
	fi
}

# fib(n)'s calls per level: 1 2 4 ... for the paths main;run;fib;...
fib_paths() {
	awk -v n="$1" -v pre="$2" 'function f(k, d) { c[d]++; if (k >= 2) { f(k - 1, d + 1); f(k - 2, d + 1) } }
	     BEGIN { f(n, 0); p = pre; for (d = 0; d in c; d++) { p = p ";fib"; print p " " c[d] } }'
}

# ---- uftrace -------------------------------------------------------------

# vs_uftrace TEST PROG WANT [ARGS...]: uftrace records $tmp/PROG.u; its call
# paths and calls per function, for the functions PROG defines, must be
# those of fhook's tree and table $(V TEST tree), $(V TEST tab).
vs_uftrace() {
	local t=$1 prog=$2 want=$3 u=$tmp/${1//\//_}.u
	shift 3
	if [ -z "$have_uftrace" ]; then
		echo "SKIP report/$t/vs-uftrace: uftrace (or python3) is not installed"
		return
	fi
	if ! run "$u.rec" "$want" uftrace record -d "$u.d" "$tmp/$prog.u" "$@"; then
		# uftrace's own exit status for a program that exit()s or dies is its own
		if ! [ -d "$u.d" ] || [ "$want" = 0 ]; then
			fail "$t/vs-uftrace" "uftrace record: $(cat "$u.rec.why")"
			return
		fi
	fi
	nm -C --defined-only "$tmp/$prog.u" | awk '$2 ~ /^[TtWw]$/ { $1 = ""; $2 = ""; print substr($0, 3) }' >"$u.names"
	sed -E 's/\(.*\)( const)?$//' "$u.names" >"$u.short"
	if ! timeout "$LIMIT" uftrace replay -d "$u.d" --no-pager -f tid >"$u.replay" 2>"$u.replay.err" ||
	   ! timeout "$LIMIT" uftrace report -d "$u.d" --no-pager >"$u.report" 2>>"$u.replay.err" ||
	   ! python3 "$NORM" uftrace "$u.names" <"$u.replay" >"$u.seq"; then
		fail "$t/vs-uftrace" "uftrace replay/report failed: $(head -2 "$u.replay.err")"
		return
	fi
	seq_paths "$u.seq" >"$u.paths"
	paths "$(V "$t" tree)" | sed -E 's/ \([0-9]+ unfinished\)$//; s/\([^;]*\)//g' | LC_ALL=C sort >"$u.fpaths"
	# uftrace report: Total (2 words) Self (2 words) Calls Function; the
	# functions the program defines
	awk -v N="$u.short" 'BEGIN { while ((getline l < N) > 0) own[l] = 1 }
		NF >= 6 && $5 ~ /^[0-9]+$/ { n = $6; for (i = 7; i <= NF; i++) n = n " " $i; if (n in own) print n, $5 }' \
		"$u.report" | LC_ALL=C sort >"$u.calls"
	rows "$(V "$t" tab)" | sed -E 's/ \([0-9]+ unfinished\)$//; s/\([^ ]*\) / /' | LC_ALL=C sort >"$u.fcalls"
	if ! [ -s "$u.paths" ]; then
		fail "$t/vs-uftrace" "uftrace shows none of the program's calls"
	elif [ -n "${UF_MAY_LOSE:-}" ] && ! grep -q "^$UF_MAY_LOSE\b" "$u.paths"; then
		# uftrace does not always write out a thread still running at exit
		echo "SKIP report/$t/vs-uftrace: uftrace lost the thread still running in $UF_MAY_LOSE at exit"
	elif cmp -s "$u.paths" "$u.fpaths" && cmp -s "$u.calls" "$u.fcalls"; then
		pass "$t/vs-uftrace"
	else
		fail "$t/vs-uftrace" "uftrace / fhook: $(diff "$u.paths" "$u.fpaths" | grep '^[<>]' | head -4 | tr '\n' '|') $(diff "$u.calls" "$u.fcalls" | grep '^[<>]' | head -4 | tr '\n' '|')"
	fi
}

# ==== recursion =============================================================

if build recurse recurse.c && record recursion rec10 0 recurse 10 &&
   views recursion rec10; then
	T=$(V recursion tab)
	expect recursion/table-calls <(rows "$T") <<'EOF'
fib 177
is_even 4
is_odd 4
main 1
run 1
touch 10
EOF
	if grep -q unfinished "$T.err" "$T"; then
		fail recursion/no-unfinished "$(cat "$T.err")"
	else
		pass recursion/no-unfinished
	fi
	{
		fib_paths 10 main\;run
		echo "main 1"
		echo "main;run 1"
		p="main;run"
		for f in is_even is_odd is_even is_odd is_even is_odd is_even is_odd; do
			p="$p;$f"
			echo "$p 1"
		done
		echo "main;run;touch 10"
	} | LC_ALL=C sort >"$tmp/rec10.paths"
	expect recursion/tree <(paths "$(V recursion tree)") <"$tmp/rec10.paths"
	# fib's total is its outermost call's, as the tree shows it; so is
	# is_even's and is_odd's (mutual recursion); fib's longest call is that one
	tot() { awk -v f="$1" 'substr($0, 85) == f { v = substr($0, 3, 12); sub(/^ +/, "", v); print v }' "$T"; }
	mx() { awk -v f="$1" 'substr($0, 85) == f { v = substr($0, 71, 12); sub(/^ +/, "", v); print v }' "$T"; }
	node() { awk -v n="$1" 'NR > 2 { r = substr($0, 43); sub(/^[ |]*(\+-)?/, "", r)
		if (r == n && !k++) { v = substr($0, 3, 12); sub(/^ +/, "", v); print v } }' "$(V recursion tree)"; }
	why=
	[ "$(tot fib)" = "$(node fib)" ] || why="fib: table total $(tot fib), outermost fib in the tree $(node fib)"
	[ "$(mx fib)" = "$(node fib)" ] || why="$why fib: max $(mx fib), outermost call $(node fib)"
	[ "$(tot is_even)" = "$(node is_even)" ] || why="$why is_even: table total $(tot is_even), outermost $(node is_even)"
	[ "$(tot is_odd)" = "$(node is_odd)" ] || why="$why is_odd: table total $(tot is_odd), outermost $(node is_odd)"
	# the caller's total is no less than its callee's
	ns() { awk -v s="$1" 'BEGIN { split(s, a, " "); u = a[2]; print a[1] * (u == "s" ? 1e9 : u == "ms" ? 1e6 : u == "us" ? 1e3 : 1) }'; }
	awk -v r="$(ns "$(tot run)")" -v f="$(ns "$(tot fib)")" -v m="$(ns "$(tot main)")" 'BEGIN { exit !(m >= r && r >= f && f > 0) }' ||
		why="$why totals: main $(tot main), run $(tot run), fib $(tot fib)"
	check recursion/total-outermost "$why"
	# the folded stacks add up to main's total
	sum=$(awk '{ s += $NF } END { print s }' "$(V recursion fold)")
	m=$(awk 'NR == 3 { print substr($0, 3, 12) }' "$(V recursion tree)" | sed 's/^ *//')
	f=$(awk -v s="$sum" 'BEGIN { printf s < 1e6 ? "%.3f us" : "%.3f ms", s < 1e6 ? s / 1e3 : s / 1e6 }')
	[ "$f" = "$m" ] && grep -q '^main;run;fib;fib ' "$(V recursion fold)" &&
		pass recursion/folded-sum || fail recursion/folded-sum "folded adds up to $sum ns, main's total is $m"
	# -s with several keys: calls, then name
	rd "$tmp/s.tab" report -s calls,name "$tmp/rec10.rec" &&
		expect sort-keys <(names "$tmp/s.tab" | paste -sd' ') <<<"fib touch is_even is_odd main run" ||
		fail sort-keys "$(cat "$tmp/s.tab.why" 2>/dev/null)"
	# -s max: main holds run, which holds fib's outermost call and more
	rd "$tmp/smax.tab" report -s max "$tmp/rec10.rec" &&
		expect sort-max <(names "$tmp/smax.tab" | head -3 | paste -sd' ') <<<"main run fib" ||
		fail sort-max "$(cat "$tmp/smax.tab.why" 2>/dev/null)"
	vs_uftrace recursion recurse 0 10

	# ---- filters on the recursion
	# -F: the calls under is_odd's outermost frame; its total is that frame's
	if views filter-F rec10 -F is_odd; then
		expect filter-F/table <(rows "$(V filter-F tab)") <<-'EOF'
		is_even 3
		is_odd 4
		EOF
		expect filter-F/tree <(paths "$(V filter-F tree)") <<-'EOF'
		is_odd 1
		is_odd;is_even 1
		is_odd;is_even;is_odd 1
		is_odd;is_even;is_odd;is_even 1
		is_odd;is_even;is_odd;is_even;is_odd 1
		is_odd;is_even;is_odd;is_even;is_odd;is_even 1
		is_odd;is_even;is_odd;is_even;is_odd;is_even;is_odd 1
		EOF
		a=$(awk '$NF == "is_odd" { print substr($0, 3, 12) }' "$(V filter-F tab)")
		b=$(grep -E '^ .*\+-is_odd$' "$(V recursion tree)" | head -1 | cut -c3-14)
		check filter-F/total "$([ "$a" = "$b" ] || echo "is_odd under -F: total '$a', the unfiltered tree's outermost is_odd '$b'")"
	fi
	# -N: is_odd and all under it hidden; their time is is_even's own
	if views filter-N rec10 -N is_odd; then
		expect filter-N/table <(rows "$(V filter-N tab)") <<-'EOF'
		fib 177
		is_even 1
		main 1
		run 1
		touch 10
		EOF
		got=$(awk '$1 == "main;run;is_even" { print $2 }' "$(V filter-N fold)")
		want=$(awk '$1 ~ /^main;run;is_even(;|$)/ { s += $2 } END { print s + 0 }' "$(V recursion fold)")
		check filter-N/self "$([ "$got" = "$want" ] || echo "is_even's self with -N is_odd: $got ns; its total without: $want ns")"
	fi
	# -N fib: run's self grows by fib's total, to the nanosecond
	if views filter-N-fib rec10 -N fib; then
		got=$(awk '$1 == "main;run" { print $2 }' "$(V filter-N-fib fold)")
		want=$(awk '$1 == "main;run" || $1 ~ /^main;run;fib(;|$)/ { s += $2 } END { print s + 0 }' "$(V recursion fold)")
		check filter-N-fib/self "$([ "$got" = "$want" ] || echo "run's self with -N fib: $got ns; its self and fib's total without: $want ns")"
		grep -q fib "$(V filter-N-fib tab)" "$(V filter-N-fib tree)" && fail filter-N-fib/hidden "fib shows" ||
			pass filter-N-fib/hidden
	fi
	# -D 3: main, run, and run's callees
	if views filter-D rec10 -D 3; then
		expect filter-D/table <(rows "$(V filter-D tab)") <<-'EOF'
		fib 1
		is_even 1
		main 1
		run 1
		touch 10
		EOF
	fi
	# -D from the -F function: fib and its two callees
	if views filter-F-D rec10 -F fib -D 2; then
		expect filter-F-D/tree <(paths "$(V filter-F-D tree)") <<-'EOF'
		fib 1
		fib;fib 2
		EOF
	fi
	# -t: the same calls in the table, the tree and the folded stacks
	views filter-t rec10 -t 300ns
	# graph and text with -F, -N, -D
	if rd "$tmp/g1" replay --format graph -F is_even -D 3 "$tmp/rec10.rec"; then
		expect replay-graph/F-D <(strip <"$tmp/g1") <<-'EOF'
		is_even() {
		  is_odd() {
		    is_even();
		  } /* is_odd */
		} /* is_even */
		EOF
	else
		fail replay-graph/F-D "$(cat "$tmp/g1.why")"
	fi
	if rd "$tmp/g2" replay --format graph -N fib -N touch -D 4 "$tmp/rec10.rec"; then
		expect replay-graph/N-D <(strip <"$tmp/g2") <<-'EOF'
		main() {
		  run() {
		    is_even() {
		      is_odd();
		    } /* is_even */
		  } /* run */
		} /* main */
		EOF
	else
		fail replay-graph/N-D "$(cat "$tmp/g2.why")"
	fi
	if [ -n "$have_uftrace" ] && rd "$tmp/t1" replay -F is_odd -D 2 "$tmp/rec10.rec" &&
	   rd "$tmp/t2" replay -N fib -N 'is_*' "$tmp/rec10.rec"; then
		python3 "$NORM" text <"$tmp/t1" >"$tmp/t1.seq"
		expect replay-text/F-D "$tmp/t1.seq" <<-'EOF'
		1 ENTER is_odd
		1 ENTER is_even
		1 EXIT is_even
		1 EXIT is_odd
		EOF
		python3 "$NORM" text <"$tmp/t2" >"$tmp/t2.seq"
		{
			printf '1 ENTER main\n1 ENTER run\n'
			for i in 1 2 3 4 5 6 7 8 9 10; do printf '1 ENTER touch\n1 EXIT touch\n'; done
			printf '1 EXIT run\n1 EXIT main\n'
		} >"$tmp/t2.want"
		expect replay-text/N "$tmp/t2.seq" <"$tmp/t2.want"
	fi

	# ---- --diff: fib(10) against fib(12) with extra()
	if record diff rec12 0 recurse 12 extra &&
	   rd "$tmp/d1" report --diff -s calls "$tmp/rec10.rec" "$tmp/rec12.rec" &&
	   rd "$tmp/d2" report --diff -s calls "$tmp/rec12.rec" "$tmp/rec10.rec" &&
	   rd "$tmp/d3" report --diff -F 'is_*' "$tmp/rec10.rec" "$tmp/rec12.rec"; then
		# Total base, new (2 words each), change; Self the same; calls, new, change; name
		cols() { awk 'NR > 4 { print $NF, $11, $12, $13 }' "$1"; }
		{ head -2 "$tmp/d1"; cols "$tmp/d1"; } >"$tmp/d1.cols"
		expect diff/calls "$tmp/d1.cols" <<-EOF
		# base: $tmp/rec10.rec
		# new:  $tmp/rec12.rec
		fib 177 465 +288
		touch 10 12 +2
		extra 0 1 +1
		is_even 4 4 +0
		is_odd 4 4 +0
		main 1 1 +0
		run 1 1 +0
		EOF
		awk 'NR > 4 && $NF == "extra" { print $5, $10 }' "$tmp/d1" >"$tmp/d1.extra"
		expect diff/new "$tmp/d1.extra" <<<"new new"
		cols "$tmp/d2" >"$tmp/d2.cols"
		awk 'NR > 4 && $NF == "extra" { print $5, $10 }' "$tmp/d2" >"$tmp/d2.extra"
		expect diff/reversed "$tmp/d2.cols" <<-'EOF'
		fib 465 177 -288
		touch 12 10 -2
		extra 1 0 -1
		is_even 4 4 +0
		is_odd 4 4 +0
		main 1 1 +0
		run 1 1 +0
		EOF
		expect diff/gone "$tmp/d2.extra" <<<"gone gone"
		cols "$tmp/d3" | LC_ALL=C sort >"$tmp/d3.cols"
		expect diff/filtered "$tmp/d3.cols" <<-'EOF'
		is_even 4 4 +0
		is_odd 4 4 +0
		EOF
	else
		fail diff "$(cat "$tmp"/d?.why "$tmp/rec12.run.why" 2>/dev/null | head -3)"
	fi
fi

# ==== calls that never return ==============================================

if build ends ends.c; then
	# exit() from three frames below main; bye() runs inside exit()
	if record exit exit 3 ends exit && views exit exit; then
		expect exit/table <(rows "$(V exit tab)") <<-'EOF'
		bye 1
		inner 1 (1 unfinished)
		main 1 (1 unfinished)
		middle 1 (1 unfinished)
		outer 1 (1 unfinished)
		EOF
		expect exit/tree <(paths "$(V exit tree)") <<-'EOF'
		main 1 (1 unfinished)
		main;outer 1 (1 unfinished)
		main;outer;middle 1 (1 unfinished)
		main;outer;middle;inner 1 (1 unfinished)
		main;outer;middle;inner;bye 1
		EOF
		grep -x 'fhook: report: 4 calls had not returned when their thread.s events ended: counted up to its last event (unfinished)' \
			"$(V exit tab).err" >/dev/null && pass exit/stderr || fail exit/stderr "'$(cat "$(V exit tab).err")'"
		if rd "$tmp/eg" replay --format graph "$tmp/exit.rec"; then
			expect exit/graph <(strip <"$tmp/eg") <<-'EOF'
			main() {
			  outer() {
			    middle() {
			      inner() {
			        bye();
			      } /* inner (unfinished) */
			    } /* middle (unfinished) */
			  } /* outer (unfinished) */
			} /* main (unfinished) */
			EOF
			# they all end at the thread's last event: bye's exit
			n=$(grep 'unfinished' "$tmp/eg" | awk '{ print $1 }' | sort -u | wc -l)
			check exit/end-together "$([ "$n" = 1 ] || echo "the unfinished calls end at $n different times")"
		else
			fail exit/graph "$(cat "$tmp/eg.why")"
		fi
		# filtered: the calls under middle
		if views exit-F exit -F middle; then
			expect exit-F/tree <(paths "$(V exit-F tree)") <<-'EOF'
			middle 1 (1 unfinished)
			middle;inner 1 (1 unfinished)
			middle;inner;bye 1
			EOF
		fi
		# filtered to a call that finished: none of those shown is unfinished,
		# so report says nothing about unfinished calls
		if rd "$tmp/ef" report -F bye "$tmp/exit.rec"; then
			expect exit-F-bye/table <(rows "$tmp/ef") <<<"bye 1"
			if grep -q unfinished "$tmp/ef.err"; then
				fail exit-F-bye/stderr "no unfinished call is shown, but stderr says: $(cat "$tmp/ef.err")"
			else
				pass exit-F-bye/stderr
			fi
		else
			fail exit-F-bye "$(cat "$tmp/ef.why")"
		fi
		vs_uftrace exit ends 3 exit
	fi

	# a worker thread blocked in read() when main returns
	if record thread thread 0 ends thread && views thread thread; then
		expect thread/table <(rows "$(V thread tab)") <<-'EOF'
		block 1 (1 unfinished)
		finish 1
		main 1
		spawn 1
		worker 1 (1 unfinished)
		EOF
		expect thread/tree <(paths "$(V thread tree)") <<-'EOF'
		main 1
		main;finish 1
		main;spawn 1
		worker 1 (1 unfinished)
		worker;block 1 (1 unfinished)
		EOF
		grep -q '^fhook: report: 2 calls had not returned' "$(V thread tab).err" && pass thread/stderr ||
			fail thread/stderr "'$(cat "$(V thread tab).err")'"
		if rd "$tmp/tg" replay --format graph "$tmp/thread.rec"; then
			wt=$(grep 'worker() {' "$tmp/tg" | sed -E 's/.*\[ *([0-9]+)\].*/\1/')
			expect thread/graph-worker <(grep -E "\[ *$wt\] \|" "$tmp/tg" | strip) <<-'EOF'
			worker() {
			  block() {
			  } /* block (unfinished) */
			} /* worker (unfinished) */
			EOF
			expect thread/graph-main <(grep -vE "\[ *$wt\] \|" "$tmp/tg" | strip) <<-'EOF'
			main() {
			  spawn();
			  finish();
			} /* main */
			EOF
			# --tid: the worker alone, in the table and the graph
			if rd "$tmp/tt" report --tid "$wt" "$tmp/thread.rec" &&
			   rd "$tmp/ttg" replay --format graph --tid "$wt" "$tmp/thread.rec"; then
				expect thread/tid-table <(rows "$tmp/tt") <<-'EOF'
				block 1 (1 unfinished)
				worker 1 (1 unfinished)
				EOF
				expect thread/tid-graph <(strip <"$tmp/ttg") <<-'EOF'
				worker() {
				  block() {
				  } /* block (unfinished) */
				} /* worker (unfinished) */
				EOF
			else
				fail thread/tid "$(cat "$tmp/tt.why" "$tmp/ttg.why" 2>/dev/null)"
			fi
		else
			fail thread/graph "$(cat "$tmp/tg.why")"
		fi
		UF_MAY_LOSE=worker vs_uftrace thread ends 0 thread
	fi

	# SIGKILL three frames down: fhook record ends as the program did
	if record kill kill 137 ends kill && views kill kill; then
		expect kill/tree <(paths "$(V kill tree)") <<-'EOF'
		main 1 (1 unfinished)
		main;k1 1 (1 unfinished)
		main;k1;k2 1 (1 unfinished)
		main;k1;k2;k3 1 (1 unfinished)
		EOF
		expect kill/table <(rows "$(V kill tab)") <<-'EOF'
		k1 1 (1 unfinished)
		k2 1 (1 unfinished)
		k3 1 (1 unfinished)
		main 1 (1 unfinished)
		EOF
		if rd "$tmp/kg" replay --format graph "$tmp/kill.rec"; then
			expect kill/graph <(strip <"$tmp/kg") <<-'EOF'
			main() {
			  k1() {
			    k2() {
			      k3() {
			      } /* k3 (unfinished) */
			    } /* k2 (unfinished) */
			  } /* k1 (unfinished) */
			} /* main (unfinished) */
			EOF
		else
			fail kill/graph "$(cat "$tmp/kg.why")"
		fi
		vs_uftrace kill ends 137 kill
	fi

	# longjmp out of four frames: unwound, not unfinished
	if record longjmp longjmp 0 ends longjmp && views longjmp longjmp; then
		expect longjmp/table <(rows "$(V longjmp tab)") <<-'EOF'
		after 1
		catcher 1
		jumper 4
		main 1
		EOF
		expect longjmp/tree <(paths "$(V longjmp tree)") <<-'EOF'
		main 1
		main;after 1
		main;catcher 1
		main;catcher;jumper 1
		main;catcher;jumper;jumper 1
		main;catcher;jumper;jumper;jumper 1
		main;catcher;jumper;jumper;jumper;jumper 1
		EOF
		[ -s "$(V longjmp tab).err" ] && fail longjmp/stderr "$(cat "$(V longjmp tab).err")" ||
			pass longjmp/stderr
		if rd "$tmp/lg" replay --format graph "$tmp/longjmp.rec"; then
			expect longjmp/graph <(strip <"$tmp/lg") <<-'EOF'
			main() {
			  catcher() {
			    jumper() {
			      jumper() {
			        jumper() {
			          jumper() {
			          } /* unwound: jumper */
			        } /* unwound: jumper */
			      } /* unwound: jumper */
			    } /* unwound: jumper */
			  } /* catcher */
			  after();
			} /* main */
			EOF
		else
			fail longjmp/graph "$(cat "$tmp/lg.why")"
		fi
		# uftrace 0.13 shows no exits for the frames a longjmp removes (it
		# nests after() under the last jumper): compared with the known calls only
		echo "SKIP report/longjmp/vs-uftrace: uftrace does not see frames left by longjmp"
	fi
fi

# ==== an exception through four frames (C++) ===============================

if command -v "$CXX" >/dev/null && build unwind unwind.cc && record unwind unwind 0 unwind &&
   views unwind unwind; then
	# short C++ names or with parameters: compared without the parameters
	expect unwind/tree <(paths "$(V unwind tree)" | sed -E 's/\([^;]*\)//g') <<-'EOF'
	main 1
	main;after 1
	main;catcher 1
	main;catcher;thrower 1
	main;catcher;thrower;thrower 1
	main;catcher;thrower;thrower;thrower 1
	main;catcher;thrower;thrower;thrower;thrower 1
	EOF
	if rd "$tmp/ug" replay --format graph "$tmp/unwind.rec"; then
		expect unwind/graph <(strip <"$tmp/ug" | sed -E 's/\(int\)|\(\)//g') <<-'EOF'
		main {
		  catcher {
		    thrower {
		      thrower {
		        thrower {
		          thrower {
		          } /* unwound: thrower */
		        } /* unwound: thrower */
		      } /* unwound: thrower */
		    } /* unwound: thrower */
		  } /* catcher */
		  after;
		} /* main */
		EOF
	else
		fail unwind/graph "$(cat "$tmp/ug.why")"
	fi
	vs_uftrace unwind unwind 0
fi

# ==== threads ===============================================================

if build threads threads.c && record threads threads 0 threads && views threads threads; then
	expect threads/table <(rows "$(V threads tab)") <<-'EOF'
	main 1
	rec 7
	run_threads 1
	step 10
	work_a 1
	work_b 1
	EOF
	expect threads/tree <(paths "$(V threads tree)") <<-'EOF'
	main 1
	main;run_threads 1
	main;run_threads;step 2
	work_a 1
	work_a;rec 1
	work_a;rec;rec 1
	work_a;rec;rec;rec 1
	work_a;rec;rec;rec;rec 1
	work_a;step 3
	work_b 1
	work_b;rec 1
	work_b;rec;rec 1
	work_b;rec;rec;rec 1
	work_b;step 5
	EOF
	vs_uftrace threads threads 0
	if rd "$tmp/thj" replay --format json "$tmp/threads.rec"; then
		ta=$(grep -m1 '"func":"work_a"' "$tmp/thj" | sed -E 's/.*"tid":([0-9]+).*/\1/')
		tb=$(grep -m1 '"func":"work_b"' "$tmp/thj" | sed -E 's/.*"tid":([0-9]+).*/\1/')
		pid=$(grep -m1 '"func":"main"' "$tmp/thj" | sed -E 's/.*"pid":([0-9]+).*/\1/')
	else
		ta= tb= pid=
	fi
	# --by thread: one table per thread, each thread once
	for s in total name calls; do
		if rd "$tmp/bt.$s" report --by thread -s $s "$tmp/threads.rec"; then
			awk -v pid="$pid" '
			/^# thread / { if (!match($0, /^# thread [0-9]+ \([^)]*\) of process [0-9]+$/)) print "bad header: " $0
				t = $3; if (t in seen) dup = dup " " t; seen[t] = 1; n++
				if ($NF != pid) print "thread " t " of process " $NF ", not " pid; next }
			/^ +Total time/ || /^ +=====/ || !NF { next }
			{ r[t] = r[t] " " substr($0, 85) ":" (substr($0, 31, 10) + 0) }
			END { if (dup) print "threads with more than one table:" dup
				for (t in r) print t r[t]; print n " tables" }' "$tmp/bt.$s" |
			awk '{ if ($1 ~ /^[0-9]+$/) { t = $1; $1 = ""; n = split($0, a, " "); s = ""
				  for (i = 1; i <= n; i++) for (j = i + 1; j <= n; j++) if (a[j] < a[i]) { x = a[i]; a[i] = a[j]; a[j] = x }
				  for (i = 1; i <= n; i++) s = s " " a[i]; print t s } else print }' |
			sed -E "s/^$pid /MAIN /; s/^${ta:-A} /A /; s/^${tb:-B} /B /" | LC_ALL=C sort >"$tmp/bt.$s.got"
			expect "by-thread/$s" "$tmp/bt.$s.got" <<-'EOF'
			3 tables
			A rec:4 step:3 work_a:1
			B rec:3 step:5 work_b:1
			MAIN main:1 run_threads:1 step:2
			EOF
		else
			fail "by-thread/$s" "$(cat "$tmp/bt.$s.why")"
		fi
	done
	# per thread, a recursion counts its outermost frame: work_a's rec and
	# work_b's rec were open at the same time (views checked the sum); each
	# thread's table has its own
	if [ -s "$tmp/bt.name" ]; then
		a=$(awk -v t="$ta" '/^# thread / { c = $3 } c == t && substr($0, 85) == "rec" { print substr($0, 3, 12) }' "$tmp/bt.name" | head -1 | sed 's/^ *//')
		# work_a's outermost rec in the tree
		b=$(awk 'NR > 2 { r = substr($0, 43) } r == "work_a" { in_a = 1; next } r !~ /^[|+ ]/ { in_a = 0 }
			in_a && r == "+-rec" { v = substr($0, 3, 12); sub(/^ +/, "", v); print v; exit }' "$(V threads tree)")
		check by-thread/recursion "$([ -n "$a" ] && [ "$a" = "$b" ] || echo "work_a's thread: rec total '$a', its outermost rec in the tree '$b'")"
	fi
	# --tid: one worker, in the table, the graph and the text
	if [ -n "$ta" ] && rd "$tmp/tid.tab" report --tid "$ta" "$tmp/threads.rec" &&
	   rd "$tmp/tid.g" replay --format graph --tid "$ta" "$tmp/threads.rec" &&
	   rd "$tmp/tid.t" replay --tid "$ta" "$tmp/threads.rec"; then
		expect tid/table <(rows "$tmp/tid.tab") <<-'EOF'
		rec 4
		step 3
		work_a 1
		EOF
		expect tid/graph <(strip <"$tmp/tid.g") <<-'EOF'
		work_a() {
		  step();
		  step();
		  step();
		  rec() {
		    rec() {
		      rec() {
		        rec();
		      } /* rec */
		    } /* rec */
		  } /* rec */
		} /* work_a */
		EOF
		sed -E 's/^ *.*-([0-9]+) +\[[0-9]+\].*/\1/' "$tmp/tid.t" | sort | uniq -c | awk '{ print $2, $1 }' >"$tmp/tid.tids"
		expect tid/text "$tmp/tid.tids" <<<"$ta 16"
		rd "$tmp/tid2.tab" report --tid "$ta,$tb" "$tmp/threads.rec" &&
			expect tid/two <(rows "$tmp/tid2.tab") <<-'EOF'
			rec 7
			step 8
			work_a 1
			work_b 1
			EOF
	else
		fail tid "no tid for work_a, or: $(cat "$tmp"/tid*.why 2>/dev/null | head -2)"
	fi
fi

# ==== -t and --time-range ===================================================

if build phases phases.c && record phases phases 0 phases && views phases phases; then
	expect phases/tree <(paths "$(V phases tree)") <<-'EOF'
	main 1
	main;phase_a 1
	main;phase_a;nap 1
	main;phase_a;quick 5
	main;phase_b 1
	main;phase_b;nap 1
	main;phase_b;quick 3
	EOF
	# siblings by total time: phase_b (150 ms) before phase_a (100 ms), nap before quick
	expect phases/tree-order <(awk 'NR > 2 { print substr($0, 43) }' "$(V phases tree)") <<-'EOF'
	main
	+-phase_b
	| +-nap
	| +-quick
	+-phase_a
	  +-nap
	  +-quick
	EOF
	vs_uftrace phases phases 0
	# -t 20ms: the quick calls are gone, their time is their caller's
	if views time-filter phases -t 20ms; then
		expect time-filter/table <(rows "$(V time-filter tab)") <<-'EOF'
		main 1
		nap 2
		phase_a 1
		phase_b 1
		EOF
		got=$(awk '$1 == "main;phase_a" { print $2 }' "$(V time-filter fold)")
		want=$(awk '$1 == "main;phase_a" || $1 == "main;phase_a;quick" { s += $2 } END { print s + 0 }' "$(V phases fold)")
		check time-filter/self "$([ "$got" = "$want" ] || echo "phase_a's self with -t: $got ns; with its quick calls: $want ns")"
	fi
	if rd "$tmp/pg" replay --format graph -t 20ms "$tmp/phases.rec"; then
		expect time-filter/graph <(strip <"$tmp/pg") <<-'EOF'
		main() {
		  phase_a() {
		    nap();
		  } /* phase_a */
		  phase_b() {
		    nap();
		  } /* phase_b */
		} /* main */
		EOF
	else
		fail time-filter/graph "$(cat "$tmp/pg.why")"
	fi
	if [ -n "$have_uftrace" ] && rd "$tmp/pt" replay -t 20ms "$tmp/phases.rec"; then
		python3 "$NORM" text <"$tmp/pt" >"$tmp/pt.seq"
		expect time-filter/text "$tmp/pt.seq" <<-'EOF'
		1 ENTER main
		1 ENTER phase_a
		1 ENTER nap
		1 EXIT nap
		1 EXIT phase_a
		1 ENTER phase_b
		1 ENTER nap
		1 EXIT nap
		1 EXIT phase_b
		1 EXIT main
		EOF
	fi
	# --time-range from the first event: phase_b starts 100 ms or more after it
	if views time-range phases -r '~50ms'; then
		expect time-range/early <(rows "$(V time-range tab)") <<-'EOF'
		main 1
		nap 1
		phase_a 1
		quick 5
		EOF
	fi
	if views time-range-late phases -r '90ms~'; then
		expect time-range/late <(paths "$(V time-range-late tree)") <<-'EOF'
		phase_b 1
		phase_b;nap 1
		phase_b;quick 3
		EOF
	fi
	if rd "$tmp/pr" replay --format graph -r '90ms~' -D 1 "$tmp/phases.rec"; then
		expect time-range/depth-graph <(strip <"$tmp/pr") <<<"phase_b();"
	else
		fail time-range/depth-graph "$(cat "$tmp/pr.why")"
	fi
	# a time as replay prints it: from phase_b's entry on
	if rd "$tmp/pg0" replay --format graph "$tmp/phases.rec"; then
		tb=$(awk '/phase_b\(\) \{/ { print $1 }' "$tmp/pg0")
		if rd "$tmp/pra" report --format tree -r "$tb~" "$tmp/phases.rec" &&
		   rd "$tmp/prg" replay --format graph -r "$tb~" "$tmp/phases.rec"; then
			expect time-range/absolute <(paths "$tmp/pra") <<-'EOF'
			phase_b 1
			phase_b;nap 1
			phase_b;quick 3
			EOF
			expect time-range/absolute-graph <(strip <"$tmp/prg") <<-'EOF'
			phase_b() {
			  quick();
			  quick();
			  quick();
			  nap();
			} /* phase_b */
			EOF
		else
			fail time-range/absolute "$tb~: $(cat "$tmp/pra.why" "$tmp/prg.why" 2>/dev/null)"
		fi
	fi
	if [ -n "$have_uftrace" ] && rd "$tmp/prt" replay -r '90ms~' "$tmp/phases.rec"; then
		python3 "$NORM" text <"$tmp/prt" | awk '{ print $2, $3 }' | uniq -c | awk '{ print $2, $3, $1 }' >"$tmp/prt.seq"
		expect time-range/text "$tmp/prt.seq" <<-'EOF'
		ENTER phase_b 1
		ENTER quick 1
		EXIT quick 1
		ENTER quick 1
		EXIT quick 1
		ENTER quick 1
		EXIT quick 1
		ENTER nap 1
		EXIT nap 1
		EXIT phase_b 1
		EOF
	fi
fi

# ==== arguments in the graph ================================================

if build args args.c; then
	EV=(-e 'f *' -e 'f *%return'
	    -e 'f add a=$arg1:s32 b=$arg2:s32' -e 'f add%return $retval:s32'
	    -e 'f big v:u64' -e 'f big%return $retval:u64'
	    -e 'f ptr p:x64' -e 'f ptr%return $retval:x64'
	    -e 'f slen s:string' -e 'f slen%return $retval'
	    -e 'f up c:char' -e 'f up%return $retval:char'
	    -e 'f scale x k' -e 'f scale%return $retval'
	    -e 'f scalef x' -e 'f scalef%return $retval'
	    -e 'f sum arr=+0($arg1):s32[4] n:s32' -e 'f sum%return $retval:s32')
	if record args args 0 args && rd "$tmp/ag" replay --format graph "$tmp/args.rec"; then
		expect args/graph <(strip <"$tmp/ag") <<-'EOF'
		main() {
		  show() {
		    add(5, 3) = 8;
		    add(-7, 2) = -5;
		    big(9223372036854775813) = 9223372036854775814;
		    ptr(0x1234abcd) = 0x1234abdd;
		    slen("hi you") = 6;
		    up('q') = 'Q';
		    scale(2.5, 3) = 7.5;
		    scalef(0.25) = 0.5;
		    sum({1,-2,3,40}, 4) = 42;
		  } /* show */
		} /* main */
		EOF
		# one call however many probes: counted once
		if views args args; then
			expect args/table <(rows "$(V args tab)") <<-'EOF'
			add 2
			big 1
			main 1
			ptr 1
			scale 1
			scalef 1
			show 1
			slen 1
			sum 1
			up 1
			EOF
		fi
		if rd "$tmp/agF" replay --format graph -F add "$tmp/args.rec" &&
		   rd "$tmp/agD" replay --format graph -D 2 "$tmp/args.rec"; then
			expect args/graph-F <(strip <"$tmp/agF") <<-'EOF'
			add(5, 3) = 8;
			add(-7, 2) = -5;
			EOF
			expect args/graph-D <(strip <"$tmp/agD") <<-'EOF'
			main() {
			  show();
			} /* main */
			EOF
		else
			fail args/graph-filtered "$(cat "$tmp/agF.why" "$tmp/agD.why" 2>/dev/null)"
		fi
		if rd "$tmp/at" replay -F add "$tmp/args.rec"; then
			expect args/text <(grep -o 'a=[-0-9]* b=[-0-9]*' "$tmp/at") <<-'EOF'
			a=5 b=3
			a=-7 b=2
			EOF
		fi
	elif [ -f "$tmp/args.rec" ]; then
		fail args/graph "$(cat "$tmp/ag.why")"
	fi
	EV=()
fi
exit 0
