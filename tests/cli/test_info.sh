#!/bin/bash
# fhook info: what a recording is.  Recordings of known programs (their
# command line, pids, threads, events and functions known), one attached
# to with -p, the same in JSON; one without RF_INFO (an older fhook's),
# with a damaged or a hostile RF_INFO, and one cut short: each still reads.
set -o pipefail
cd "$FHOOK_ROOT" || exit 2
F=$FHOOK_ROOT/build/fhook
T=$(mktemp -d)
SPIN=
trap '[ -n "$SPIN" ] && kill $SPIN 2>/dev/null; rm -rf $T' EXIT

check() {	# name, condition (as a command), message
	local name=$1; shift
	if "$@"; then echo "PASS $name"; else echo "FAIL $name: $*"; fi
}
eq() { [ "$1" = "$2" ] || { echo "  got:      $(printf %q "$1")"; echo "  expected: $(printf %q "$2")"; return 1; }; }
match() { [[ $1 =~ $2 ]] || { echo "  got:      $(printf %q "$1")"; echo "  expected: /$2/"; return 1; }; }
# the value of a "name:   value" line of fhook info's output
field() { sed -n "s/^$1: *//p" <<< "$2"; }
# the count fhook record printed: "fhook: record: N events, ..."
recorded() { sed -n 's/^fhook: record: \([0-9]*\) events.*/\1/p' "$1"; }

gcc -O2 $($F cflags) -o $T/prog tests/cli/prog.c || { echo "FAIL info_build: prog"; exit 0; }
# a thread and a child process, each pid printed
cat > $T/pp.c <<'EOF'
#include <pthread.h>
#include <stdio.h>
#include <sys/wait.h>
#include <unistd.h>
volatile int sink;
__attribute__((noinline)) int leaf(int x) { return x + 1; }
__attribute__((noinline)) int mid(int x) { return leaf(x) * 2; }
__attribute__((noinline)) void *worker(void *arg) { sink = mid(1); return NULL; }
int main(int argc, char **argv)
{
	pthread_t t;
	pid_t c;

	printf("%d\n", getpid());
	fflush(stdout);
	if (argc > 1) {
		/* attached to (-p): until killed */
		for (;;) {
			sink = leaf(sink);
			usleep(1000);
		}
	}
	pthread_create(&t, NULL, worker, NULL);
	pthread_join(t, NULL);
	c = fork();
	if (!c) {
		printf("%d\n", getpid());
		return leaf(2) == 3 ? 0 : 1;
	}
	waitpid(c, NULL, 0);
	return mid(0) == 2 ? 0 : 1;
}
EOF
gcc -O1 $($F cflags) -o $T/pp $T/pp.c -lpthread || { echo "FAIL info_build: pp"; exit 0; }

# one process: prog.c's four functions, each entered and left once
before=$(date +%s)
(cd $T && $F record -o $T/r.rec -- ./prog a 'b c' > $T/out 2> $T/err)
st=$?
after=$(date +%s)
events=$(recorded $T/err)
check record_ok eq "$st, $(cat $T/out), $events" "0, 5, 8"
out=$($F info $T/r.rec); st=$?
check info_exit eq "$st" 0
check info_file eq "$(field file "$out")" "$T/r.rec ($(stat -c %s $T/r.rec) bytes)"
check info_command eq "$(field command "$out")" "./prog a 'b c'"
check info_processes eq "$(field processes "$out")" 1
check info_process_row match "$(grep '^  pid' <<< "$out")" \
	"^  pid [0-9]+: $T/prog, 1 thread, 8 events, 4 functions\$"
