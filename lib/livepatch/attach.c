// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * `fhook patch -p PID`, `fhook inject -p PID`, `fhook unpatch -p PID` and
 * `fhook patch -p PID --list`: the verbs of the attach channel
 * (lib/core/control.c) that add, remove and show the patches of a running
 * process.  A patch stays applied after the command has gone, like a
 * loaded module, until it is removed by name.
 *
 *   patch   NAME FUNC LIB:SYM [CALLER...]
 *   inject  NAME FUNC RETVAL PROBABILITY INTERVAL TIMES SEED [CALLER...]
 *   unpatch [NAME]                        every patch without NAME
 *   list
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <fhook/internal/attach.h>
#include <fhook/livepatch.h>

#include "lp.h"

struct att_patch {
	struct att_patch *next;
	struct fhook_lp *lp;
	char *name, *mode, *func, *with;
	long long retval;
};

/* Changed only under the channel's lock: requests are serialized. */
static struct att_patch *att_patches;

static struct att_patch *find(const char *name)
{
	struct att_patch *p;

	for (p = att_patches; p; p = p->next)
		if (!strcmp(p->name, name))
			return p;
	return NULL;
}

static void att_free(struct att_patch *p)
{
	fhook_lp_free(p->lp);
	free(p->name);
	free(p->mode);
	free(p->func);
	free(p->with);
	free(p);
}

static int parse_ll(const char *s, long long *out)
{
	char *end;

	errno = 0;
	*out = strtoll(s, &end, 0);
	if (errno == ERANGE) {
		errno = 0;
		*out = (long long)strtoull(s, &end, 0);
	}
	return errno || end == s || *end ? -EINVAL : 0;
}

/* patch and inject: build, route every caller, apply; nothing changes on error. */
static int add_patch(bool inject, int argc, char **argv, FILE *out)
{
	struct fhook_fault_attr attr = { .sz = sizeof(attr) };
	struct fhook_lp_opts opts = { .sz = sizeof(opts) };
	int first = inject ? 7 : 3, i, ret = -EINVAL;
	struct att_patch *p;
	void *new_func = NULL;
	long long v[5];

	if (argc < first) {
		fprintf(out, "fhook: %s: bad request\n", inject ? "inject" : "patch");
		return -EINVAL;
	}
	if (find(argv[0])) {
		fprintf(out, "fhook: %s: a patch named '%s' is already applied\n",
			inject ? "inject" : "patch", argv[0]);
		return -EEXIST;
	}
	if (inject) {
		for (i = 0; i < 5; i++) {
			if (parse_ll(argv[2 + i], &v[i])) {
				fprintf(out, "fhook: inject: bad number '%s'\n", argv[2 + i]);
				return -EINVAL;
			}
		}
		attr.probability = v[1];
		attr.interval = v[2];
		attr.times = v[3];
		attr.seed = v[4];
	}
	p = calloc(1, sizeof(*p));
	if (!p)
		return -ENOMEM;
	p->name = strdup(argv[0]);
	p->mode = strdup(inject ? "inject" : "patch");
	p->func = strdup(argv[1]);
	p->with = strdup(inject ? "" : argv[2]);
	p->retval = inject ? v[0] : 0;
	if (!p->name || !p->mode || !p->func || !p->with) {
		ret = -ENOMEM;
		goto fail;
	}
	opts.name = p->mode;
	fhook_lp_err_file = out;
	p->lp = fhook_lp_new(p->func, &opts);
	if (!p->lp) {
		ret = -errno;
		goto fail;
	}
	if (!inject && !(new_func = fhook_lp_replacement(p->lp, p->with)))
		goto fail;
	if (argc == first) {
		ret = inject ? fhook_lp_fail(p->lp, NULL, (unsigned long)p->retval)
			     : fhook_lp_redirect(p->lp, NULL, new_func);
	} else {
		for (i = first, ret = 0; i < argc && !ret; i++)
			ret = inject ? fhook_lp_fail(p->lp, argv[i], (unsigned long)p->retval)
				     : fhook_lp_redirect(p->lp, argv[i], new_func);
	}
	if (!ret && inject)
		ret = fhook_lp_set_fault_attr(p->lp, &attr);
	if (!ret)
		ret = fhook_lp_apply(p->lp);
	if (ret)
		goto fail;
	fhook_lp_err_file = NULL;
	p->next = att_patches;
	att_patches = p;
	fprintf(out, "%s\n", p->name);
	return 0;
fail:
	fhook_lp_err_file = NULL;
	att_free(p);
	return ret ? ret : -EINVAL;
}

static int verb_patch(int argc, char **argv, FILE *out)
{
	return add_patch(false, argc, argv, out);
}

static int verb_inject(int argc, char **argv, FILE *out)
{
	return add_patch(true, argc, argv, out);
}

/* Remove one patch or all: each waits for its grace period before it is freed. */
static int verb_unpatch(int argc, char **argv, FILE *out)
{
	struct att_patch **pp = &att_patches, *p;
	bool any = false;

	while ((p = *pp)) {
		if (argc && strcmp(p->name, argv[0])) {
			pp = &p->next;
			continue;
		}
		*pp = p->next;
		fprintf(out, "%s\n", p->name);
		att_free(p);
		any = true;
	}
	if (argc && !any) {
		fprintf(out, "fhook: unpatch: no patch named '%s'\n", argv[0]);
		return -ENOENT;
	}
	return 0;
}

/*
 * One line per patch, then one per route:
 *   NAME<TAB>MODE<TAB>TARGET<TAB>WITH (patch) or RETVAL (inject)
 *   <TAB>CALLER<TAB>SEEN<TAB>HIT       (CALLER "*": every caller; "-": the
 *                                     calls no route took)
 */
static int verb_list(int argc, char **argv, FILE *out)
{
	struct fhook_lp_stat st[64];
	struct att_patch *p;
	int n, i;

	for (p = att_patches; p; p = p->next) {
		if (*p->with)
			fprintf(out, "%s\t%s\t%s\t%s\n", p->name, p->mode, p->func, p->with);
		else
			fprintf(out, "%s\t%s\t%s\t%lld\n", p->name, p->mode, p->func, p->retval);
		n = fhook_lp_stats(p->lp, st, 64);
		for (i = 0; i < n && i < 64; i++)
			fprintf(out, "\t%s\t%lu\t%lu\n", st[i].caller ? st[i].caller :
				i < (int)p->lp->nr_routes ? "*" : "-", st[i].seen, st[i].hit);
	}
	return 0;
}

static const struct fhook_attach_verb lp_verbs[] = {
	{ "patch", verb_patch },
	{ "inject", verb_inject },
	{ "unpatch", verb_unpatch },
	{ "list", verb_list },
};

__attribute__((constructor(205))) static void lp_attach_init(void)
{
	size_t i;

	for (i = 0; i < sizeof(lp_verbs) / sizeof(lp_verbs[0]); i++)
		fhook_attach_register(&lp_verbs[i]);
}
