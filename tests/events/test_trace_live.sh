#!/bin/bash
# `fhook trace` shows the events as they come, not when its output buffer
# fills or the program ends: a program blocked after one call has that call
# in the trace already.  In the graph, an entry whose thread stays inside
# the call while other threads' lines wait behind it (100 ms of their time)
# is written as an entry, its exit later; the lines stay in time order.
set -o pipefail
cd "${FHOOK_ROOT:-$(dirname "$0")/../..}" || exit 2
F=$PWD/build/fhook
T=$(mktemp -d)
trap 'exec 7>&- 2>/dev/null; rm -rf "$T"' EXIT
CHECK_PREFIX=trace_live
. tests/check.sh
. tests/events/graph_threads.sh

cat > $T/live.c <<'C'
#include <pthread.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>
__attribute__((noinline)) int tick(int x) { __asm__ volatile(""); return x + 1; }
__attribute__((noinline)) int late(int x) { __asm__ volatile(""); return x + 2; }
static void *run(void *arg)
{
	int i, s = 0;

	for (i = 0; i < 5; i++)
		s += late(i);
	usleep(150000);
	return (void *)(long)(s + late(5));
}
/* the thread is made inside: its calls come after slow()'s entry */
__attribute__((noinline)) int slow(int x)
{
	pthread_t t;
	char c;

	pthread_create(&t, NULL, run, NULL);
	pthread_join(t, NULL);
	/* blocked in the call until the test has seen the other thread's lines */
	if (read(0, &c, 1) < 0)
		return -1;
	return x + 1;
}
/* live tick: one call, then wait for a byte on stdin; live slow: as above */
int main(int argc, char **argv)
{
	char c;

	if (!strcmp(argv[1], "tick")) {
		tick(1);
		return read(0, &c, 1) == 1 ? 0 : 1;
	}
	printf("%d\n", slow(1));
	return 0;
}
C
gcc -O1 -pthread $($F cflags) -o $T/live $T/live.c || exit 2

# wait_for FILE PATTERN COUNT: until FILE has COUNT lines matching PATTERN (10 s at most)
wait_for() {
	local i n
	for i in $(seq 200); do
		n=$(grep -c -- "$2" "$1" 2>/dev/null)
		[ "${n:-0}" -ge "$3" ] && return 0
		sleep 0.05
	done
	return 1
}

# ---- text: the call is there while the program waits
mkfifo $T/in1
timeout 60 $F trace -e 'f tick' -o $T/t.out -- $T/live tick < $T/in1 2> $T/err &
pid=$!
exec 7> $T/in1
wait_for $T/t.out 'tick__entry: (tick+0x0/' 1
check text_while_running eq "$?:$(kill -0 $pid 2>/dev/null && echo running)" "0:running"
echo x >&7
exec 7>&-
wait $pid
check text_status eq "$?:$(grep -c 'tick__entry' $T/t.out)" "0:1"

# ---- graph: the other thread's lines while slow() still runs, slow() as an entry
mkfifo $T/in2
timeout 60 $F trace --format graph -e 'f main' -e 'f main%return' -e 'f slow' \
	-e 'f slow%return' -e 'f run' -e 'f run%return' -e 'f late' -e 'f late%return' \
	-o $T/g.out -- $T/live slow < $T/in2 > $T/g.prog 2> $T/err &
pid=$!
exec 7> $T/in2
wait_for $T/g.out '} /\* run \*/' 1
check graph_while_running eq "$?:$(kill -0 $pid 2>/dev/null && echo running)" "0:running"
check graph_before_return eq "$(graph_lines $T/g.out | sed -n 1,3p)" \
"[T1] | main() {
[T1] |   slow() {
[T2] | run() {"
echo x >&7
exec 7>&-
wait $pid
check graph_status eq "$?:$(cat $T/g.prog)" "0:2"
check graph_times_ordered eq "$(awk '{ print $1 }' $T/g.out | sort -c -g 2>&1)" ""
check graph_lines eq "$(graph_lines $T/g.out | uniq -c | tr -s ' ' | tr '\n' ';')" \
" 1 [T1] | main() {; 1 [T1] | slow() {; 1 [T2] | run() {; 6 [T2] | late();; 1 [T2] | } /* run */; 1 [T1] | } /* slow */; 1 [T1] | } /* main */;"
