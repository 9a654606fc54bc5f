// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * The event descriptions the command wrote into the shared memory
 * (lib/events/session.c, desc_write()), one line each: the events, their
 * fetch programs, their kprobes' places, the callers to filter on.  Parsed
 * into fhook_rec_events when a process first needs them, and freed when an
 * attached recording ends.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <fhook/kallsyms.h>

#include "record.h"

static int hexval(int c)
{
	return c <= '9' ? c - '0' : (c | 0x20) - 'a' + 10;
}

/*
 * The fields of a description line, each after a space: not sscanf(),
 * whose code (vfscanf, strtoull, the locale's tables) was five pages of
 * libc that each recorded process with sites faulted in for it alone.
 * Each moves *@s past what it took and is false when there is none.
 */
static bool desc_skip(const char **s)
{
	while (**s == ' ')
		(*s)++;
	return **s && **s != '\n';
}

static bool desc_long(const char **s, long min, long max, long *out)
{
	unsigned long long v;
	bool neg;

	if (!desc_skip(s))
		return false;
	neg = **s == '-';
	*s += neg;
	if (!fhook_rec_parse_num(s, neg ? (unsigned long long)max + 1 : (unsigned long long)max, &v))
		return false;
	*out = neg ? (long)(0 - v) : (long)v;
	return *out >= min;
}

static bool desc_int(const char **s, int *out)
{
	long v;

	if (!desc_long(s, INT_MIN, INT_MAX, &v))
		return false;
	*out = (int)v;
	return true;
}

static bool desc_uint(const char **s, unsigned int *out)
{
	long v;

	if (!desc_long(s, 0, UINT_MAX, &v))
		return false;
	*out = (unsigned int)v;
	return true;
}

static bool desc_hex(const char **s, unsigned long *out)
{
	unsigned long v = 0;
	const char *p;

	if (!desc_skip(s))
		return false;
	for (p = *s; (*p >= '0' && *p <= '9') || ((*p | 0x20) >= 'a' && (*p | 0x20) <= 'f'); p++) {
		if (v >> 60)
			return false;
		v = v << 4 | (unsigned long)hexval(*p);
	}
	if (p == *s)
		return false;
	*s = p;
	*out = v;
	return true;
}

/* A word of at most @size - 1 bytes, NUL-terminated in @buf. */
static bool desc_word(const char **s, char *buf, size_t size)
{
	size_t n = 0;

	if (!desc_skip(s))
		return false;
	while ((*s)[n] && (*s)[n] != ' ' && (*s)[n] != '\n')
		n++;
	if (n >= size)
		return false;
	memcpy(buf, *s, n);
	buf[n] = 0;
	*s += n;
	return true;
}

