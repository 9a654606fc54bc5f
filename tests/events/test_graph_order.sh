#!/bin/bash
# `fhook replay --format graph` of several threads writes its lines in time
# order: a leaf call of one thread (held until nothing more of it can
# follow) is written before a later thread's lines, not at its own thread's
# next event.  The main thread calls slow() (60 ms), sleeps, then starts a
# thread that calls late() five times.
set -o pipefail
cd "${FHOOK_ROOT:-$(dirname "$0")/../..}" || exit 2
F=$PWD/build/fhook
T=$(mktemp -d)
trap 'rm -rf "$T"' EXIT
CHECK_PREFIX=graph_order
. tests/check.sh

cat > $T/late.c <<'C'
#include <pthread.h>
#include <stdio.h>
#include <unistd.h>
__attribute__((noinline)) int late(int x) { __asm__ volatile(""); return x + 2; }
__attribute__((noinline)) int slow(int x) { usleep(60000); return x + 1; }
static void *run(void *arg)
{
	long s = 0;
	int i;

	for (i = 0; i < 5; i++)
		s += late(i);
	return (void *)s;
}
int main(void)
{
	pthread_t t;
	void *s;

	slow(1);
	usleep(100000);
	pthread_create(&t, NULL, run, NULL);
	pthread_join(t, &s);
	printf("%ld\n", (long)s);
	return 0;
}
C
gcc -O1 -pthread $($F cflags) -o $T/late $T/late.c || exit 2
out=$(timeout 60 $F record -o $T/l.rec -- $T/late 2> $T/err)
check status eq "$?: $out" "0: 20"
timeout 60 $F replay --format graph $T/l.rec > $T/graph 2> $T/err
check replay_status eq "$?: $(cat $T/err)" "0: "
# the times that begin the lines never go back
check times_ordered eq "$(awk '{ print $1 }' $T/graph | sort -c -g 2>&1)" ""
# the lines, without times and with the threads numbered as they appear
check lines eq "$(sed -E 's/^[0-9.]+ +([0-9.]+ [mun]?s +)?//' $T/graph |
	awk '{ match($0, /\[ *[0-9]+\]/); id = substr($0, RSTART, RLENGTH)
	       if (!(id in n)) n[id] = "[T" ++k "]"; sub(/\[ *[0-9]+\]/, n[id]); print }')" \
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