check info_threads eq "$(field threads "$out")" 1
check info_events eq "$(field events "$out")" "$events"
check info_counts eq "$(field lost "$out") $(field nmissed "$out") $(field waits "$out")" "0 0 0"
check info_ended eq "$(field ended "$out")" finished
check info_functions eq "$(field functions "$out")" 4
check info_version eq "fhook $(field fhook "$out")" "$($F version)"
check info_host eq "$(field host "$out")" "$(uname -n)"
check info_kernel eq "$(field kernel "$out")" "$(uname -r) $(uname -m)"
want_cpu=$(sed -n 's/^model name[[:space:]]*: *//p' /proc/cpuinfo | head -1)
check info_cpu eq "$(field cpu "$out")" "${want_cpu:-unknown}"
check info_duration match "$(field duration "$out")" '^0\.[0-9]{6} s \(first to last event\)$'
# "Tue 2024-03-05 14:02:03 CET, 2024-03-05T14:02:03.123456+01:00": the same instant twice
started=$(field started "$out")
iso=${started##*, }
check info_started_iso match "$iso" '^[0-9]{4}-[0-9]{2}-[0-9]{2}T[0-9]{2}:[0-9]{2}:[0-9]{2}\.[0-9]{6}[+-][0-9]{2}:[0-9]{2}$'
at=$(date -d "$iso" +%s 2>/dev/null)
check info_started_when test -n "$at" -a "${at:-0}" -ge "$before" -a "${at:-0}" -le "$after"
check info_started_local eq "$(date -d "@$at" '+%a %Y-%m-%d %H:%M:%S %Z')" "${started%%, *}"
check info_no_skipped eq "$(field skipped "$out")" ""

# a thread, and a child process: each pid and its threads
(cd $T && $F record -o $T/pp.rec -- ./pp > $T/out 2> $T/err)
st=$?
parent=$(sed -n 1p $T/out) child=$(sed -n 2p $T/out)
out=$($F info $T/pp.rec)
check info_pp_processes eq "$st, $(field processes "$out"), $(field threads "$out")" "0, 2, 3"
check info_pp_parent match "$(grep "^  pid $parent:" <<< "$out")" \
	"^  pid $parent: $T/pp, 2 threads, [0-9]+ events, 4 functions\$"
check info_pp_child match "$(grep "^  pid $child:" <<< "$out")" \
	"^  pid $child: $T/pp, 1 thread, [0-9]+ events?, [0-9]+ functions?\$"
sum=$(grep '^  pid' <<< "$out" | awk -F', ' '{ split($3, e, " "); n += e[1] } END { print n }')
check info_pp_events eq "$sum $(field events "$out")" "$(recorded $T/err) $(recorded $T/err)"

# -p: the pid and the process's own command line
(cd $T && exec ./pp spin 'x y' > $T/spin.out) &
SPIN=$!
for i in $(seq 100); do [ -s $T/spin.out ] && break; sleep 0.02; done
$F record -p $SPIN --duration 0.2 -o $T/p.rec > /dev/null 2> $T/err
st=$?
if [ $st != 0 ] && grep -q 'not permitted\|ptrace' $T/err; then
	echo "SKIP info_attached: cannot attach here: $(head -1 $T/err)"
else
	out=$($F info $T/p.rec)
	check info_attached_command eq "$st: $(field command "$out")" "0: pid $SPIN (attached): ./pp spin 'x y'"
	# leaf(), called in the loop; main() was entered before the attach and never returns
	check info_attached_functions eq "$(field functions "$out")" 1
fi
kill $SPIN 2>/dev/null
wait $SPIN 2>/dev/null
SPIN=

# usage and errors
out=$($F info $T/r.rec extra 2>&1); st=$?
check info_usage_extra eq "$st" 2
out=$($F info $T/missing.rec 2>&1); st=$?
check info_missing eq "$st: $out" "1: fhook: info: $T/missing.rec: No such file or directory"
echo "not a recording at all" > $T/text.rec
out=$($F info $T/text.rec 2>&1); st=$?
check info_not_recording eq "$st" 1

if ! command -v python3 > /dev/null; then
	echo "SKIP info_json: no python3"
	echo "SKIP info_damaged: no python3"
	exit 0
fi

# --json: one object, for scripts
$F info --json $T/r.rec > $T/r.json
check info_json python3 - $T/r.json "$events" "$($F version)" <<'PY'
import json, sys
j = json.load(open(sys.argv[1]))
want = {"command": ["./prog", "a", "b c"], "command_cut": False, "attached_pid": 0,
        "threads": 1, "events": int(sys.argv[2]), "events_in_file": int(sys.argv[2]),
        "lost": 0, "nmissed": 0, "waits": 0, "end": "finished", "end_status": 0,
        "functions": 4, "truncated": False, "skipped": 0,
        "version": sys.argv[3].split()[1]}
bad = {k: (j.get(k), v) for k, v in want.items() if j.get(k) != v}
p = j["processes"]
if len(p) != 1 or p[0]["threads"] != 1 or p[0]["functions"] != 4 or not p[0]["program"].endswith("/prog"):
    bad["processes"] = p
if not 0 <= j["duration_ns"] < 10**9 or j["first_event_mono_ns"] < j["start_mono_ns"]:
    bad["times"] = (j["start_mono_ns"], j["first_event_mono_ns"], j["duration_ns"])
if bad:
    print("  ", bad)
sys.exit(1 if bad else 0)
PY

# the RF_INFO block (type 8) of r.rec removed, damaged, or hostile
python3 - $T/r.rec $T <<'PY'
import struct, sys
data = open(sys.argv[1], "rb").read()
T = sys.argv[2]
hdr = struct.unpack_from("<I", data, 12)[0]
off, blocks = hdr, []
while off + 8 <= len(data):
    typ, ln = struct.unpack_from("<II", data, off)
    blocks.append((off, typ, ln))
    off += 8 + ((ln + 7) & ~7)
(io, _, iln), = [b for b in blocks if b[1] == 8]
end = [b for b in blocks if b[1] == 7][0][0]
nxt = io + 8 + ((iln + 7) & ~7)
def put(name, d):
    open(f"{T}/{name}.rec", "wb").write(d)
def info_with(off, fmt, *vals):
    d = bytearray(data)
    struct.pack_into(fmt, d, io + 8 + off, *vals)
    return bytes(d)
put("old", data[:io] + data[nxt:])			# an older fhook's: no RF_INFO
put("bad_hdr", info_with(0, "<I", 0xffffffff))		# hdr_len past the block
put("bad_small", info_with(0, "<I", 8))			# hdr_len inside the header
put("bad_argv", info_with(48, "<I", 0xfffffff0))	# argv_len past the block
put("bad_sum", info_with(28, "<6I", *([0x40000000] * 6)))	# lengths that wrap 32 bits
d = bytearray(data)
d[io + 8 + iln - 1] = ord("x")				# the last argument without its NUL
put("bad_nul", bytes(d))
put("cut", data[:end + 4])				# cut inside RF_END
# hostile strings: a terminal escape in the host name, bytes that are not UTF-8 in an argument
h = list(struct.unpack_from("<IIQQI6II", data, io + 8))
strs = [b"0.1.0", b"evil\x1b[2J", b"r", b"m", b"c"]
argv = b"./prog\0\xff\xfe\0"
h[0], h[5:11] = 56, [len(s) for s in strs] + [len(argv)]
body = struct.pack("<IIQQI6II", *h) + b"".join(strs) + argv
blk = struct.pack("<II", 8, len(body)) + body + b"\0" * ((-len(body)) % 8)
put("hostile", data[:io] + blk + data[nxt:])
PY

out=$($F info $T/old.rec 2> $T/err); st=$?
check info_old_reads eq "$st, $(field events "$out"), $(field functions "$out"), $(field ended "$out")" \
	"0, $events, 4, finished"
check info_old_unknown eq "$(field command "$out")|$(field started "$out")|$(field fhook "$out")|$(field host "$out")|$(field kernel "$out")|$(field cpu "$out")" \
	"unknown|unknown|unknown|unknown|unknown|unknown"
check info_old_no_skipped eq "$(field skipped "$out")" ""
check info_old_json python3 -c '
import json, sys
j = json.load(sys.stdin)
sys.exit(0 if j["command"] is None and j["version"] is None and j["start"] is None and j["events"] == int(sys.argv[1]) else 1)' \
	"$events" < <($F info --json $T/old.rec 2>/dev/null)

for b in bad_hdr bad_small bad_argv bad_sum bad_nul; do
	out=$($F info $T/$b.rec 2> $T/err); st=$?
	check info_${b}_reads eq "$st, $(field events "$out"), $(field functions "$out"), $(field command "$out"), $(field fhook "$out")" \
		"0, $events, 4, unknown, unknown"
	check info_${b}_counted eq "$(field skipped "$out")" "1 (blocks or records that did not parse)"
	$F replay $T/$b.rec > /dev/null 2>&1
	check info_${b}_replay_reads eq "$?" 0
done

out=$($F info $T/hostile.rec 2> $T/err); st=$?
check info_hostile_reads eq "$st, $(field events "$out"), $(field host "$out")" "0, $events, evil?[2J"
check info_hostile_no_escape eq "$(grep -c $'\x1b' <<< "$out")" 0
check info_hostile_json python3 -c '
import json, sys
j = json.load(sys.stdin)
sys.exit(0 if j["host"] == "evil\x1b[2J" and j["command"] == ["./prog", "\ufffd\ufffd"] else 1)' \
	< <($F info --json $T/hostile.rec 2>/dev/null)

out=$($F info $T/cut.rec 2> $T/err); st=$?
check info_cut_reads eq "$st, $(field command "$out"), $(field functions "$out")" "0, ./prog a 'b c', 4"
check info_cut_ended match "$(field ended "$out")" '^not finished: the recording ends early'
check info_cut_events eq "$(field events "$out")|$(field lost "$out")" "$events in the file|unknown"
check info_cut_warned grep -q 'ends early' $T/err
