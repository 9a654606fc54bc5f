#!/bin/bash
# 2,000 threads alive at once, each recording: every event is kept (no
# fixed limit of rings below the threads a program runs), in record and
# in trace.
set -o pipefail
cd "${FHOOK_ROOT:-$(dirname "$0")/../..}" || exit 2
F=$PWD/build/fhook
T=$(mktemp -d)
trap 'rm -rf "$T"' EXIT
CHECK_PREFIX=many_threads
. tests/check.sh

cat > $T/thr.c <<'C'
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
static pthread_barrier_t bar;
__attribute__((noinline)) int work(int x) { __asm__ volatile(""); return x + 1; }
static void *run(void *a)
{
	work((int)(long)a);
	pthread_barrier_wait(&bar);	/* every thread alive, each with its ring */
	work((int)(long)a);
	return NULL;
}
int main(int argc, char **argv)
{
	int n = atoi(argv[1]), i;
	pthread_t *t = calloc(n, sizeof(*t));
	pthread_attr_t at;

	pthread_attr_init(&at);
	pthread_attr_setstacksize(&at, 64 << 10);
	pthread_barrier_init(&bar, NULL, n);
	for (i = 0; i < n; i++)
		if (pthread_create(&t[i], &at, run, (void *)(long)i))
			return printf("thread %d not created\n", i), 1;
	for (i = 0; i < n; i++)
		pthread_join(t[i], NULL);
	printf("%d threads\n", n);
	return 0;
}
C
gcc -O1 $($F cflags) -o $T/thr $T/thr.c -lpthread || exit 2
out=$(timeout 120 $F record -e 'f work' -o $T/r.rec -- $T/thr 2000 2>&1); st=$?
check record_2000 eq "$st:$(grep -c '^2000 threads$' <<< "$out"):$(grep -o '[0-9]* events, [0-9]* nmissed, [0-9]* lost' <<< "$out")" \
	"0:1:4000 events, 0 nmissed, 0 lost"
check replay_2000 eq "$(timeout 120 $F replay $T/r.rec | grep -c 'work__entry')" 4000
check threads_2000 eq "$(timeout 120 $F replay $T/r.rec | awk '{ print $1 }' | sort -u | wc -l)" 2000
out=$(timeout 120 $F trace -e 'f work' -o $T/t.out -- $T/thr 2000 2>&1); st=$?
check trace_2000 eq "$st:$(grep -c 'work__entry' $T/t.out):$(grep -o '[0-9]* lost' <<< "$out")" "0:4000:0 lost"
