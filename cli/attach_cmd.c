// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * The attached modes of fhook patch, inject and unpatch:
 *
 *   fhook patch  -p PID [--name NAME] --func TARGET --with LIB.so:SYMBOL [--caller SYM]...
 *   fhook inject -p PID [--name NAME] --func TARGET --retval VALUE [...]
 *   fhook patch  -p PID --list
 *   fhook unpatch -p PID [NAME]
 *
 * A patch applied this way stays in the process after fhook exits, as a
 * loaded module stays in the kernel, until it is removed by name (or all
 * together).  The work is done in the process by libfhook
 * (lib/livepatch/attach.c); cli/attach/ gets there.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "attach.h"

int cli_lp_attached(const char *mode, pid_t pid, const char *name, const char *func,
		    const char *what, const char *callers);
int cli_lp_list(pid_t pid);

/* Print an error reply's message lines (they say "fhook: ..." themselves). */
static void print_error(const char *cmd, const char *reply)
{
	const char *body = strchr(reply, '\n');

	if (body && body[1])
		fputs(body + 1, stderr);
	else
		fprintf(stderr, "fhook: %s: the process refused the request\n", cmd);
}

/*
 * Send @req to process @pid; its reply in *@reply (the caller frees it).
 * Returns 0, -1 when the request could not be made, 1 when the process
 * refused it (its message printed).
 */
static int request(const char *cmd, pid_t pid, const char *req, char **reply)
{
	struct cli_attach *a;
	int ret;

	/* a function without a site is patched with a kprobe: no site needed */
	cli_attach_no_sites_ok = true;
	if (cli_attach_open(cmd, pid, &a))
		return -1;
	ret = cli_attach_ctl(a, req, reply);
	cli_attach_close(a);
	if (ret < 0)
		return -1;
	if (ret) {
		print_error(cmd, *reply);
		free(*reply);
		return 1;
	}
	return 0;
}

/*
 * Apply a patch (@what: "LIB:SYM") or an injection (@what: "RETVAL\tPROB\t
 * INTERVAL\tTIMES\tSEED") in process @pid.  Returns the exit status.
 */
int cli_lp_attached(const char *mode, pid_t pid, const char *name, const char *func,
		    const char *what, const char *callers)
{
	char *req, *reply, *c;
	int ret;

	if (asprintf(&req, "%s\t%s\t%s\t%s%s%s", mode, name ? name : func, func, what,
		     callers ? "\t" : "", callers ? callers : "") < 0)
		return 1;
	/* callers come comma-separated: the request separates words with tabs */
	for (c = req; *c; c++)
		if (*c == ',')
			*c = '\t';
	ret = request(mode, pid, req, &reply);
	free(req);
	if (ret > 0)
		fprintf(stderr, "fhook: %s: nothing was changed in process %d\n", mode, pid);
	if (ret)
		return 1;
	/* its warnings (a tail call, an unreachable caller), as without -p */
	for (c = strchr(reply, '\n'); c && c[1]; c = strchr(c + 1, '\n'))
		if (!strncmp(c + 1, "fhook: ", 7)) {
			char *end = strchr(c + 1, '\n');

			fprintf(stderr, "%.*s\n", end ? (int)(end - c - 1) : (int)strlen(c + 1), c + 1);
		}
	fprintf(stderr, "fhook: %s: '%s' applied in process %d; `fhook unpatch -p %d %s` "
		"removes it\n", mode, name ? name : func, pid, pid, name ? name : func);
	free(reply);
	return 0;
}

/* The list reply (lib/livepatch/attach.c), as a table. */
int cli_lp_list(pid_t pid)
{
	char *reply, *line, *save, *f[4];
	int n = 0;

	if (request("patch", pid, "list", &reply))
		return 1;
	for (line = strtok_r(reply + 3, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
		bool route = line[0] == '\t';
		char *s = line + route, *tok, *ts;
		int k = 0;

		for (tok = strtok_r(s, "\t", &ts); tok && k < 4; tok = strtok_r(NULL, "\t", &ts))
			f[k++] = tok;
		if (!route && k == 4) {
			bool inject = !strcmp(f[1], "inject");

			printf("%s: %s %s -> %s%s\n", f[0], f[1], f[2], inject ? "return " : "", f[3]);
			n++;
		} else if (route && k == 3) {
			if (!strcmp(f[0], "-"))
				printf("    other callers: %s calls\n", f[1]);
			else
				printf("    %s%s: %s calls, %s %s\n", !strcmp(f[0], "*") ? "" : "caller ",
				       !strcmp(f[0], "*") ? "every caller" : f[0], f[1], f[2],
				       "taken");
		}
	}
	if (!n)
		printf("no patches in process %d\n", pid);
	free(reply);
	return 0;
}

static void unpatch_usage(FILE *f)
{
	fprintf(f,
		"usage: fhook unpatch -p PID [NAME]\n"
		"\n"
		"Remove the patch NAME (every patch without NAME) that `fhook patch -p` or\n"
		"`fhook inject -p` applied in the running process PID.  Returns once no\n"
		"thread can enter a replacement any more.\n"
		"\n"
		"  -p, --pid PID        the process (required)\n"
		"\n"
		"Exit status: 0; 1 when the process cannot be reached; 2 for bad usage.\n");
}

int cmd_unpatch(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "pid", required_argument, NULL, 'p' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	char *req, *reply, *line, *save;
	pid_t pid = 0;
	int c, ret;

	optind = 1;
	while ((c = getopt_long(argc, argv, "+hp:", opts, NULL)) != -1) {
		switch (c) {
		case 'p':
			pid = cli_attach_parse_pid("unpatch", optarg);
			if (pid < 0)
				return 2;
			break;
		case 'h':
			unpatch_usage(stdout);
			return 0;
		default:
			unpatch_usage(stderr);
			return 2;
		}
	}
	if (!pid || argc - optind > 1) {
		fprintf(stderr, "fhook: unpatch: %s\n", !pid ? "-p PID is required" :
			"at most one NAME");
		unpatch_usage(stderr);
		return 2;
	}
	if (asprintf(&req, "unpatch%s%s", optind < argc ? "\t" : "",
		     optind < argc ? argv[optind] : "") < 0)
		return 1;
	ret = request("unpatch", pid, req, &reply);
	free(req);
	if (ret)
		return 1;
	c = 0;
	for (line = strtok_r(reply + 3, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
		fprintf(stderr, "fhook: unpatch: '%s' removed from process %d\n", line, pid);
		c++;
	}
	if (!c)
		fprintf(stderr, "fhook: unpatch: no patches in process %d\n", pid);
	free(reply);
	return 0;
}