/* The descriptions the command wrote (lib/events/session.c, desc_write()). */
static int parse_desc(const char *d)
{
	const char *line = d;
	struct rec_event *e = NULL;
	struct rec_arg *a;

	while (*line) {
		const char *nl = strchr(line, '\n');
		char *l = strndup(line, nl ? (size_t)(nl - line) : strlen(line));
		const char *p = l + 1;
		int i;

		if (!l)
			return -ENOMEM;
		if (l[0] == 'E') {
			unsigned int id, ret, nargs, nentry, maxactive;
			char sym[1024];

			fhook_rec_events = realloc(fhook_rec_events, (fhook_rec_nr_events + 1) *
						   sizeof(*fhook_rec_events));
			e = &fhook_rec_events[fhook_rec_nr_events++];
			memset(e, 0, sizeof(*e));
			if (!desc_uint(&p, &id) || !desc_uint(&p, &ret) || !desc_uint(&p, &nargs) ||
			    !desc_uint(&p, &nentry))
				goto bad;
			e->id = id;
			e->is_return = ret;
			e->nr_entry = nentry;
			for (i = 0; i < (int)nentry && i < FHOOK_EV_MAX_ENTRY_ARGS; i++)
				if (!desc_int(&p, &e->entry_args[i]))
					goto bad;
			if (!desc_uint(&p, &maxactive) || !desc_word(&p, sym, sizeof(sym)))
				goto bad;
			e->nr_maxactive = (int)maxactive;
			e->symbol = strdup(sym);
			e->args = calloc(nargs ? nargs : 1, sizeof(*e->args));
		} else if (l[0] == 'A' && e) {
			a = &e->args[e->nr_args++];
			if (!desc_int(&p, &a->type) || !desc_uint(&p, &a->count) ||
			    !desc_int(&p, &a->nops) || a->nops < 0 || a->nops > FHOOK_EV_FETCH_INSN_MAX)
				goto bad;
			for (i = 0; i < a->nops; i++) {
				struct fhook_fetch_insn *in = &a->code[i];
				unsigned int lsh, rsh, bs;
				char data[2 * 4096 + 2];
				int op;

				if (!desc_int(&p, &op) || !desc_long(&p, LONG_MIN, LONG_MAX, &in->param) ||
				    !desc_uint(&p, &lsh) || !desc_uint(&p, &rsh) || !desc_uint(&p, &bs) ||
				    !desc_word(&p, data, sizeof(data)))
					goto bad;
				in->op = op;
				in->lshift = lsh;
				in->rshift = rsh;
				in->basesize = bs;
				if (strcmp(data, "-")) {
					size_t k, dl = strlen(data) / 2;

					in->data = malloc(dl + 1);
					for (k = 0; k < dl; k++)
						in->data[k] = hexval(data[2 * k]) << 4 | hexval(data[2 * k + 1]);
					in->data[dl] = 0;
				}
			}
		} else if (l[0] == 'K' && e) {
			char mod[PATH_MAX], path[PATH_MAX];
			long off;

			if (!desc_long(&p, 0, LONG_MAX, &off) || !desc_word(&p, mod, sizeof(mod)) ||
			    !desc_word(&p, path, sizeof(path)) || !desc_hex(&p, &e->link_addr))
				goto bad;
			e->offset = (unsigned long)off;
			e->kprobe = true;
			if (strcmp(mod, "-") && !(e->module = strdup(mod)))
				goto bad;
			if (strcmp(path, "-") && !(e->path = strdup(path)))
				goto bad;
		} else if (l[0] == 'T' && e && l[1] == ' ') {
			const char **nt = realloc(e->targets, (e->nr_targets + 1) * sizeof(*nt));

			if (!nt)
				goto bad;
			e->targets = nt;
			if (!(e->targets[e->nr_targets] = strdup(l + 2)))
				goto bad;
			e->nr_targets++;
		} else if (l[0] == 'C') {
			unsigned long addr = kallsyms_lookup_name(l + 2), size = 0, off;

			if (!addr || !kallsyms_lookup_size_offset(addr, &size, &off)) {
				fprintf(stderr, "fhook: %s: no caller '%s' in this process\n",
					fhook_rec_cmd, l + 2);
			} else {
				fhook_rec_callers = realloc(fhook_rec_callers, (fhook_rec_nr_callers + 1) *
							    sizeof(*fhook_rec_callers));
				fhook_rec_callers[fhook_rec_nr_callers].start = addr;
				fhook_rec_callers[fhook_rec_nr_callers++].end = addr + size;
			}
		}
		free(l);
		line = nl ? nl + 1 : line + strlen(line);
		continue;
bad:
		free(l);
		return -EINVAL;
	}
	return 0;
}

/*
 * The event descriptions the command wrote, parsed when the probes are
 * first built: a process none of whose objects has a site (a suite's
 * shell, make, rm) never needs them, and parsing costs it sscanf()'s and
 * malloc()'s pages.
 */
int fhook_rec_read_desc(FILE *err)
{
	char *desc;

	if (fhook_rec_desc_state)
		return fhook_rec_desc_state < 0 ? -EINVAL : 0;
	desc = strndup((char *)fhook_rec_shm + fhook_rec_shm->desc_off, fhook_rec_shm->desc_len);
	if (!desc || parse_desc(desc)) {
		fprintf(err, "fhook: %s: bad event descriptions\n", fhook_rec_cmd);
		fhook_rec_untraced("bad event descriptions");
		free(desc);
		fhook_rec_free_events();
		fhook_rec_desc_state = -1;
		return -EINVAL;
	}
	free(desc);
	fhook_rec_desc_state = 1;
	return 0;
}

void fhook_rec_free_events(void)
{
	int i, k, j;

	for (i = 0; i < fhook_rec_nr_events; i++) {
		struct rec_event *e = &fhook_rec_events[i];

		for (k = 0; k < e->nr_args; k++)
			for (j = 0; j < e->args[k].nops; j++)
				free(e->args[k].code[j].data);
		free(e->args);
		free(e->symbol);
		free(e->module);
		free(e->path);
		for (k = 0; k < e->nr_targets; k++)
			free((char *)e->targets[k]);
		free(e->targets);
	}
	free(fhook_rec_events);
	fhook_rec_events = NULL;
	for (i = 0; fhook_rec_kprobes && i < fhook_rec_nr_events; i++)
		free(fhook_rec_kprobes[i].many);
	fhook_rec_nr_events = 0;
	free(fhook_rec_kprobes);
	fhook_rec_kprobes = NULL;
	for (i = 0; i < fhook_rec_nr_probes; i++) {
		free(fhook_rec_probes[i].entry);
		free(fhook_rec_probes[i].ret);
		free(fhook_rec_probes[i].ret_off);
	}
	free(fhook_rec_probes);
	fhook_rec_probes = NULL;
	fhook_rec_nr_probes = 0;
	free(fhook_rec_callers);
	fhook_rec_callers = NULL;
	fhook_rec_nr_callers = 0;
}
