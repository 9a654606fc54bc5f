// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * fhook's assembler front end for GCC (`$(fhook cflags)` puts its
 * directory first with -B): it mends one directive, then runs the real
 * `as`.
 *
 * GCC 12 puts the site of every function into __patchable_function_entries
 * with a link-order flag naming the function ("awo"), but it names a stale
 * function after the first, and never puts the entry into the function's
 * COMDAT group.  All of an object's entries then land in one section
 * outside every group, and when the linker keeps another object's copy of
 * an inline function or template, the entries point into a discarded
 * section: "`.text._ZN...' referenced in section `__patchable_function_entries'
 * ... defined in discarded section".  Most C++ libraries do not link.
 *
 * The directive is rewritten as GCC 13 writes it: linked to the function
 * whose pad follows, and in that function's group, so the entry goes
 * wherever the function goes.  Nothing else of the input changes.
 *
 * Then, once `as` has written the object, the functions of it that leave
 * the vector registers alone are listed in a note (as_vecproof.c), so that
 * handlers among them need no vector register saved.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <limits.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "as_vecproof.h"

#define PFE	"__patchable_function_entries"

/* The `as` on PATH that is not this program. */
static char *real_as(const char *self)
{
	const char *path = getenv("PATH");
	char me[PATH_MAX], buf[PATH_MAX], rp[PATH_MAX];

	if (!realpath(self, me) && !realpath("/proc/self/exe", me))
		me[0] = 0;
	if (!path || !*path)
		path = "/usr/bin:/bin";
	while (*path) {
		size_t n = strcspn(path, ":");

		snprintf(buf, sizeof(buf), "%.*s/as", (int)n, n ? path : ".");
		if (!access(buf, X_OK) && realpath(buf, rp) && strcmp(rp, me))
			return strdup(buf);
		path += n + (path[n] == ':');
	}
	return NULL;
}

/* Options of `as` that take a separate value. */
static bool takes_value(const char *opt)
{
	static const char *const v[] = { "-o", "-I", "--defsym", "-march", "-mtune", NULL };
	int i;

	for (i = 0; v[i]; i++)
		if (!strcmp(opt, v[i]))
			return true;
	return false;
}

/*
 * A section directive's group, if it has one:
 * .section NAME,"FLAGS",@progbits,GROUP,comdat
 */
static void section_group(const char *line, char *group, size_t size)
{
	const char *q1, *q2, *g, *end;

	group[0] = 0;
	q1 = strchr(line, '"');
	q2 = q1 ? strchr(q1 + 1, '"') : NULL;
	if (!q2 || !memchr(q1, 'G', q2 - q1))
		return;
	g = strstr(q2, ",@progbits,");
	if (!g)
		return;
	g += strlen(",@progbits,");
	end = strchr(g, ',');
	if (!end || (size_t)(end - g) >= size)
		return;
	memcpy(group, g, end - g);
	group[end - g] = 0;
}

static bool is_section_switch(const char *s)
{
	while (*s == ' ' || *s == '\t')
		s++;
	return !strncmp(s, ".section", 8) || !strncmp(s, ".text", 5) || !strncmp(s, ".data", 5) ||
	       !strncmp(s, ".bss", 4) || !strncmp(s, ".previous", 9) || !strncmp(s, ".pushsection", 12);
}

/* Copy @in to @out, mending each site directive (see the top of this file). */
static int rewrite(FILE *in, FILE *out)
{
	char *line = NULL, func[1024] = "", group[1024] = "", *p;
	size_t cap = 0;
	ssize_t n;

	while ((n = getline(&line, &cap, in)) > 0) {
		p = line;
		while (*p == ' ' || *p == '\t')
			p++;
		if (!strncmp(p, ".type", 5) && strstr(p, "@function")) {
			/* .type NAME, @function: the function whose pad comes next */
			char *s = p + 5, *e;

			while (*s == ' ' || *s == '\t')
				s++;
			e = strchr(s, ',');
			if (e && (size_t)(e - s) < sizeof(func)) {
				memcpy(func, s, e - s);
				func[e - s] = 0;
			}
		} else if (!strncmp(p, ".section", 8) && strstr(p, PFE) && strstr(p, "\"awo\"") &&
			   func[0]) {
			if (group[0])
				fprintf(out, "\t.section\t" PFE ",\"awoG\",@progbits,%s,%s,comdat\n", func,
					group);
			else
				fprintf(out, "\t.section\t" PFE ",\"awo\",@progbits,%s\n", func);
			continue;
		} else if (is_section_switch(p) && !strstr(p, PFE)) {
			/* the section a function's pad is in: its group is the entry's */
			if (!strncmp(p, ".section", 8))
				section_group(p, group, sizeof(group));
			else
				group[0] = 0;
		}
		if (fwrite(line, 1, n, out) != (size_t)n) {
			free(line);
			return -EIO;
		}
	}
	free(line);
	return ferror(in) ? -EIO : 0;
}

int main(int argc, char **argv)
{
	char tmp[] = "/tmp/fhook-as-XXXXXX.s", *as, **nargv;
	int i, in_idx = -1, fd, status, ret;
	const char *obj = NULL;
	FILE *in, *out;
	pid_t pid;

	as = real_as(argv[0]);
	if (!as) {
		fprintf(stderr, "fhook-as: no assembler (as) on PATH\n");
		return 1;
	}
	for (i = 1; i < argc; i++) {
		if (takes_value(argv[i])) {
			if (!strcmp(argv[i], "-o") && i + 1 < argc)
				obj = argv[i + 1];
			i++;
			continue;
		}
		if (!strncmp(argv[i], "-o", 2) && argv[i][2])
			obj = argv[i] + 2;
		if (argv[i][0] != '-' || !strcmp(argv[i], "-"))
			in_idx = i;
	}
	in = in_idx < 0 || !strcmp(argv[in_idx], "-") ? stdin : fopen(argv[in_idx], "re");
	if (!in) {
		/* let the assembler say what is wrong with it */
		execv(as, argv);
		perror(as);
		return 1;
	}
	fd = mkstemps(tmp, 2);
	out = fd >= 0 ? fdopen(fd, "w") : NULL;
	if (!out) {
		perror("fhook-as: a temporary file");
		return 1;
	}
	ret = rewrite(in, out);
	if (fclose(out) || ret) {
		fprintf(stderr, "fhook-as: cannot write %s\n", tmp);
		unlink(tmp);
		return 1;
	}
	nargv = calloc(argc + 2, sizeof(*nargv));
	if (!nargv)
		return 1;
	for (i = 0; i < argc; i++)
		nargv[i] = argv[i];
	if (in_idx < 0)
		nargv[argc] = tmp;
	else
		nargv[in_idx] = tmp;
	nargv[0] = as;
	pid = fork();
	if (pid == 0) {
		execv(as, nargv);
		perror(as);
		_exit(127);
	}
	status = 0;
	while (pid > 0 && waitpid(pid, &status, 0) < 0 && errno == EINTR)
		;
	unlink(tmp);
	free(nargv);
	free(as);
	if (pid < 0)
		return 1;
	if (!WIFEXITED(status) || WEXITSTATUS(status))
		return WIFEXITED(status) ? WEXITSTATUS(status) : 1;
	/* an object whose proof could not be added is still the object `as` wrote */
	if (obj)
		as_vecproof(obj);
	return 0;
}
