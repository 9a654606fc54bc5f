#!/bin/bash
# The readers' ends: a recording through a pipe (record -o - | report -),
# a directory, output to a full disk, a damaged recording's names in JSON
# and Chrome output (valid UTF-8, parseable), and the recorders' own small
# ends (--duration nan, a trace whose output fails).
set -o pipefail
cd "${FHOOK_ROOT:-$(dirname "$0")/../..}" || exit 2
F=$PWD/build/fhook
T=$(mktemp -d)
trap 'rm -rf "$T"' EXIT
CHECK_PREFIX=reader_ends
. tests/check.sh

cat > $T/p.c <<'C'
#include <stdio.h>
__attribute__((noinline)) int work(int x) { __asm__ volatile(""); return x + 1; }
int main(void) { printf("%d\n", work(work(1))); return 0; }
C
gcc -O1 $($F cflags) -o $T/p $T/p.c || exit 2
timeout 60 $F record -e 'f work' -e 'f work%return' -o $T/r.rec -- $T/p > /dev/null 2>&1 ||
	exit 2
want=$(timeout 60 $F report $T/r.rec 2>&1)

# through a pipe (PROG's own output goes to standard error), from stdin, from a FIFO
check pipe_report eq "$(timeout 60 $F record -e 'f work' -e 'f work%return' -o - -- $T/p \
	2>$T/perr | timeout 60 $F replay - 2>&1 | grep -c ' work__')" 4
check pipe_prog_output eq "$(head -1 $T/perr)" 3
check stdin_replay eq "$(timeout 60 $F replay /dev/stdin < $T/r.rec | grep -c work__)" 4
mkfifo $T/fifo
(cat $T/r.rec > $T/fifo &)
check fifo_report eq "$(timeout 60 $F report $T/fifo 2>&1)" "$want"
check not_a_recording_pipe eq "$(echo garbage | timeout 60 $F report - 2>&1; echo "rc=$?")" \
	"fhook: report: -: not a recording of fhook record
rc=1"
check directory eq "$(timeout 60 $F report $T 2>&1; echo "rc=$?")" "fhook: report: $T: Is a directory
rc=1"

# a full disk: said, status 1
for v in "report" "report --format tree" "report --format folded" "replay" "replay --format json" "info"; do
	out=$(timeout 60 $F $v $T/r.rec 2>&1 > /dev/full); st=$?
	check "full_${v// /_}" eq "$st:$(grep -c 'writing the output: No space left on device' <<< "$out")" "1:1"
done

# a damaged event name: JSON and Chrome output stay valid UTF-8 and parse
python3 - $T/r.rec $T/bad.rec <<'PY'
import sys
d = open(sys.argv[1], 'rb').read()
i = d.find(b'work__entry')
open(sys.argv[2], 'wb').write(d[:i + 1] + b'\xff\xfe' + d[i + 3:])
PY
timeout 60 $F replay --format json $T/bad.rec > $T/bad.json 2>/dev/null
timeout 60 $F replay --format chrome $T/bad.rec > $T/bad.chrome 2>/dev/null
check damaged_json eq "$(python3 -c '
import json, sys
evs = [json.loads(l)["event"] for l in open(sys.argv[1], encoding="utf-8")]
print(len(evs), " ".join(sorted(set(evs), key=len)))' $T/bad.json 2>&1)" "4 work__exit w��k__entry"
check damaged_chrome eq "$(python3 -c '
import json, sys
print(len(json.load(open(sys.argv[1], encoding="utf-8"))["traceEvents"]))' $T/bad.chrome 2>&1)" 4

# the recorders' small ends
check duration_nan eq "$($F record -p 1 --duration nan 2>&1; echo "rc=$?")" \
	"fhook: record: --duration needs seconds, got 'nan'
rc=2"
check duration_inf eq "$($F trace -p 1 --duration inf 2>&1 | head -1)" \
	"fhook: trace: --duration needs seconds, got 'inf'"
out=$(timeout 60 $F trace -e 'f work' -o /dev/full -- $T/p 2>&1); st=$?
check trace_full eq "$st:$(grep -c '^fhook: trace: [0-9]* events, 0 nmissed, [0-9]* lost; the output failed' <<< "$out")" "1:1"
