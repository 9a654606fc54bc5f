// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * Running a program with libfhook preloaded: what "fhook <cmd> -- PROG"
 * does for every command that acts inside a program.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <gelf.h>
#include <grp.h>
#include <libelf.h>
#include <limits.h>
#include <pwd.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <stdint.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <sys/wait.h>
#include <sys/xattr.h>
#include <unistd.h>

#include "arch_insn.h"
#include "cli.h"

/* libfhook.so next to the command (build tree), else in ../lib (installed). */
int cli_libfhook_path(char *buf, size_t size)
{
	char exe[PATH_MAX], *slash;
	ssize_t n = readlink("/proc/self/exe", exe, sizeof(exe) - 1);

	if (n <= 0)
		return -errno;
	exe[n] = 0;
	slash = strrchr(exe, '/');
	if (!slash)
		return -ENOENT;
	*slash = 0;
	snprintf(buf, size, "%s/libfhook.so", exe);
	if (!access(buf, R_OK))
		return 0;
	snprintf(buf, size, "%s/../lib/libfhook.so", exe);
	if (!access(buf, R_OK))
		return 0;
	return -ENOENT;
}

char *cli_which(const char *name)
{
	const char *path = getenv("PATH");
	char buf[PATH_MAX];

	if (strchr(name, '/'))
		return access(name, X_OK) ? NULL : strdup(name);
	if (!path)
		path = "/usr/local/bin:/usr/bin:/bin";
	while (*path) {
		size_t n = strcspn(path, ":");

		snprintf(buf, sizeof(buf), "%.*s/%s", (int)n, n ? path : ".", name);
		if (!access(buf, X_OK))
			return strdup(buf);
		path += n + (path[n] == ':');
	}
	return NULL;
}

char *cli_script_interpreter(const char *file)
{
	char *cur = strdup(file), *next;
	int depth;

	/* the kernel's own limit of interpreters behind interpreters (binfmt_script) */
	for (depth = 0; cur && depth < 5; depth++) {
		char line[256], *p, *end;
		ssize_t n;
		int fd = open(cur, O_RDONLY | O_CLOEXEC);

		/* an interpreter that cannot be read: the caller says so */
		if (fd < 0)
			return depth ? cur : (free(cur), NULL);
		n = read(fd, line, sizeof(line) - 1);
		close(fd);
		if (n < 2 || line[0] != '#' || line[1] != '!')
			return depth ? cur : (free(cur), NULL);
		line[n] = 0;
		p = line + 2 + strspn(line + 2, " \t");
		end = p + strcspn(p, " \t\n");
		*end = 0;
		if (!*p)
			break;
		next = strdup(p);
		free(cur);
		cur = next;
	}
	free(cur);
	return NULL;
}

/*
 * Would @file run with AT_SECURE (set-user-ID or set-group-ID to someone
 * else, or file capabilities)?  The kernel then marks the process
 * undumpable and glibc's loader ignores LD_PRELOAD paths: the program
 * would run unpatched and untraced, and it runs with privileges the user
 * does not have, which fhook must not hand to the user's events or
 * replacement code anyway.  The test is the kernel's (commoncap's
 * secureexec): the new effective ids against the real ones.  A mount
 * with nosuid gives neither ids nor capabilities.  Writes the reason.
 */
static bool runs_secure(const char *file, const struct stat *st, char *why, size_t size)
{
	struct statvfs vfs;
	struct passwd *pw;
	struct group *gr;

	if (!statvfs(file, &vfs) && (vfs.f_flag & ST_NOSUID))
		return false;
	if ((st->st_mode & S_ISUID) && st->st_uid != getuid()) {
		pw = getpwuid(st->st_uid);
		if (pw)
			snprintf(why, size, "set-user-ID %s", pw->pw_name);
		else
			snprintf(why, size, "set-user-ID %u", (unsigned)st->st_uid);
		return true;
	}
	/* without group execute permission, the bit means mandatory locking */
	if ((st->st_mode & (S_ISGID | S_IXGRP)) == (S_ISGID | S_IXGRP) &&
	    st->st_gid != getgid()) {
		gr = getgrgid(st->st_gid);
		if (gr)
			snprintf(why, size, "set-group-ID %s", gr->gr_name);
		else
			snprintf(why, size, "set-group-ID %u", (unsigned)st->st_gid);
		return true;
	}
	/* root keeps what it has: its capabilities do not grow */
	if (getuid() && getxattr(file, "security.capability", NULL, 0) > 0) {
		snprintf(why, size, "given file capabilities");
		return true;
	}
	return false;
}

/*
 * What the ELF header says about running @file here: 1 for an x86-64 ELF
 * file, 0 for something else (a script), or -ENOEXEC: a 32-bit or
 * foreign program would fail in execvp, which then hands the file to
 * /bin/sh as a script, and a truncated one would be "not patchable".
 */
