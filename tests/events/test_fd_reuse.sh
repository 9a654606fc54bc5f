#!/bin/bash
# Descriptors we trust are ours: a program closes every
# descriptor it did not open (fhook's trace buffer among them), opens files
# read-write that get their numbers, then forks and execs itself and starts
# a thread.  Nobody maps those files as the trace buffer (it used to die of
# SIGBUS): the buffer is reopened from the command, every event is
# recorded, and the files are untouched.  A descriptor that is not the
# buffer and cannot be reopened: that process runs untraced, and says so.
# The tracer's pidfd number taken while no descriptor is to spare: the
# control thread does not take the program's file for the tracer ended.
set -o pipefail
cd "${FHOOK_ROOT:-$(dirname "$0")/../..}" || exit 2
F=$PWD/build/fhook
T=$(mktemp -d)
trap 'rm -rf "$T"' EXIT
chmod 755 $T	# the "drop" case runs it as user nobody
CHECK_PREFIX=fd_reuse
. tests/check.sh

gcc -O1 -g $($F cflags) -o $T/fdreuse_prog tests/events/fdreuse_prog.c -lpthread || exit 2
mkdir $T/files
out=$(timeout 60 $F trace -e 'f work $arg1' -o $T/t -- $T/fdreuse_prog $T/files 2>&1); st=$?
check runs eq "$st:$(grep -v '^fhook: trace' <<< "$out")" "0:child 4
parent 2, child status 0"
check all_events eq "$(grep -o 'work+0x0/0x[0-9a-f]*) x=[0-9]' $T/t | sed 's/.*x=//' | sort | tr '\n' ' ')" "1 1 2 3 "
check summary eq "$(grep '^fhook: trace' <<< "$out")" "fhook: trace: 4 events, 0 nmissed, 0 lost"
check files_untouched eq "$(cat $T/files/f* | sort -u):$(stat -c %s $T/files/f* | sort -u)" "data:5"

# the same under record (its rings are mapped by number too)
rm -f $T/files/*
out=$(timeout 60 $F record -o $T/r.rec -- $T/fdreuse_prog $T/files 2>&1); st=$?
check record_runs eq "$st:$(grep -c -E '^fhook: record: [0-9]+ events, 0 nmissed, 0 lost' <<< "$out")" "0:1"
check record_files_untouched eq "$(cat $T/files/f* | sort -u):$(stat -c %s $T/files/f* | sort -u)" "data:5"

# A daemon that drops its privileges after closing the buffer's
# descriptor: neither it (a new thread) nor the child it execs can reopen
# the buffer from the command (root's).  Both are named in the summary;
# the child by its parent at the exec, since the child itself has no
# buffer to write the summary into.
if [ "$(id -u)" = 0 ]; then
	rm -f $T/files/*
	timeout 60 $F trace -e 'f work $arg1' -o $T/t -- $T/fdreuse_prog $T/files drop \
		>$T/out 2>$T/err; st=$?
	check drop_runs eq "$st:$(cat $T/out)" "0:child 4
parent 2, child status 0"
	check drop_said_by_trace eq "$(grep -c '^fhook: trace: the program closed the trace buffer.s descriptor and fhook.s copy cannot be reopened: process [0-9]* continues untraced$' $T/err)" 1
	check drop_summary eq "$(grep '^fhook: trace' $T/err | grep -v 'continues untraced$' |
		sed -E 's/pid [0-9]+/pid N/')" \
"fhook: trace: 1 events, 0 nmissed, 1 lost
fhook: trace: 2 processes ran untraced, or partly:
fhook: trace:   pid N (fdreuse_prog): started /proc/self/exe: untraced, the program reused the trace buffer's descriptor and fhook's copy cannot be reopened (a process of another user?)
fhook: trace:   pid N (fdreuse_prog): the program closed the trace buffer's descriptor and fhook's copy cannot be reopened"
	check drop_files_untouched eq "$(cat $T/files/f* | sort -u):$(stat -c %s $T/files/f* | sort -u)" "data:5"
else
	echo "SKIP fd_reuse/drop_*: needs root (a program that drops to user nobody)"
fi

# a number that is not the buffer, and no command to reopen it from
exec 7<>$T/files/f0
out=$(FHOOK_EV_SHM=7:1:1 LD_PRELOAD=$PWD/build/libfhook.so $T/fdreuse_prog child 2>&1 7<>$T/files/f0); st=$?
check foreign_fd_untraced eq "$st:$out" "0:fhook: record: FHOOK_EV_SHM=7:1:1 names a descriptor the program reused, and the command's copy cannot be opened: this process is not traced
child 4"
exec 7>&-
check foreign_fd_untouched eq "$(cat $T/files/f0)" "data"

# the tracer's pidfd number taken by a file (always readable) while no
# descriptor is to spare: the tracer is alive, its probes stay
cat > $T/watch_emfile.c <<'C'
#define _GNU_SOURCE
#include <dirent.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <unistd.h>
__attribute__((noinline)) int work(int x)
{
	__asm__ volatile("");
	return x + 1;
}
int main(int argc, char **argv)
{
	struct rlimit rl = { 64, 64 };
	char link[256], path[300];
	int pidfd = -1, f = open(argv[1], O_RDONLY);
	struct dirent *e;
	DIR *d;

	work(1);
	/* every pidfd (the watch's among them) becomes the file */
	d = opendir("/proc/self/fd");
	while (f >= 0 && d && (e = readdir(d))) {
		ssize_t n;

		snprintf(path, sizeof(path), "/proc/self/fd/%s", e->d_name);
		n = readlink(path, link, sizeof(link) - 1);
		if (n > 0 && (link[n] = 0, strstr(link, "pidfd")) &&
		    dup2(f, (pidfd = atoi(e->d_name))) < 0)
			return 3;
	}
	closedir(d);
	if (pidfd < 0)
		return 3;
	close(f);
	setrlimit(RLIMIT_NOFILE, &rl);
	while (dup(pidfd) >= 0)
		;
	usleep(1000000);	/* five of the control thread's looks */
	work(2);
	return 0;
}
C
gcc -O1 $($F cflags) -o $T/watch_emfile $T/watch_emfile.c || exit 2
out=$(timeout 60 $F trace -e 'f work $arg1' -o $T/t -- $T/watch_emfile $T/files/f0 2>&1); st=$?
check watch_emfile eq "$st:$out:$(grep -o 'arg1=0x[0-9]' $T/t | tr '\n' ' ')" \
	"0:fhook: trace: 2 events, 0 nmissed, 0 lost:arg1=0x1 arg1=0x2 "
exit 0
