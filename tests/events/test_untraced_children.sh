#!/bin/bash
# Children that run untraced are named in the summary: a traced
# program starts, with an empty environment (execve, posix_spawnp) or
# its own (execv, execvp, execl, execlp), a
# statically linked program and a set-user-ID program of another user;
# neither can load libfhook, and the summary at exit says so, with the
# reason, instead of nothing.  A dynamic child is traced and not named.
set -o pipefail
cd "${FHOOK_ROOT:-$(dirname "$0")/../..}" || exit 2
F=$PWD/build/fhook
T=$(mktemp -d)
trap 'rm -rf "$T"' EXIT
chmod 755 $T
CHECK_PREFIX=untraced_children
. tests/check.sh

cat > $T/parent.c <<'C'
#include <spawn.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>
#include <sys/wait.h>
__attribute__((noinline)) int work(int x) { __asm__ volatile(""); return x + 1; }
int main(int argc, char **argv)
{
	char *empty[] = { NULL };
	int i, st;

	work(0);
	for (i = 1; i < argc; i++) {
		char *colon = strchr(argv[i], ':');
		char *args[] = { colon ? colon + 1 : argv[i], NULL };
		pid_t pid;

		if (colon) {	/* v: vp: l: lp: the calls that pass environ on */
			if (!(pid = fork())) {
				if (!strncmp(argv[i], "vp:", 3))
					execvp(args[0], args);
				else if (!strncmp(argv[i], "v:", 2))
					execv(args[0], args);
				else if (!strncmp(argv[i], "lp:", 3))
					execlp(args[0], args[0], (char *)NULL);
				else
					execl(args[0], args[0], (char *)NULL);
				_exit(127);
			}
		} else if (!strchr(argv[i], '/')) {	/* a bare name: posix_spawnp, PATH from ours */
			if (posix_spawnp(&pid, argv[i], NULL, NULL, args, empty))
				return 3;
		} else if (!(pid = fork())) {
			execve(argv[i], args, empty);
			_exit(127);
		}
		waitpid(pid, &st, 0);
	}
	return 0;
}
C
cat > $T/child.c <<'C'
__attribute__((noinline)) int work(int x) { __asm__ volatile(""); return x + 1; }
int main(void) { return work(1) - 2; }
C
gcc -O1 $($F cflags) -o $T/parent $T/parent.c || exit 2
gcc -O1 $($F cflags) -o $T/dynamic $T/child.c || exit 2
if ! gcc -O1 -static $($F cflags) -o $T/static $T/child.c 2>/dev/null; then
	echo "SKIP untraced_children: no static libc"
	exit 0
fi
out=$(PATH=$T:$PATH timeout 60 $F trace -e 'f work $arg1' -o $T/t -- $T/parent $T/dynamic $T/static static 2>&1); st=$?
check static_named eq "$st:$(grep -A2 'ran untraced' <<< "$out" | sed 's/pid [0-9]*/pid N/')" "0:fhook: trace: 2 processes ran untraced, or partly:
fhook: trace:   pid N (parent): started $T/static: untraced, statically linked: no loader to preload libfhook into
fhook: trace:   pid N (parent): started $T/static: untraced, statically linked: no loader to preload libfhook into"
check dynamic_traced eq "$(grep -o 'arg1=0x[0-9]' $T/t | tr '\n' ' ')" "arg1=0x0 arg1=0x1 "
# execv, execvp, execl, execlp: glibc's call its internal execve, not the interposed one
out=$(PATH=$T:$PATH timeout 60 $F trace -e 'f work $arg1' -o $T/t -- $T/parent v:$T/static \
	vp:static l:$T/static lp:static v:$T/dynamic 2>&1); st=$?
check exec_family_named eq "$st:$(grep -A4 'ran untraced' <<< "$out" | sed 's/pid [0-9]*/pid N/')" "0:fhook: trace: 4 processes ran untraced, or partly:
fhook: trace:   pid N (parent): started $T/static: untraced, statically linked: no loader to preload libfhook into
fhook: trace:   pid N (parent): started $T/static: untraced, statically linked: no loader to preload libfhook into
fhook: trace:   pid N (parent): started $T/static: untraced, statically linked: no loader to preload libfhook into
fhook: trace:   pid N (parent): started $T/static: untraced, statically linked: no loader to preload libfhook into"
check exec_family_dynamic_traced eq "$(grep -o 'arg1=0x[0-9]' $T/t | tr '\n' ' ')" "arg1=0x0 arg1=0x1 "

if [ "$(id -u)" = 0 ]; then
	cp $T/dynamic $T/setid && chown 4242:4242 $T/setid && chmod 4755 $T/setid
	out=$(timeout 60 $F trace -e 'f work $arg1' -o $T/t -- $T/parent $T/setid 2>&1); st=$?
	check setid_named eq "$st:$(grep -A1 'ran untraced' <<< "$out" | sed 's/pid [0-9]*/pid N/')" "0:fhook: trace: 1 process ran untraced, or partly:
fhook: trace:   pid N (parent): started $T/setid: untraced, set-id: the loader ignores LD_PRELOAD there"
else
	echo "SKIP untraced_children/setid_named: needs root to give a file away"
fi
# --no-follow: children are untraced by request, nobody is named
out=$(timeout 60 $F trace --no-follow -e 'f work $arg1' -o $T/t -- $T/parent $T/static 2>&1); st=$?
check no_follow_quiet eq "$st:$(grep -c 'ran untraced' <<< "$out")" "0:0"
exit 0