static int check_elf_header(const char *file, int fd, const struct stat *st)
{
	unsigned char e[EI_NIDENT + 4];
	uint16_t machine;
	ssize_t n = pread(fd, e, sizeof(e), 0);

	if (n < SELFMAG || memcmp(e, ELFMAG, SELFMAG))
		return 0;	/* a script, or something execve refuses itself */
	if (n < (ssize_t)sizeof(e) || (e[EI_CLASS] != ELFCLASS32 && e[EI_CLASS] != ELFCLASS64)) {
		fprintf(stderr, "fhook: %s is a corrupt ELF file (its header is cut short or "
			"invalid)\n", file);
		return -ENOEXEC;
	}
	if (e[EI_DATA] == ELFDATA2LSB)
		machine = (uint16_t)(e[EI_NIDENT + 2] | e[EI_NIDENT + 3] << 8);
	else
		machine = (uint16_t)(e[EI_NIDENT + 2] << 8 | e[EI_NIDENT + 3]);
	if (e[EI_CLASS] == ELFCLASS32 || machine != FHOOK_ELF_MACHINE ||
	    e[EI_DATA] != ELFDATA2LSB) {
		const char *what = machine == EM_386 ? "a 32-bit x86 program" :
				   machine == EM_X86_64 && e[EI_CLASS] == ELFCLASS32 ?
				   "a 32-bit (x32) program" :
				   machine == EM_X86_64 ? "an x86-64 program" :
				   machine == EM_AARCH64 && e[EI_CLASS] == ELFCLASS32 ?
				   "a 32-bit AArch64 (ILP32) program" :
				   machine == EM_AARCH64 ? "an AArch64 program" :
				   machine == EM_ARM ? "a 32-bit ARM program" :
				   machine == EM_RISCV ? "a RISC-V program" : NULL;

		if (what)
			fprintf(stderr, "fhook: %s is %s: fhook runs " FHOOK_ARCH_NAME
				" programs only\n", file, what);
		else
			fprintf(stderr, "fhook: %s is a %d-bit ELF program for machine %u: fhook "
				"runs " FHOOK_ARCH_NAME " programs only\n", file,
				e[EI_CLASS] == ELFCLASS32 ? 32 : 64, machine);
		return -ENOEXEC;
	}
	if (st->st_size < (off_t)sizeof(Elf64_Ehdr)) {
		fprintf(stderr, "fhook: %s is a corrupt ELF file (cut short at %lld bytes)\n",
			file, (long long)st->st_size);
		return -ENOEXEC;
	}
	return 1;
}

/*
 * Refuse what fhook cannot act inside, naming why, rather than run it
 * untraced: a statically linked program has no dynamic loader to preload
 * libfhook into; a set-id one runs with privileges the user has not got;
 * a 32-bit, foreign or corrupt ELF file.  Scripts and anything that is
 * not an ELF file pass (their interpreter is what gets preloaded).
 */
