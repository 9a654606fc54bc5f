/*
 * att_park PID TID LO HI SIGNAL: single-steps thread TID of process PID
 * until its pc is strictly inside [LO, HI) (between two nops of a pad),
 * then detaches with SIGNAL delivered there: SIGSTOP leaves the whole
 * process stopped with that thread's pc in the pad, a caught signal runs
 * its handler with the pad in the signal frame.
 *
 * An interrupt lands between two nops of a pad only by chance, and how
 * often depends on the CPU (an AMD EPYC takes almost all of them at the
 * same two instructions of a loop): the tests that need a thread there put
 * it there.  Prints the pc's offset from LO; exit 1 if it never got there.
 */
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>

#include "../thread_pc.h"

int main(int argc, char **argv)
{
	unsigned long lo, hi, pc = 0;
	int status, sig, step;
	pid_t tid;

	if (argc != 6) {
		fprintf(stderr, "usage: att_park PID TID LO HI SIGNAL\n");
		return 2;
	}
	tid = atoi(argv[2]);
	lo = strtoul(argv[3], NULL, 0);
	hi = strtoul(argv[4], NULL, 0);
	sig = atoi(argv[5]);
	if (ptrace(PTRACE_SEIZE, tid, NULL, NULL) || ptrace(PTRACE_INTERRUPT, tid, NULL, NULL) ||
	    waitpid(tid, &status, __WALL) != tid) {
		fprintf(stderr, "att_park: thread %d: %s\n", tid, strerror(errno));
		return 1;
	}
	/*
	 * Stepped at least once: the signal given to PTRACE_DETACH is
	 * delivered only from a signal-delivery stop (a step's SIGTRAP), not
	 * from the stop PTRACE_INTERRUPT made.
	 */
	for (step = 0; step < 100000; step++) {
		if (ptrace(PTRACE_SINGLESTEP, tid, NULL, NULL) ||
		    waitpid(tid, &status, __WALL) != tid || !WIFSTOPPED(status))
			break;
		pc = test_thread_pc(tid);
		if (pc > lo && pc < hi) {
			ptrace(PTRACE_DETACH, tid, NULL, (void *)(long)sig);
			printf("%lu\n", pc - lo);
			return 0;
		}
	}
	fprintf(stderr, "att_park: thread %d never inside [%#lx, %#lx) (last pc %#lx)\n",
		tid, lo, hi, pc);
	ptrace(PTRACE_DETACH, tid, NULL, NULL);
	return 1;
}
