#!/bin/bash
# Stack switches: two contexts hand the thread to each other with
# swapcontext() from inside traced functions, the coroutine's stack an
# array in main's frame (inside the thread's own stack) or from malloc():
# the program runs as untraced, and every entry and exit is there, each
# exit naming its function, in `fhook trace` and `fhook record` + `fhook
# replay`.  Then a coroutine and main switch stacks 1,000,000 times, each
# time from inside a function whose return is hooked: nothing is lost or
# missed, and the output is the untraced one.
set -o pipefail
cd "${FHOOK_ROOT:-$(dirname "$0")/../..}" || exit 2
F=$PWD/build/fhook
S=$PWD/tests/events/ucontext
T=$(mktemp -d)
trap 'rm -rf "$T"' EXIT
CHECK_PREFIX=ucontext_tree
. tests/check.sh

gcc -O1 $($F cflags) -o $T/pingpong $S/pingpong.c || exit 2
gcc -O1 $($F cflags) -o $T/switch1m $S/switch1m.c || exit 2

# "entry FUNC" and "exit CALLER <- FUNC", one a line
calls() {
	sed -n 's/.*: \([a-z_]*_\)\{0,1\}\(entry\|exit\): (\(.*\))$/\2 \3/p' |
		sed -E 's/\+0x[0-9a-f]+\/0x[0-9a-f]+//g; s/^entry ([^ ]*).*/entry \1/; s/^exit 0x[0-9a-f]+ /exit ? /'
}

want="entry main
entry main_step
entry leaf
exit main_step <- leaf
entry co_body
entry co_step
entry leaf
exit co_step <- leaf
exit main <- main_step
entry main_step
entry leaf
exit main_step <- leaf
exit co_body <- co_step
entry co_step
entry leaf
exit co_step <- leaf
exit main <- main_step
entry main_step
entry leaf
exit main_step <- leaf
exit co_body <- co_step
entry co_step
entry leaf
exit co_step <- leaf
exit main <- main_step
entry main_step
entry leaf
exit main_step <- leaf
exit co_body <- co_step
exit ? <- co_body
exit main <- main_step
exit ? <- main"
for stack in local heap; do
	out=$(timeout 60 $F trace -e 'f *' -e 'f *%return' -o $T/t.txt -- $T/pingpong $stack 2>$T/err)
	check trace_${stack}_runs eq "$?:$out" "0:16"
	check trace_${stack}_calls eq "$(calls < $T/t.txt)" "$want"
	out=$(timeout 60 $F record -o $T/r.rec -- $T/pingpong $stack 2>$T/err)
	check record_${stack}_runs eq "$?:$out" "0:16"
	check record_${stack}_calls eq "$($F replay $T/r.rec | calls)" "$want"
done

EV=(-e 'f co_side' -e 'f co_side%return' -e 'f main_side' -e 'f main_side%return')
# the coroutine's last co_side never returns: it is never resumed
counts="1000000 co_side__entry:
 999999 co_side__exit:
1000000 main_side__entry:
1000000 main_side__exit:"
out=$(timeout 300 $F record "${EV[@]}" -o $T/s.rec -- $T/switch1m 2>$T/err)
check record_1m_runs eq "$?:$out:$(grep -o '[0-9]* nmissed, [0-9]* lost' $T/err)" \
	"0:499999500000 499999500000:0 nmissed, 0 lost"
check record_1m_events eq "$($F replay $T/s.rec | awk '{ print $4 }' | sort | uniq -c | sed 's/^ *//; s/^999999/ 999999/')" \
	"$counts"
out=$(timeout 300 $F trace "${EV[@]}" -o $T/s.txt -- $T/switch1m 2>$T/err)
check trace_1m_runs eq "$?:$out:$(grep -o '[0-9]* nmissed, [0-9]* lost' $T/err)" \
	"0:499999500000 499999500000:0 nmissed, 0 lost"
check trace_1m_events eq "$(awk '{ print $4 }' $T/s.txt | sort | uniq -c | sed 's/^ *//; s/^999999/ 999999/')" \
	"$counts"
# and with every function recorded (the trampolines' own records)
out=$(timeout 300 $F record -o $T/s.rec -- $T/switch1m 2>$T/err)
check record_all_1m_runs eq "$?:$out:$(grep -o '[0-9]* nmissed, [0-9]* lost' $T/err)" \
	"0:499999500000 499999500000:0 nmissed, 0 lost"
rm -f $T/s.rec $T/s.txt
exit 0
