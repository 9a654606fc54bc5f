#!/bin/bash
# `fhook replay --format graph` of several threads writes its lines in time
# order, as uftrace's replay does: a leaf call of one thread is written at
# its entry's time, before the lines other threads wrote meanwhile, not at
# its own thread's next event; past a full output buffer of those, the
# leaf is written as an entry and an exit.
set -o pipefail
cd "${FHOOK_ROOT:-$(dirname "$0")/../..}" || exit 2
F=$PWD/build/fhook
T=$(mktemp -d)
trap 'rm -rf "$T"' EXIT
CHECK_PREFIX=graph_order
. tests/check.sh
. tests/events/graph_threads.sh

# slow() on the main thread, then a thread that calls late() five times
gcc -O1 -pthread $($F cflags) -o $T/late tests/events/late_thread.c || exit 2
out=$(timeout 60 $F record -o $T/l.rec -- $T/late 2> $T/err)
check status eq "$?: $out" "0: 20"
timeout 60 $F replay --format graph $T/l.rec > $T/graph 2> $T/err
check replay_status eq "$?: $(cat $T/err)" "0: "
# the times that begin the lines never go back
check times_ordered eq "$(awk '{ print $1 }' $T/graph | sort -c -g 2>&1)" ""
# the lines, without times and with the threads numbered as they appear
check lines eq "$(graph_lines $T/graph)" \
"[T1] | main() {
[T1] |   slow();
[T2] | run() {
[T2] |   late();
[T2] |   late();
[T2] |   late();
[T2] |   late();
[T2] |   late();
[T2] | } /* run */
[T1] | } /* main */"

# ---- a leaf of one thread while another thread calls: the leaf's line at
# its entry's time, before the other thread's calls made meanwhile; past
# a full output buffer of those, the leaf's entry is written as "slow() {"
# and its end as "} /* slow */", still in time order
cat > $T/overlap.c <<'C'
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
static volatile int started, go, done;
static long n;
__attribute__((noinline)) int late(int x) { __asm__ volatile(""); return x + 2; }
/* a leaf: while it runs, the other thread makes its calls */
__attribute__((noinline)) int slow(int x)
{
	go = 1;
	while (!done)
		;
	return x + 1;
}
static void *run(void *arg)
{
	long s = 0, i;

	started = 1;
	while (!go)
		;
	for (i = 0; i < n; i++)
		s += late(i);
	done = 1;
	return (void *)s;
}
int main(int argc, char **argv)
{
	pthread_t t;

	n = atol(argv[1]);
	pthread_create(&t, NULL, run, NULL);
	while (!started)
		;
	slow(1);
	pthread_join(t, NULL);
	return 0;
}
C
gcc -O1 -pthread $($F cflags) -o $T/overlap $T/overlap.c || exit 2
timeout 60 $F record -o $T/o.rec -- $T/overlap 3 2> $T/err
check overlap_status eq "$?" 0
timeout 60 $F replay --format graph $T/o.rec > $T/graph 2> $T/err
check overlap_times_ordered eq "$(awk '{ print $1 }' $T/graph | sort -c -g 2>&1)" ""
check overlap_lines eq "$(graph_lines $T/graph)" \
"[T1] | main() {
[T2] | run() {
[T1] |   slow();
[T2] |   late();
[T2] |   late();
[T2] |   late();
[T2] | } /* run */
[T1] | } /* main */"

timeout 120 $F record -o $T/b.rec -- $T/overlap 100000 2> $T/err
check big_status eq "$?" 0
timeout 120 $F replay --format graph $T/b.rec > $T/graph 2> $T/err
check big_replay eq "$?:$(wc -l < $T/graph)" "0:100006"
check big_times_ordered eq "$(awk '{ print $1 }' $T/graph | sort -c -g 2>&1)" ""
check big_lines eq "$(graph_lines $T/graph | uniq -c | tr -s ' ' | tr '\n' ';')" \
" 1 [T1] | main() {; 1 [T2] | run() {; 1 [T1] | slow() {; 100000 [T2] | late();; 1 [T2] | } /* run */; 1 [T1] | } /* slow */; 1 [T1] | } /* main */;"
