// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * Before anything of the process is touched: it exists, is not traced
 * already and is a process of the command's architecture; and when the
 * kernel refuses the seize, which of its rules did (the ids, the dumpable
 * flag, yama).
 */
#define _GNU_SOURCE
#include <elf.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "att.h"

pid_t cli_attach_parse_pid(const char *cmd, const char *s)
{
	char *end;
	long v;

	errno = 0;
	v = strtol(s, &end, 10);
	if (errno || end == s || *end || v <= 0 || v > INT_MAX) {
		fprintf(stderr, "fhook: %s: -p needs a process id, got '%s'\n", cmd, s);
		return -1;
	}
	return (pid_t)v;
}

/* One "Name:\tvalues" line of /proc/PID/status, or NULL. */
char *att_status_field(pid_t pid, const char *name, char *buf, size_t size)
{
	char path[64], line[512];
	size_t n = strlen(name);
	FILE *f;

	snprintf(path, sizeof(path), "/proc/%d/status", pid);
	f = fopen(path, "re");
	if (!f)
		return NULL;
	while (fgets(line, sizeof(line), f)) {
		if (!strncmp(line, name, n) && line[n] == ':') {
			snprintf(buf, size, "%s", line + n + 1 + strspn(line + n + 1, " \t"));
			buf[strcspn(buf, "\n")] = 0;
			fclose(f);
			return buf;
		}
	}
	fclose(f);
	return NULL;
}

bool cli_attach_alive(pid_t pid)
{
	char st[64];

	return att_status_field(pid, "State", st, sizeof(st)) && st[0] != 'Z' && st[0] != 'X';
}

static bool have_cap_sys_ptrace(void)
{
	char buf[64];
	unsigned long long caps;

	if (!att_status_field(getpid(), "CapEff", buf, sizeof(buf)))
		return false;
	caps = strtoull(buf, NULL, 16);
	return caps & (1ULL << 19);
}

static int yama_scope(void)
{
	FILE *f = fopen("/proc/sys/kernel/yama/ptrace_scope", "re");
	int v = 0;

	if (!f)
		return 0;
	if (fscanf(f, "%d", &v) != 1)
		v = 0;
	fclose(f);
	return v;
}

/* Is @pid a descendant of this process (what yama's scope 1 allows)? */
static bool is_descendant(pid_t pid)
{
	char buf[64];
	int depth;

	for (depth = 0; pid > 1 && depth < 4096; depth++) {
		if (!att_status_field(pid, "PPid", buf, sizeof(buf)))
			return false;
		pid = atoi(buf);
		if (pid == getpid())
			return true;
	}
	return false;
}

/*
 * Before anything is touched: the process exists, is not traced already,
 * and is a process of the command's architecture (ATT_ARCH_EM).
 */
int att_check_target(const char *cmd, pid_t pid)
{
	char buf[128], path[64];
	unsigned char eh[EI_NIDENT + 4];
	int fd, tracer;

	if (!att_status_field(pid, "State", buf, sizeof(buf))) {
		fprintf(stderr, "fhook: %s: no process %d\n", cmd, pid);
		return -ESRCH;
	}
	if (buf[0] == 'Z' || buf[0] == 'X') {
		fprintf(stderr, "fhook: %s: process %d has exited (a zombie)\n", cmd, pid);
		return -ESRCH;
	}
	if (pid == getpid()) {
		fprintf(stderr, "fhook: %s: process %d is this fhook command\n", cmd, pid);
		return -EINVAL;
	}
	if (att_status_field(pid, "TracerPid", buf, sizeof(buf)) && (tracer = atoi(buf)) > 0) {
		char comm[64] = "?";
		FILE *f;

		snprintf(path, sizeof(path), "/proc/%d/comm", tracer);
		f = fopen(path, "re");
		if (f) {
			if (fgets(comm, sizeof(comm), f))
				comm[strcspn(comm, "\n")] = 0;
			fclose(f);
		}
		fprintf(stderr, "fhook: %s: process %d is already traced by process %d (%s): "
			"a process has one tracer; detach the debugger first\n", cmd, pid, tracer,
			comm);
		return -EBUSY;
	}
	/* a call returns through a fault, which would reset an ignored SIGSEGV */
	if (att_status_field(pid, "SigIgn", buf, sizeof(buf)) &&
	    (strtoull(buf, NULL, 16) & 1ULL << (SIGSEGV - 1))) {
		fprintf(stderr, "fhook: %s: process %d ignores SIGSEGV: fhook cannot call into it "
			"without changing that\n", cmd, pid);
		return -EINVAL;
	}
	snprintf(path, sizeof(path), "/proc/%d/exe", pid);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd >= 0) {
		if (read(fd, eh, sizeof(eh)) == (ssize_t)sizeof(eh) &&
		    !memcmp(eh, ELFMAG, SELFMAG) &&
		    (eh[EI_CLASS] != ELFCLASS64 || (eh[18] | eh[19] << 8) != ATT_ARCH_EM)) {
			fprintf(stderr, "fhook: %s: process %d is a %s process: fhook attaches to "
				ATT_ARCH_NAME " processes only\n", cmd, pid,
				eh[EI_CLASS] != ELFCLASS64 ? "32-bit" : "foreign-architecture");
			close(fd);
			return -ENOEXEC;
		}
		close(fd);
	}
	return 0;
}

