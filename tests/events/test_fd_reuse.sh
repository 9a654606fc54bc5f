#!/bin/bash
# Descriptors we trust are ours: a program closes every
# descriptor it did not open (fhook's trace buffer among them), opens files
# read-write that get their numbers, then forks and execs itself and starts
# a thread.  Nobody maps those files as the trace buffer (it used to die of
# SIGBUS): the buffer is reopened from the command, every event is
# recorded, and the files are untouched.  A descriptor that is not the
# buffer and cannot be reopened: that process runs untraced, and says so.
set -o pipefail
cd "${FHOOK_ROOT:-$(dirname "$0")/../..}" || exit 2
F=$PWD/build/fhook
T=$(mktemp -d)
trap 'rm -rf "$T"' EXIT
CHECK_PREFIX=fd_reuse
. tests/check.sh

gcc -O1 -g $($F cflags) -o $T/fdreuse_prog tests/events/fdreuse_prog.c -lpthread || exit 2
mkdir $T/files
out=$(timeout 60 $F trace -e 'f work $arg1' -o $T/t -- $T/fdreuse_prog $T/files 2>&1); st=$?
check runs eq "$st:$(grep -v '^fhook: trace' <<< "$out")" "0:child 4
parent 2, child status 0"
check all_events eq "$(grep -o 'work+0x0/0x[0-9a-f]*) arg1=[0-9]' $T/t | sed 's/.*arg1=//' | sort | tr '\n' ' ')" "1 1 2 3 "
check summary eq "$(grep '^fhook: trace' <<< "$out")" "fhook: trace: 4 events, 0 nmissed, 0 lost"
check files_untouched eq "$(cat $T/files/f* | sort -u):$(stat -c %s $T/files/f* | sort -u)" "data:5"

# the same under record (its rings are mapped by number too)
rm -f $T/files/*
out=$(timeout 60 $F record -o $T/r.rec -- $T/fdreuse_prog $T/files 2>&1); st=$?
check record_runs eq "$st:$(grep -c -E '^fhook: record: [0-9]+ events, 0 nmissed, 0 lost' <<< "$out")" "0:1"
check record_files_untouched eq "$(cat $T/files/f* | sort -u):$(stat -c %s $T/files/f* | sort -u)" "data:5"

# a number that is not the buffer, and no command to reopen it from
exec 7<>$T/files/f0
out=$(FHOOK_EV_SHM=7:1:1 LD_PRELOAD=$PWD/build/libfhook.so $T/fdreuse_prog child 2>&1 7<>$T/files/f0); st=$?
check foreign_fd_untraced eq "$st:$out" "0:fhook: record: FHOOK_EV_SHM=7:1:1 names a descriptor the program reused, and the command's copy cannot be opened: this process is not traced
child 4"
exec 7>&-
check foreign_fd_untouched eq "$(cat $T/files/f0)" "data"
exit 0
