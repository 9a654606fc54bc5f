#!/bin/bash
# Unmodified Debian programs with a kprobe on the entry of every function
# of their code (kpcover.so, preloaded): xz (liblzma), bash, sqlite3
# (libsqlite3) and python3.11 run a piece of work each; the output must
# be the unprobed run's, every function probed (a jump or a trap, none
# failed), and some hit.  Then once more with kretprobes (entry and exit)
# on liblzma.
set -o pipefail
cd "$(dirname "$0")/../.." || exit 2
. tests/check.sh
B=${FHOOK_BUILD:-build}
COVER=$PWD/$B/tests/kprobes/kpcover.so
T=$(mktemp -d)
trap 'rm -rf $T' EXIT

[ -f "$COVER" ] || { echo "FAIL real_built: $COVER missing"; exit 1; }
seq 1 60000 | sed 's/$/ kprobes on every function/' > $T/in

# name, objects, command...: run it twice, compare, read the report
cover() {
	local name=$1 objects=$2 want out got report
	shift 2
	if ! command -v "$1" >/dev/null; then
		echo "SKIP real_$name: $1 is not installed"
		return
	fi
	want=$(timeout 120 "$@" < $T/stdin | md5sum)
	rm -f $T/report
	got=$(env KPCOVER_OUT=$T/report KPCOVER_OBJECTS=$objects LD_PRELOAD=$COVER \
		timeout 120 "$@" < $T/stdin | md5sum)
	report=$(grep "^kpcover: [0-9]" $T/report 2>/dev/null)
	echo "# $name: $report"
	check "${name}_output_unchanged" eq "$got" "$want"
	check "${name}_probed" grep -q "kpcover: [1-9][0-9]* functions: .*, 0 failed" <<< "$report"
	check "${name}_hit" grep -q "; [1-9][0-9]* hits" <<< "$report"
}

: > $T/stdin
cover xz liblzma xz -9 -c $T/in

cat > $T/script.sh <<'SH'
s=0; for i in $(seq 1 2000); do s=$((s + i * i % 7)); done; echo $s
a=(); for i in {1..300}; do a+=("x$i"); done; echo "${#a[@]} ${a[299]}"
f() { local x=$1; [ $x -le 1 ] && echo 1 && return; echo $(( x * $(f $((x-1))) )); }; f 10
str="hello world"; echo ${str^^} ${str//o/0} $(printf '%05d' 42)
SH
cover bash main bash $T/script.sh

cat > $T/stdin <<'SQL'
create table t(a integer primary key, b text, c real);
with recursive n(i) as (select 1 union all select i+1 from n where i < 20000)
  insert into t select i, 'v' || (i*7 % 1000), i / 3.0 from n;
create index tb on t(b);
select count(*), sum(a), max(b), round(avg(c), 3) from t;
select b, count(*) from t group by b order by 2 desc, 1 limit 5;
SQL
cover sqlite3 libsqlite3 sqlite3 :memory:

: > $T/stdin
cat > $T/work.py <<'PY'
import json, re, hashlib
d = {str(i): [i * j for j in range(20)] for i in range(2000)}
s = json.dumps(d, sort_keys=True)
print(hashlib.sha256(s.encode()).hexdigest(), len(re.findall(r'\d+7\b', s)))
print(sum(x * x for x in range(100000)), 3.5 ** 2.5)
PY
cover python3 main /usr/bin/python3.11 $T/work.py

# entry and exit: kretprobes on every function of liblzma
export KPCOVER_RET=1
cover xz_ret liblzma xz -9 -c $T/in
# every call returned (xz exits from main, which liblzma is not)
hits=$(sed -n 's/.*; \([0-9]*\) hits.*/\1/p' $T/report)
returns=$(sed -n 's/.*; \([0-9]*\) returns.*/\1/p' $T/report)
check xz_ret_every_entry_returned eq "$returns" "$hits"
