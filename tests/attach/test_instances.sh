#!/bin/bash
# Several tracers on one process at once (tracing instances): trace -p beside
# record -p, two record -p with different events, each with its own events
# and counts; one stopped (Ctrl-C or SIGKILL) while the other goes on, in
# either order; a recording started with the program and a trace -p of it;
# the most at once (4) and the refusal of one more.
. "$(dirname "$0")/lib.sh"

# bg NAME CMD ARGS...: fhook CMD in the background, back once it has attached
# (or failed); its pid in $bg_pid, its stderr in $TMP/NAME.err
bg() {
	local name=$1 i
	shift
	: > "$TMP/$name.err"
	"$FHOOK" "$@" 2> "$TMP/$name.err" &
	bg_pid=$!
	for i in $(seq 250); do
		grep -q 'attached to process\|^fhook: [a-z]*: .*\(process\|rror\)' "$TMP/$name.err" && break
		kill -0 "$bg_pid" 2>/dev/null || break
		sleep 0.02
	done
}

# summary NAME: the counts line of a command's stderr ("N events, N nmissed, N lost")
summary() {
	grep -o '[0-9]* events, [0-9]* nmissed, [0-9]* lost' "$TMP/$1.err"
}

# stop PID: Ctrl-C, and its exit status
stop() {
	kill -INT "$1"
	wait "$1"
}

# replay_of FILE PATTERN: the values of the replayed events matching PATTERN, on one line
replay_of() {
	"$FHOOK" replay "$1" 2>/dev/null | grep "$2" | sed -E 's/.* ([a-z]+=[0-9]+)$/\1/' |
		tr '\n' ' '
}

# ---- trace -p and record -p at once, different events; trace stopped first ----
start_prog 2
bg t trace -p "$pid" -e 'f ping x' -o "$TMP/t.out"
tpid=$bg_pid
bg r record -p "$pid" -e 'f ping%return r=$retval' -o "$TMP/r.rec"
rpid=$bg_pid
expect both_attached "$(grep -c 'attached to process' "$TMP/t.err" "$TMP/r.err" | tr '\n' ' ')" \
	"$TMP/t.err:1 $TMP/r.err:1 "
for i in 1 2 3; do ask "call $i" > /dev/null; done
stop "$tpid"
expect trace_stopped "$?:$(grep -c "detached from process $pid" "$TMP/t.err")" "0:1"
# the record -p goes on with its probes alone
for i in 4 5; do ask "call $i" > /dev/null; done
expect trace_own_events "$(sed -E 's/.*ping__entry: \(ping\+0x0\/0x[0-9a-f]+\) //' "$TMP/t.out" |
	tr '\n' ' ')" "x=1 x=2 x=3 "
expect trace_own_counts "$(summary t)" "3 events, 0 nmissed, 0 lost"
stop "$rpid"
expect record_stopped "$?:$(grep -c "detached from process $pid" "$TMP/r.err")" "0:1"
expect record_own_counts "$(summary r)" "5 events, 0 nmissed, 0 lost"
expect record_replays "$(replay_of "$TMP/r.rec" ping__exit)" "r=2 r=3 r=4 r=5 r=6 "
expect record_no_entries "$("$FHOOK" replay "$TMP/r.rec" | grep -c ping__entry)" 0
expect after_both_untraced "$(ask 'call 6')" "ping 6 -> 7"
expect after_both_no_fd "$(ls -l /proc/"$pid"/fd | grep -c memfd)" 0
expect trace_record_exit "$(stop_prog)" "calls ok, bad 0"

# ---- two record -p, different -e, on one function; the first stopped first ----
# (the first takes the trampolines' records, the second the C handlers')
start_prog 4
bg a record -p "$pid" -e 'f ping' -o "$TMP/a.rec"
apid=$bg_pid
bg b record -p "$pid" -e 'f ping%return' -e 'f work' -o "$TMP/b.rec"
bpid=$bg_pid
for i in 1 2 3 4; do ask "call $i" > /dev/null; done
stop "$apid"
expect first_stopped "$?:$(grep -c "detached from process $pid" "$TMP/a.err")" "0:1"
for i in 5 6; do ask "call $i" > /dev/null; done
stop "$bpid"
expect second_stopped "$?:$(grep -c "detached from process $pid" "$TMP/b.err")" "0:1"
expect first_counts "$(summary a)" "4 events, 0 nmissed, 0 lost"
expect first_replays "$("$FHOOK" replay "$TMP/a.rec" | grep -c 'ping__entry')" 4
expect first_only_its_events "$("$FHOOK" replay "$TMP/a.rec" | grep -vc 'ping__entry')" 0
expect second_returns "$("$FHOOK" replay "$TMP/b.rec" | grep -c 'ping__exit')" 6
expect second_no_ping_entries "$("$FHOOK" replay "$TMP/b.rec" | grep -c 'ping__entry')" 0
# the busy threads' work() calls, recorded by the second alone
expect second_work "$("$FHOOK" report "$TMP/b.rec" 2>/dev/null | grep -c ' work$')" 1
expect second_lost "$(summary b | grep -o '[0-9]* lost$')" "0 lost"
expect two_records_answers "$(ask 'call 7')" "ping 7 -> 8"
expect two_records_exit "$(stop_prog)" "calls ok, bad 0"

# ---- the other order: the second stopped first, the first goes on ----
start_prog 2
bg a record -p "$pid" -e 'f ping' -o "$TMP/a.rec"
apid=$bg_pid
bg b trace -p "$pid" -e 'f ping x' -o "$TMP/b.out"
bpid=$bg_pid
for i in 1 2; do ask "call $i" > /dev/null; done
stop "$bpid"
expect later_stopped "$?:$(summary b)" "0:2 events, 0 nmissed, 0 lost"
for i in 3 4 5; do ask "call $i" > /dev/null; done
stop "$apid"
expect earlier_counts "$?:$(summary a)" "0:5 events, 0 nmissed, 0 lost"
expect earlier_replays "$("$FHOOK" replay "$TMP/a.rec" | grep -c 'ping__entry')" 5
expect other_order_exit "$(stop_prog)" "calls ok, bad 0"

