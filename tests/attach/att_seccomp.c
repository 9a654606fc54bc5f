// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * att_seccomp PROG [ARGS...]: run PROG under a seccomp filter that allows
 * every system call, as a sandboxed service runs under one that allows
 * only some (test_ctl.sh: such a process gets no control thread).
 */
#include <linux/filter.h>
#include <linux/seccomp.h>
#include <stdio.h>
#include <sys/prctl.h>
#include <unistd.h>

int main(int argc, char **argv)
{
	struct sock_filter allow[] = { BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW) };
	struct sock_fprog prog = { .len = 1, .filter = allow };

	if (argc < 2)
		return 2;
	if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) ||
	    prctl(PR_SET_SECCOMP, SECCOMP_MODE_FILTER, &prog)) {
		perror("att_seccomp: seccomp");
		return 1;
	}
	execv(argv[1], argv + 1);
	perror("att_seccomp: exec");
	return 127;
}
