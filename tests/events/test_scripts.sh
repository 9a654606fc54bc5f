#!/bin/bash
# PROG may be a "#!" script: events resolve in the programs it runs, three
# scripts deep, through an interpreter that is a script itself, under
# record + replay and trace alike.  A child whose environment was cleared
# (env -i) runs untraced, and the summary says so and why.
set -o pipefail
cd "${FHOOK_ROOT:-$(dirname "$0")/../..}" || exit 2
F=$PWD/build/fhook
T=$(mktemp -d)
trap 'rm -rf "$T"' EXIT
CHECK_PREFIX=scripts
. tests/check.sh

cat > $T/p.c <<'C'
#include <stdio.h>
__attribute__((noinline)) int work(int x) { __asm__ volatile(""); return x + 1; }
int main(void) { printf("%d\n", work(work(1))); return 0; }
C
gcc -O1 $($F cflags) -o $T/p $T/p.c || exit 2
printf '#!/bin/sh\n%s/p\n' "$T" > $T/low.sh
printf '#!/bin/sh\n%s/low.sh\n' "$T" > $T/mid.sh
printf '#!/bin/sh\n%s/mid.sh\n' "$T" > $T/top.sh
# an interpreter that is a script itself: the kernel runs runner.sh with wrap.sh's path
printf '#!/bin/sh\nexec %s/p\n' "$T" > $T/runner.sh
printf '#!%s/runner.sh\n' "$T" > $T/wrap.sh
chmod +x $T/*.sh

for s in top wrap; do
	out=$(timeout 60 $F record -e 'f work x=$arg1:s32' -o $T/r.rec -- $T/$s.sh 2>&1); st=$?
	check ${s}_record eq "$st:$(grep -c '^3$' <<< "$out"):$(grep -c 'Exec format' <<< "$out")" "0:1:0"
	check ${s}_replay eq "$(timeout 60 $F replay $T/r.rec | sed 's/.*work__entry: ([^)]*) //' |
		tr '\n' ' ')" "x=1 x=2 "
	out=$(timeout 60 $F trace -e 'f work x=$arg1:s32' -o $T/t.out -- $T/$s.sh 2>&1); st=$?
	check ${s}_trace eq "$st:$(sed 's/.*work__entry: ([^)]*) //' $T/t.out | tr '\n' ' ')" \
		"0:x=1 x=2 "
done

# a script that is not executable, or whose interpreter does not exist: the shell's answer
printf '#!/nonexistent/interp\n' > $T/bad.sh
chmod +x $T/bad.sh
out=$(timeout 60 $F record -o $T/b.rec -- $T/bad.sh 2>&1); st=$?
check bad_interpreter eq "$st:$([ -e $T/b.rec ] && echo file || echo none)" "127:none"
check bad_interpreter_said eq "$out" "fhook: record: $T/bad.sh: its interpreter /nonexistent/interp: No such file or directory"

# env -i: the child cannot be followed; the summary names it and why
out=$(timeout 60 $F record -o $T/e.rec -- env -i $T/p 2>&1); st=$?
check env_i_named eq "$st:$(grep 'pid [0-9]* (env)' <<< "$out" | sed 's/pid [0-9]*/pid N/')" \
	"0:fhook: record:   pid N (env): started $T/p: untraced, its environment was cleared of fhook's variables (env -i, clearenv()): start it under fhook itself to trace it"
check env_i_no_misleading_hint eq "$(grep -c 'nor had the programs it started' <<< "$out")" 0