# ---- one command killed: the control thread removes its probes only ----
start_prog 2
bg a record -p "$pid" -e 'f ping' -o "$TMP/a.rec"
apid=$bg_pid
bg b trace -p "$pid" -e 'f ping x' -o "$TMP/b.out"
bpid=$bg_pid
ask 'call 1' > /dev/null
kill -KILL "$apid"
wait "$apid" 2>/dev/null
for i in $(seq 100); do grep -q 'ended without detaching' "$out" && break; sleep 0.05; done
expect killed_said "$(grep -c "the fhook process that traced it ($apid) ended without detaching; its probes removed, 1 other recording goes on" "$out")" 1
for i in 2 3; do ask "call $i" > /dev/null; done
stop "$bpid"
expect survivor_events "$?:$(summary b)" "0:3 events, 0 nmissed, 0 lost"
expect killed_exit "$(stop_prog | tail -1)" "calls ok, bad 0"

# ---- kprobe events of both on one function: each its own kprobe there ----
start_prog 2
bg a record -p "$pid" -e 'p ping' -o "$TMP/a.rec"
apid=$bg_pid
bg b trace -p "$pid" -e 'p ping x=%di' -e 'r ping r=$retval' -o "$TMP/b.out"
bpid=$bg_pid
for i in 1 2 3; do ask "call $i" > /dev/null; done
stop "$apid"
expect kprobe_first_counts "$?:$(summary a)" "0:3 events, 0 nmissed, 0 lost"
ask 'call 4' > /dev/null
stop "$bpid"
expect kprobe_second_events "$?:$(sed -E 's/.*\) //' "$TMP/b.out" | tr '\n' ' ')" \
	"0:x=0x1 r=2 x=0x2 r=3 x=0x3 r=4 x=0x4 r=5 "
expect kprobe_first_replays "$("$FHOOK" replay "$TMP/a.rec" | grep -c 'ping')" 3
expect kprobe_exit "$(stop_prog)" "calls ok, bad 0"

# ---- four at once; a fifth is refused, named, and touches no file ----
start_prog 2
pids=()
for n in 1 2 3 4; do
	bg "m$n" record -p "$pid" -e 'f ping' -o "$TMP/m$n.rec"
	pids+=("$bg_pid")
done
expect four_attached "$(cat "$TMP"/m[1-4].err | grep -c 'attached to process')" 4
"$FHOOK" trace -p "$pid" -e 'f ping x' -o "$TMP/fifth.out" 2>"$TMP/err"
expect fifth_refused "$?:$(cat "$TMP/err")" \
	"1:fhook: trace: process $pid is being recorded or traced by 4 fhook commands already, the most at once: stop one of them first"
expect fifth_no_file "$([ -e "$TMP/fifth.out" ] && echo created || echo none)" none
printf 'an older recording\n' > "$TMP/old.rec"
"$FHOOK" record -p "$pid" -e 'f ping' -o "$TMP/old.rec" 2>"$TMP/err"
expect fifth_record_refused "$?:$(grep -c "^fhook: record: process $pid is being recorded or traced by 4 fhook commands already" "$TMP/err")" "1:1"
expect fifth_record_file_kept "$(cat "$TMP/old.rec")" "an older recording"
ask 'call 1' > /dev/null
stop "${pids[1]}"
expect one_of_four_stopped "$?:$(summary m2)" "0:1 events, 0 nmissed, 0 lost"
# its slot is free again
"$FHOOK" record -p "$pid" -e 'f ping' -o "$TMP/fifth.rec" --duration 0.5 2>"$TMP/err" &
fpid=$!
sleep 0.3
ask 'call 2' > /dev/null
wait "$fpid"
expect fifth_after_one_stopped "$?:$("$FHOOK" replay "$TMP/fifth.rec" | grep -c ping__entry)" "0:1"
for n in 0 2 3; do
	stop "${pids[$n]}"
	expect "four_m$((n + 1))_counts" "$?:$(summary "m$((n + 1))")" "0:2 events, 0 nmissed, 0 lost"
done
expect four_exit "$(stop_prog)" "calls ok, bad 0"

# ---- a recording started with the program, and a trace -p of it ----
mkfifo "$TMP/sin"
exec {sin}<> "$TMP/sin"
"$FHOOK" record -e 'f ping' -o "$TMP/s.rec" -- "$P" 1 < "$TMP/sin" > "$TMP/sout" 2>"$TMP/s.err" &
kpid=$!
for i in $(seq 100); do grep -q '^ready' "$TMP/sout" && break; sleep 0.05; done
spid=$(awk '/^ready/ { print $2 }' "$TMP/sout")
PIDS+=("$spid")
bg t trace -p "$spid" -e 'f ping x' -o "$TMP/t.out"
tpid=$bg_pid
echo 'call 1' >&$sin
echo 'call 2' >&$sin
for i in $(seq 100); do grep -q '^ping 2' "$TMP/sout" && break; sleep 0.05; done
stop "$tpid"
expect started_traced "$?:$(summary t)" "0:2 events, 0 nmissed, 0 lost"
echo 'call 3' >&$sin
echo quit >&$sin
wait "$kpid"
expect started_record_ends "$?:$(grep -c '^calls ok, bad 0$' "$TMP/sout")" "0:1"
expect started_record_events "$("$FHOOK" replay "$TMP/s.rec" | grep -c 'ping__entry')" 3
exec {sin}>&-
