// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * Running a program with libfhook preloaded: what "fhook <cmd> -- PROG"
 * does for every command that acts inside a program.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <gelf.h>
#include <libelf.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

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

/*
 * A statically linked program has no dynamic loader to preload libfhook
 * into: say so rather than run it untraced.  Scripts and anything that is
 * not an ELF file pass (their interpreter is what gets preloaded).
 */
static int check_preloadable(const char *name)
{
	char *file = cli_which(name);
	int fd, ret = 0;
	size_t i, n;
	Elf *elf;

	if (!file)
		return 0;	/* execvp reports it */
	fd = open(file, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		goto out;
	elf_version(EV_CURRENT);
	elf = elf_begin(fd, ELF_C_READ_MMAP, NULL);
	if (elf && elf_kind(elf) == ELF_K_ELF && !elf_getphdrnum(elf, &n)) {
		bool interp = false;

		for (i = 0; i < n; i++) {
			GElf_Phdr ph;

			if (gelf_getphdr(elf, (int)i, &ph) && ph.p_type == PT_INTERP)
				interp = true;
		}
		if (!interp) {
			fprintf(stderr, "fhook: %s is statically linked: there is no dynamic "
				"loader to preload libfhook into (link it dynamically, or link "
				"libfhook.a into it and use the library)\n", file);
			ret = -ENOEXEC;
		}
	}
	if (elf)
		elf_end(elf);
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

pid_t cli_start_preloaded(char **argv)
{
	pid_t pid;

	if (check_preloadable(argv[0]))
		return -ENOEXEC;
	if (set_preload())
		return -ENOENT;
	pid = fork();
	if (pid < 0)
		return -errno;
	if (!pid) {
		execvp(argv[0], argv);
		fprintf(stderr, "fhook: cannot run %s: %s\n", argv[0], strerror(errno));
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
		if (check_preloadable(argv[0]))
			return 125;
		if (set_preload())
			return 127;
		execvp(argv[0], argv);
		fprintf(stderr, "fhook: cannot run %s: %s\n", argv[0], strerror(errno));
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