int cli_check_program(const char *name)
{
	char *file = cli_which(name), why[300];
	int fd, ret = 0;
	size_t i, n;
	struct stat st;
	Elf *elf;

	if (!file)
		return 0;	/* execvp reports it */
	fd = open(file, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		goto out;
	if (fstat(fd, &st))
		goto out_close;
	if (runs_secure(file, &st, why, sizeof(why))) {
		fprintf(stderr, "fhook: %s is %s: it would run with privileges you do not "
			"have, where the dynamic loader ignores LD_PRELOAD; fhook does not "
			"act inside it (run fhook as that user, or use a copy without the "
			"set-id bit or capabilities)\n", file, why);
		ret = -ENOEXEC;
		goto out_close;
	}
	ret = check_elf_header(file, fd, &st);
	if (ret <= 0)
		goto out_close;
	ret = 0;
	elf_version(EV_CURRENT);
	elf = elf_begin(fd, ELF_C_READ_MMAP, NULL);
	if (!elf || elf_kind(elf) != ELF_K_ELF) {
		fprintf(stderr, "fhook: %s is a corrupt ELF file (%s)\n", file, elf_errmsg(-1));
		ret = -ENOEXEC;
	} else {
		GElf_Phdr ph;
		bool interp = false, bad = false;

		if (elf_getphdrnum(elf, &n))
			bad = true;
		for (i = 0; !bad && i < n; i++) {
			if (!gelf_getphdr(elf, (int)i, &ph) ||
			    (ph.p_type == PT_LOAD && ph.p_offset + ph.p_filesz > (uint64_t)st.st_size))
				bad = true;
			else if (ph.p_type == PT_INTERP)
				interp = true;
		}
		if (bad) {
			fprintf(stderr, "fhook: %s is a corrupt ELF file (its program headers "
				"or segments run past its end, %lld bytes)\n", file,
				(long long)st.st_size);
			ret = -ENOEXEC;
		} else if (!interp) {
			fprintf(stderr, "fhook: %s is statically linked: there is no dynamic "
				"loader to preload libfhook into (link it dynamically, or link "
				"libfhook.a into it and use the library)\n", file);
			ret = -ENOEXEC;
		}
	}
	if (elf)
		elf_end(elf);
out_close:
	close(fd);
out:
	free(file);
	return ret;
}

/* Put libfhook first in LD_PRELOAD for the programs this process starts. */
static int set_preload(void)
{
	char lib[PATH_MAX], *pre;
	const char *old = getenv("LD_PRELOAD");

	if (cli_libfhook_path(lib, sizeof(lib))) {
		fprintf(stderr, "fhook: cannot find libfhook.so next to the fhook command\n");
		return -ENOENT;
	}
	if (asprintf(&pre, "%s%s%s", lib, old && *old ? ":" : "", old && *old ? old : "") < 0)
		return -ENOMEM;
	setenv("LD_PRELOAD", pre, 1);
	free(pre);
	return 0;
}

/*
 * FHOOK_EMULATOR: a command line the command puts in front of each
 * program it starts, for a machine whose kernel cannot run the program
 * itself (an aarch64 fhook under qemu-user with no binfmt_misc entry:
 * FHOOK_EMULATOR="qemu-aarch64-static -L /").  Words are split at blanks;
 * the program goes after them by its path (found on PATH as execvp
 * would), so the emulator needs no search of its own, and it must hand the
 * environment (LD_PRELOAD) on to the program, as qemu-user does.  What the
 * command reads stays the program's own ELF file, never the emulator's.
 * Like all the environment it is the user's input: a command running with
 * AT_SECURE ignores it (secure_getenv).  Returns a malloc'd vector (kept:
 * the caller execs or exits), or NULL with no emulator or no memory.
 */
static char **emulated_argv(char **argv)
{
	const char *env = secure_getenv("FHOOK_EMULATOR");
	char *words, *w, *save = NULL, *path, **out;
	size_t n = 0, nr_args = 0, i;

	if (!env || !env[strspn(env, " \t")])
		return NULL;
	while (argv[nr_args])
		nr_args++;
	words = strdup(env);
	path = cli_which(argv[0]);
	out = calloc(strlen(env) / 2 + nr_args + 2, sizeof(*out));
	if (!words || !path || !out) {
		free(words);
		free(path);
		free(out);
		return NULL;
	}
	for (w = strtok_r(words, " \t", &save); w; w = strtok_r(NULL, " \t", &save))
		out[n++] = w;
	out[n++] = path;
	for (i = 1; i < nr_args; i++)
		out[n++] = argv[i];
	out[n] = NULL;
	return out;
}

/* execvp() @argv, behind FHOOK_EMULATOR if set; returns only on failure */
static void exec_program(char **argv)
{
	char **em = emulated_argv(argv);

	if (em) {
		/*
		 * The kernel names the process after the emulator: libfhook
		 * gives it the program's name (its comm) back, which events
		 * and thread names show (lib/recorder/record_setup.c).
		 */
		const char *base = strrchr(argv[0], '/');

		setenv("FHOOK_EMULATED_COMM", base ? base + 1 : argv[0], 1);
		execvp(em[0], em);
		fprintf(stderr, "fhook: cannot run %s with FHOOK_EMULATOR's %s: %s\n", argv[0],
			em[0], strerror(errno));
		return;
	}
	execvp(argv[0], argv);
	fprintf(stderr, "fhook: cannot run %s: %s\n", argv[0], strerror(errno));
}

pid_t cli_start_preloaded(char **argv)
{
	pid_t pid;

	if (cli_check_program(argv[0]))
		return -ENOEXEC;
	if (set_preload())
		return -ENOENT;
	pid = fork();
	if (pid < 0)
		return -errno;
	if (!pid) {
		exec_program(argv);
		_exit(127);
	}
	return pid;
}

int cli_exit_status(int status)
{
	if (WIFSIGNALED(status))
		return 128 + WTERMSIG(status);
	return WEXITSTATUS(status);
}

int cli_run_preloaded(char **argv, bool wait_child)
{
	pid_t pid;
	int status;

	if (!wait_child) {
		if (cli_check_program(argv[0]))
			return 125;
		if (set_preload())
			return 127;
		exec_program(argv);
		return 127;
	}
	pid = cli_start_preloaded(argv);
	if (pid == -ENOEXEC)
		return 125;
	if (pid < 0)
		return 127;
	signal(SIGINT, SIG_IGN);
	while (waitpid(pid, &status, 0) < 0)
		if (errno != EINTR)
			return 127;
	signal(SIGINT, SIG_DFL);
	return cli_exit_status(status);
}