/* PTRACE_SEIZE was refused: say which of the kernel's rules did it. */
void att_explain_eperm(const char *cmd, pid_t pid)
{
	char uid[128], gid[128], path[64];
	unsigned int ru, eu, su, rg, eg, sg;
	bool cap = have_cap_sys_ptrace();
	int scope = yama_scope();
	struct stat st;

	if (att_status_field(pid, "Uid", uid, sizeof(uid)) &&
	    att_status_field(pid, "Gid", gid, sizeof(gid)) &&
	    sscanf(uid, "%u %u %u", &ru, &eu, &su) == 3 &&
	    sscanf(gid, "%u %u %u", &rg, &eg, &sg) == 3 && !cap) {
		if (ru != getuid() || eu != getuid() || su != getuid()) {
			fprintf(stderr, "fhook: %s: not permitted to attach to process %d: it runs "
				"as user %u and you are user %u (the kernel's ptrace rule: the same "
				"user, or CAP_SYS_PTRACE)\n", cmd, pid, eu, getuid());
			return;
		}
		if (rg != getgid() || eg != getgid() || sg != getgid()) {
			fprintf(stderr, "fhook: %s: not permitted to attach to process %d: it runs "
				"with group %u and yours is %u (a set-group-id program; the kernel's "
				"ptrace rule: the same ids, or CAP_SYS_PTRACE)\n", cmd, pid, eg,
				getgid());
			return;
		}
		snprintf(path, sizeof(path), "/proc/%d", pid);
		if (!stat(path, &st) && st.st_uid != eu) {
			fprintf(stderr, "fhook: %s: not permitted to attach to process %d: it is not "
				"dumpable (it was set-id, or called prctl(PR_SET_DUMPABLE, 0)); only "
				"CAP_SYS_PTRACE may attach\n", cmd, pid);
			return;
		}
	}
	if (scope == 1 && !cap && !is_descendant(pid)) {
		fprintf(stderr, "fhook: %s: not permitted to attach to process %d: "
			"kernel.yama.ptrace_scope is 1, so only its ancestors (or a process it "
			"named with prctl(PR_SET_PTRACER)) and CAP_SYS_PTRACE may attach\n", cmd, pid);
		return;
	}
	if (scope == 2 && !cap) {
		fprintf(stderr, "fhook: %s: not permitted to attach to process %d: "
			"kernel.yama.ptrace_scope is 2, so only CAP_SYS_PTRACE may attach\n", cmd, pid);
		return;
	}
	if (scope == 3) {
		fprintf(stderr, "fhook: %s: not permitted to attach to process %d: "
			"kernel.yama.ptrace_scope is 3: no process may be attached to\n", cmd, pid);
		return;
	}
	fprintf(stderr, "fhook: %s: not permitted to attach to process %d (the ids, the "
		"dumpable flag and yama allow it: a security module refused, or the process "
		"is traced already)\n", cmd, pid);
}
