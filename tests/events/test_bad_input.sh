#!/bin/bash
# Bad inputs and hostile environments that were fixed, each pinned by a
# check here:
#  - many and long -e definitions: none dropped (no fixed-size buffer);
#  - the -o file of `fhook trace` is not inherited by the traced program
#    (`fhook record`'s is checked in test_record.sh);
#  - a traced process maps only the rings its threads claim (its address
#    space grows by one ring per thread, not by the whole buffer);
#  - a vfork child's events are recorded (it runs on its parent's memory
#    and stack, so under its parent's thread), not silently lost.
set -o pipefail
cd "${FHOOK_ROOT:-$(dirname "$0")/../..}" || exit 2
F=$PWD/build/fhook
T=$(mktemp -d)
trap 'rm -rf "$T"' EXIT
CHECK_PREFIX=bad_input
. tests/check.sh

cat > $T/p.c <<'C'
#define _GNU_SOURCE
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/wait.h>
__attribute__((noinline)) int work(int x) { __asm__ volatile(""); return x + 1; }
static long vm_kb(void)
{
	char buf[4096], *p;
	FILE *f = fopen("/proc/self/status", "r");
	size_t n = f ? fread(buf, 1, sizeof(buf) - 1, f) : 0;

	if (f)
		fclose(f);
	buf[n] = 0;
	p = strstr(buf, "VmSize:");
	return p ? atol(p + 7) : -1;
}
int main(int argc, char **argv)
{
	int st;
	pid_t pid;

	if (argc > 1 && !strcmp(argv[1], "fds")) {
		char path[64], target[4096];
		int fd;

		for (fd = 3; fd < 64; fd++) {
			ssize_t n;

			snprintf(path, sizeof(path), "/proc/self/fd/%d", fd);
			n = readlink(path, target, sizeof(target) - 1);
			if (n > 0) {
				target[n] = 0;
				printf("fd %d %s\n", fd, target);
			}
		}
		return work(0) - 1;
	}
	if (argc > 1 && !strcmp(argv[1], "vm")) {
		long before = vm_kb();

		work(1);	/* this thread's first event: its ring is mapped */
		printf("%ld\n", vm_kb() - before);
		return 0;
	}
	work(1);
	pid = vfork();
	if (!pid) {
		work(5);
		_exit(0);
	}
	waitpid(pid, &st, 0);
	work(2);
	return 0;
}
C
gcc -O1 $($F cflags) -o $T/p $T/p.c || exit 2

# 3000 definitions, each with three arguments: every one is recorded
args=()
for i in $(seq 1 3000); do
	args+=(-e "f:g/e$i work a$i=\$arg1 b=\$arg1:x64 c=\$arg1:s32")
done
out=$(timeout 120 $F trace "${args[@]}" -o $T/many -- $T/p fds 2>&1 >/dev/null); st=$?
check many_definitions eq "$st:$out:$(wc -l < $T/many):$(grep -c ' e3000: ' $T/many)" \
	"0:fhook: trace: 3000 events, 0 nmissed, 0 lost:3000:1"
# one definition of 120 arguments
a=""
for i in $(seq 1 120); do a+=" v$i=\$arg1"; done
out=$(timeout 60 $F trace -e "f work$a" -o $T/long -- $T/p fds 2>&1 >/dev/null); st=$?
check long_definition eq "$st:$(grep -c ' v120=0' $T/long)" "0:1"

# the trace's -o file is not among the program's descriptors
timeout 60 $F trace -e 'f work' -o $T/out.txt -- $T/p fds > $T/fds 2>/dev/null
check trace_output_not_inherited eq "$(grep -c 'out.txt' $T/fds)" 0

# one thread's events cost one ring of address space (2 MiB and a page), not the buffer (2 GiB)
out=$(timeout 60 $F trace -e 'f work' -o /dev/null -- $T/p vm 2>/dev/null); st=$?
check maps_claimed_ring_only test "$st" = 0 -a "$out" -ge 2052 -a "$out" -le 8192

# a vfork child's event: recorded, under its parent's thread
out=$(timeout 60 $F trace -e 'f work $arg1' -o $T/vf -- $T/p 2>&1); st=$?
check vfork_child_recorded eq "$st:$out:$(grep -o 'arg1=0x[0-9]' $T/vf | tr '\n' ' ')" \
	"0:fhook: trace: 3 events, 0 nmissed, 0 lost:arg1=0x1 arg1=0x5 arg1=0x2 "
exit 0
