// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * The in-process side of `fhook patch` and `fhook inject`.
 *
 * The command runs the program with libfhook preloaded and describes the
 * patch in FHOOK_LP_* variables; this constructor applies it before the
 * program's own constructors and main() run, and a destructor writes the
 * per-caller summary to the file the command named (it prints it once the
 * program has exited).  If the patch cannot be applied exactly as asked,
 * the program is not run at all: we exit with 125 before main(), having
 * changed nothing, so that it never runs half-patched.
 *
 *   FHOOK_LP_MODE         "patch" or "inject"
 *   FHOOK_LP_FUNC         the target
 *   FHOOK_LP_WITH         "LIB.so:SYMBOL" (patch)
 *   FHOOK_LP_CALLERS      comma-separated callers; unset: every caller
 *   FHOOK_LP_RETVAL       the value to return (inject)
 *   FHOOK_LP_PROBABILITY, FHOOK_LP_INTERVAL, FHOOK_LP_TIMES, FHOOK_LP_SEED
 *   FHOOK_LP_REPORT       file for the summary (and "setup-failed")
 *
 * The variables are removed from the environment so that programs this
 * one starts are not patched a second time.
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <elf.h>
#include <link.h>
#include <stdbool.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <fhook/livepatch.h>

#include "lp.h"
#include "util/startup.h"

#define FHOOK_LP_EXIT_SETUP	125

/* in .data: the exit path of every process reads them (util/startup.h) */
static struct fhook_lp *preload_lp __fhook_startup_data;
static char *preload_report __fhook_startup_data;

static const char *const lp_vars[] = {
	"FHOOK_LP_MODE", "FHOOK_LP_FUNC", "FHOOK_LP_WITH", "FHOOK_LP_CALLERS",
	"FHOOK_LP_RETVAL", "FHOOK_LP_PROBABILITY", "FHOOK_LP_INTERVAL", "FHOOK_LP_TIMES",
	"FHOOK_LP_SEED", "FHOOK_LP_REPORT",
};

static char *__fhook_startup take(const char *name)
{
	const char *v = secure_getenv(name);

	return v ? strdup(v) : NULL;
}

static void setup_failed(void)
{
	FILE *f;

	if (preload_report && (f = fopen(preload_report, "we"))) {
		fputs("setup-failed\n", f);
		fclose(f);
	}
	_exit(FHOOK_LP_EXIT_SETUP);
}

static int parse_num(const char *name, const char *s, long long *out)
{
	char *end;

	errno = 0;
	*out = strtoll(s, &end, 0);
	if (errno == ERANGE && !strchr(s, '-')) {
		/* retvals like 0xffffffffffffffff do not fit a long long */
		unsigned long long u;

		errno = 0;
		u = strtoull(s, &end, 0);
		if (errno || end == s || *end) {
			fprintf(stderr, "fhook: bad number '%s' in %s\n", s, name);
			return -EINVAL;
		}
		*out = (long long)u;
	} else if (errno || end == s || *end) {
		fprintf(stderr, "fhook: bad number '%s' in %s\n", s, name);
		return -EINVAL;
	}
	return 0;
}

static int num_var(const char *name, long long *out)
{
	const char *v = secure_getenv(name);

	if (!v)
		return 0;
	return parse_num(name, v, out) ? -EINVAL : 1;
}

__attribute__((constructor(200))) static void fhook_lp_preload(void)
{
	char *mode = take("FHOOK_LP_MODE"), *func = take("FHOOK_LP_FUNC");
	char *with = take("FHOOK_LP_WITH"), *callers = take("FHOOK_LP_CALLERS");
	struct fhook_fault_attr attr = {
		.sz = sizeof(attr), .probability = 100, .interval = 1, .times = -1,
	};
	struct fhook_lp_opts opts = { .sz = sizeof(opts) };
	struct fhook_lp *lp;
	long long retval = 0, val;
	int v;
	bool inject;
	void *new_func = NULL;
	char *tok, *save;
	size_t i;

	if (!mode)
		return;
	preload_report = take("FHOOK_LP_REPORT");
	/* numbers first: the environment is cleaned right after */
	if (num_var("FHOOK_LP_RETVAL", &retval) < 0)
		setup_failed();
	if ((v = num_var("FHOOK_LP_PROBABILITY", &val)) < 0)
		setup_failed();
	if (v)
		attr.probability = (unsigned long)val;
	if ((v = num_var("FHOOK_LP_INTERVAL", &val)) < 0)
		setup_failed();
	if (v)
		attr.interval = (unsigned long)val;
	if ((v = num_var("FHOOK_LP_TIMES", &val)) < 0)
		setup_failed();
	if (v)
		attr.times = (long)val;
	if ((v = num_var("FHOOK_LP_SEED", &val)) < 0)
		setup_failed();
	if (v)
		attr.seed = (unsigned long long)val;
	for (i = 0; i < sizeof(lp_vars) / sizeof(lp_vars[0]); i++)
		unsetenv(lp_vars[i]);
	inject = !strcmp(mode, "inject");
	if (!inject && strcmp(mode, "patch")) {
		fprintf(stderr, "fhook: unknown FHOOK_LP_MODE '%s'\n", mode);
		setup_failed();
	}
	opts.name = mode;
	lp = fhook_lp_new(func ? func : "", &opts);
	if (!lp) {
		if (!func)
			fprintf(stderr, "fhook: %s: FHOOK_LP_FUNC is not set\n", mode);
		setup_failed();
	}
	if (!inject) {
		new_func = with ? fhook_lp_replacement(lp, with) : NULL;
		if (!new_func) {
			if (!with)
				fhook_lp_err(lp, "FHOOK_LP_WITH is not set");
			setup_failed();
		}
	}
	if (callers && *callers) {
		for (tok = strtok_r(callers, ",", &save); tok; tok = strtok_r(NULL, ",", &save))
			if ((inject ? fhook_lp_fail(lp, tok, (unsigned long)retval)
				    : fhook_lp_redirect(lp, tok, new_func)) < 0)
				setup_failed();
	} else if ((inject ? fhook_lp_fail(lp, NULL, (unsigned long)retval)
			   : fhook_lp_redirect(lp, NULL, new_func)) < 0) {
		setup_failed();
	}
	if (fhook_lp_set_fault_attr(lp, &attr) || fhook_lp_apply(lp))
		setup_failed();
	preload_lp = lp;
	free(mode);
	free(func);
	free(with);
	free(callers);
}

__attribute__((destructor(200))) static void fhook_lp_preload_exit(void)
{
	FILE *f;

	if (!preload_lp || !preload_report)
		return;
	f = fopen(preload_report, "we");
	if (!f)
		return;
	fhook_lp_print_summary(preload_lp, f);
	fclose(f);
}
