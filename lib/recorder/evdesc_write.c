// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * The event description's writer (evdesc.h), the counterpart of
 * evdesc.c's parser: in the command alone, which writes the description
 * into the shared memory and into the recording.
 */
#include <errno.h>
#include <stdio.h>

#include "evdesc.h"

/* A string as hex bytes, "-" for none. */
static void write_hex(FILE *out, const char *str)
{
	const unsigned char *s = (const unsigned char *)str;

	if (!s || !*s)
		fputc('-', out);
	for (; s && *s; s++)
		fprintf(out, "%02x", *s);
}

static void write_insn(FILE *out, const struct fhook_fetch_insn *in)
{
	fprintf(out, " %d %ld %u %u %u ", in->op, in->param, in->lshift, in->rshift,
		in->basesize);
	write_hex(out, in->data);
}

int ev_desc_write(FILE *out, const struct ev_desc *d)
{
	int i, j, k;

	for (i = 0; i < d->nr_evs; i++) {
		const struct ev_desc_event *e = &d->evs[i];

		fprintf(out, "E %d %d %d %d", i, e->is_return, e->nr_args, e->nr_entry);
		for (j = 0; j < e->nr_entry; j++)
			fprintf(out, " %d", e->entry_args[j]);
		fprintf(out, " %d %s %s %s\n", e->nr_maxactive, e->group, e->event, e->symbol);
		if (e->kprobe)
			fprintf(out, "K %lu %lx %s %s\n", e->offset, e->link_addr,
				e->module ? e->module : "-", e->path ? e->path : "-");
		for (j = 0; j < e->nr_targets; j++)
			fprintf(out, "T %s\n", e->targets[j]);
		for (j = 0; j < e->nr_args; j++) {
			const struct ev_desc_arg *a = &e->args[j];

			fprintf(out, "A %d %u %s %d", a->type, a->count, a->name, a->nops);
			for (k = 0; k < a->nops; k++)
				write_insn(out, &a->code[k]);
			fputc('\n', out);
		}
		if (e->nr_filter) {
			fprintf(out, "F %d", e->nr_filter);
			for (j = 0; j < e->nr_filter; j++) {
				fprintf(out, " %d %lld ", e->filter[j].op, e->filter[j].v);
				write_hex(out, e->filter[j].s);
			}
			fputc('\n', out);
		}
	}
	for (i = 0; i < d->nr_callers; i++)
		fprintf(out, "C %s\n", d->callers[i]);
	return ferror(out) ? -EIO : 0;
}
