// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * Decoding a recording (lib/events/decode.h).  Each thread's records are
 * read in the order its ring held them; the threads are merged by time
 * with a heap, so a recording of any length is decoded in one pass with
 * memory for one position per thread.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <fnmatch.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <fhook/internal/events.h>

#include "cxxname.h"
#include "decode.h"
#include "ev.h"
#include "recinfo.h"
#include "recorder/evdesc.h"
#include "recorder/ring.h"
#include "array.h"

#define DEC_MAX_DEPTH		(EV_DEPTH_MASK + 1)
#define DEC_SYM_CACHE		(1U << 14)

struct dec_file {
	struct dec_file *next;
	char *path;
	struct ev_file ef;	/* its symbols */
	bool have_syms;		/* from the recording, or read from the file */
	bool tried_disk;
	bool in_cxx;		/* its symbols are in dec->cxx */
};

struct dec_chunk {
	const unsigned char *p;
	size_t len;
};

/*
 * An open entry: its shadow-stack slot, or 0 for a probe without one (a
 * kprobe's 'p' with its 'r'), which an exit of the same function closes.
 */
#define DEC_ALIASES	3

struct dframe {
	uint64_t ip;
	uint32_t slot;
	uint32_t def;
	/*
	 * The same call's entries by other probes on the function (traced whole
	 * and probed for its arguments): each has its own slot, one above the
	 * other, and their exits come back in turn.
	 */
	uint32_t nr_alias;
	uint32_t alias_slot[DEC_ALIASES];
	uint32_t alias_def[DEC_ALIASES];
};

/* A thread as the decoder walks it. */
struct dthr {
	struct dec_thread pub;
	struct dec_chunk *chunks;
	size_t nr_chunks, cap_chunks, ci, pos;
	/*
	 * During dec_flush_ends(): the current chunk from the next record on
	 * (NULL when none is left), ahead of pos, which the slow walk syncs.
	 */
	const unsigned char *rp, *rend;
	uint64_t ts;		/* the full time of the last record */
	uint64_t proc_seq;	/* its process image, found when first needed */
	uint32_t cpu;
	struct dframe *stack;	/* the open entries, outermost first */
	size_t nr_stack, cap_stack;
	/* the exit last paired: further exit events of the same return share it */
	uint32_t closed_slot, closed_depth;
	uint32_t closed_alias[DEC_ALIASES];	/* the closed call's other slots */
	uint32_t closed_nr_alias;
	uint64_t closed_ip;
	/* the thread's last event: a second event of the same entry or exit joins it */
	uint32_t last_def;
	bool last_was_entry, last_was_exit;
	struct dec_event cur;	/* the next event, when have_cur */
	bool have_cur;
};

/* C++ names, demangled once per symbol (lib/events/cxxname.h). */
struct dec_demangled {
	struct dec_demangled *next;
	const char *mangled;
	char *name;		/* in the mode shown; NULL: not yet */
	char *forms[2];		/* short and template forms, for globs; NULL: not yet */
	bool have_forms;
};

#define DEC_DEMANGLE_BUCKETS	(1U << 12)

struct dec_cache {
	const struct dec_proc *proc;
	uint64_t addr;
	struct dec_sym sym;
	bool valid;
};

struct dec {
	/* dec_set_block_hook(): told of every whole block dec_read_file() reads */
	dec_block_fn block_hook;
	void *block_ctx;
	bool truncated;
	struct dec_event_def *defs;
	int nr_defs;
	struct rf_clock clock;
	bool have_clock;
	double tsc_ns;		/* ns per TSC tick */
	struct dec_proc **procs;	/* by seq */
	size_t procs_cap;
	struct dthr **threads;	/* by number */
	size_t threads_cap;
	struct dec_file *files;
	struct rf_end end;
	bool have_end;
	uint64_t bad, lost_inband;
	struct dthr **heap;
	size_t nr_heap;
	struct dec_cache *cache;
	struct dec_demangled **demangled;
	enum dec_demangle demangle;
	/* the recording's symbols, for short names that tell functions apart */
	struct cxx_set *cxx;
	bool cxx_stale;		/* a file's symbols came after it was filled */
	/* names shown before a change of mode or of symbols: a caller may hold them */
	char **old_names;
	size_t nr_old_names, cap_old_names;
	void *map;
	size_t map_len;
	struct rec_info info;	/* RF_INFO, when info.valid */
};

struct dec *dec_new(void)
{
	struct dec *d = calloc(1, sizeof(*d));

	if (d && !(d->cache = calloc(DEC_SYM_CACHE, sizeof(*d->cache)))) {
		free(d);
		return NULL;
	}
	return d;
}

static void free_file(struct dec_file *f)
{
	free(f->path);
	free(f->ef.syms);
	free(f->ef.names);
	free(f);
}

void dec_free(struct dec *d)
{
	uint64_t i;
	int k;

	if (!d)
		return;
	for (k = 0; k < d->nr_defs; k++) {
		int a;

		for (a = 0; a < d->defs[k].nr_args; a++)
			free(d->defs[k].args[a].name);
		free(d->defs[k].args);
		free(d->defs[k].group);
		free(d->defs[k].event);
		free(d->defs[k].symbol);
	}
	free(d->defs);
	for (i = 0; i < d->procs_cap; i++) {
		if (d->procs[i])
			free(d->procs[i]->objs);
		free(d->procs[i]);
	}
	free(d->procs);
	for (i = 0; i < d->threads_cap; i++) {
		struct dthr *t = d->threads[i];

		if (!t)
			continue;
		free(t->chunks);
		free(t->stack);
		free(t);
	}
	free(d->threads);
	while (d->files) {
		struct dec_file *f = d->files;

		d->files = f->next;
		free_file(f);
	}
	free(d->heap);
	free(d->cache);
	if (d->demangled) {
		for (k = 0; k < (int)DEC_DEMANGLE_BUCKETS; k++) {
			while (d->demangled[k]) {
				struct dec_demangled *m = d->demangled[k];

				d->demangled[k] = m->next;
				free(m->name);
				free(m->forms[0]);
				free(m->forms[1]);
				free(m);
			}
		}
		free(d->demangled);
	}
	cxx_set_free(d->cxx);
	while (d->nr_old_names)
		free(d->old_names[--d->nr_old_names]);
	free(d->old_names);
	if (d->map)
		munmap(d->map, d->map_len);
	free(d);
}

/* ---- blocks ------------------------------------------------------------ */

/*
 * The events (RF_EVENTS): the description the traced processes ran
 * (lib/recorder/evdesc.h), of which a reader keeps the names, the symbol
 * as the user wrote it and the arguments' types.
 */
static int parse_events(struct dec *d, const char *text, uint32_t len)
{
	struct ev_desc desc;
	int i, j, k, r;

	r = ev_desc_parse(text, len, &desc);
	if (r)
		return r;
	r = -EINVAL;
	if ((unsigned int)desc.nr_evs > EV_ID_MAX)
		goto out;
	r = -ENOMEM;
	d->defs = calloc(desc.nr_evs ? desc.nr_evs : 1, sizeof(*d->defs));
	if (!d->defs)
		goto out;
	for (i = 0; i < desc.nr_evs; i++) {
		struct ev_desc_event *e = &desc.evs[i];
		struct dec_event_def *def = &d->defs[d->nr_defs++];
		bool mod = e->kprobe && e->module;

		def->id = e->id;
		def->is_return = e->is_return;
		def->group = e->group;
		def->event = e->event;
		e->group = e->event = NULL;
		/* MOD:SYM+OFFS, as the definition named it */
		if (asprintf(&def->symbol, "%s%s%s", mod ? e->module : "", mod ? ":" : "",
			     e->symbol) < 0)
			def->symbol = NULL;
		if (def->symbol && e->kprobe && e->offset) {
			char *t = def->symbol;

			if (asprintf(&def->symbol, "%s+%lu", t, e->offset) < 0)
				def->symbol = NULL;
			free(t);
		}
		def->args = calloc(e->nr_args ? e->nr_args : 1, sizeof(*def->args));
		if (!def->symbol || !def->args)
			goto out;
		for (k = 0; k < e->nr_args; k++, def->nr_args++) {
			def->args[k].name = e->args[k].name;
			e->args[k].name = NULL;
			def->args[k].type = e->args[k].type;
			def->args[k].count = e->args[k].count;
		}
	}
	r = 0;
	/* an entry and a return event on the same symbol make a slice: the first of each */
	for (i = 0; i < d->nr_defs; i++) {
		bool first = true, other = false;

		for (j = 0; j < d->nr_defs; j++) {
			if (strcmp(d->defs[i].symbol, d->defs[j].symbol))
				continue;
			if (j < i && d->defs[i].is_return == d->defs[j].is_return)
				first = false;
			if (d->defs[i].is_return != d->defs[j].is_return)
				other = true;
		}
		d->defs[i].is_slice = first && other;
	}
out:
	ev_desc_free(&desc);
	return r;
}

static struct dec_file *file_get(struct dec *d, const char *path)
{
	struct dec_file *f;

	for (f = d->files; f; f = f->next)
		if (!strcmp(f->path, path))
			return f;
	f = calloc(1, sizeof(*f));
	if (!f)
		return NULL;
	f->path = strdup(path);
	if (!f->path) {
		free(f);
		return NULL;
	}
	f->ef.path = f->path;
	f->next = d->files;
	d->files = f;
	return f;
}

static int add_syms(struct dec *d, const unsigned char *p, uint32_t len)
{
	const struct rf_syms *h = (const void *)p;
	const struct rf_sym *s = (const void *)(h + 1);
	const char *path, *names;
	struct dec_file *f;
	uint64_t need;
	uint32_t i;
	char buf[4096];

	if (len < sizeof(*h))
		return -EINVAL;
	need = sizeof(*h) + (uint64_t)h->nr_syms * sizeof(*s) + h->path_len + h->build_id_len +
	       h->names_len;
	if (need > len || !h->path_len || h->path_len >= sizeof(buf))
		return -EINVAL;
	path = (const char *)(s + h->nr_syms);
	names = path + h->path_len + h->build_id_len;
	memcpy(buf, path, h->path_len);
	buf[h->path_len] = 0;
	f = file_get(d, buf);
	if (!f)
		return -ENOMEM;
	if (f->have_syms)
		return 0;
	f->ef.syms = calloc(h->nr_syms ? h->nr_syms : 1, sizeof(*f->ef.syms));
	f->ef.names = malloc(h->names_len + 1);
	if (!f->ef.syms || !f->ef.names)
		return -ENOMEM;
	memcpy(f->ef.names, names, h->names_len);
	f->ef.names[h->names_len] = 0;
	for (i = 0; i < h->nr_syms; i++) {
		struct ev_sym *e = &f->ef.syms[f->ef.nr_syms];

		if (s[i].name >= h->names_len)
			continue;
		/* ev_file_sym_at() searches by address: keep them sorted, as written */
		if (f->ef.nr_syms && e[-1].addr > s[i].addr)
			continue;
		e->addr = s[i].addr;
		e->size = s[i].size;
		e->name = f->ef.names + s[i].name;
		e->func = true;
		f->ef.nr_syms++;
	}
	f->have_syms = true;
	d->cxx_stale = true;
	return 0;
}

static int add_proc(struct dec *d, const unsigned char *p, uint32_t len)
{
	const struct rf_proc *h = (const void *)p;
	const struct rf_obj *o = (const void *)(h + 1);
	struct dec_proc *dp;
	uint32_t i;

	if (len < sizeof(*h) || h->nr_objs > EV_MAX_OBJS ||
	    len < sizeof(*h) + (uint64_t)h->nr_objs * sizeof(*o) || !h->seq || h->seq > (1U << 24))
		return -EINVAL;
	if (ev_array_fit(&d->procs, &d->procs_cap, h->seq, sizeof(*d->procs)))
		return -ENOMEM;
	dp = d->procs[h->seq];
	if (dp) {
		/*
		 * The same process image again: it loaded or unloaded objects
		 * (dlopen, dlclose).  Objects are only added: the records
		 * written while an object was loaded still need it after its
		 * dlclose.  An address later reused by another object names
		 * the newer one.
		 */
		struct dec_obj *no = realloc(dp->objs, (dp->nr_objs + h->nr_objs + 1) * sizeof(*no));

		if (!no)
			return -ENOMEM;
		dp->objs = no;
		memset(d->cache, 0, DEC_SYM_CACHE * sizeof(*d->cache));
	} else {
		dp = calloc(1, sizeof(*dp));
		if (!dp || !(dp->objs = calloc(h->nr_objs ? h->nr_objs : 1, sizeof(*dp->objs)))) {
			free(dp);
			return -ENOMEM;
		}
		d->procs[h->seq] = dp;
	}
	dp->seq = h->seq;
	dp->pid = h->pid;
	for (i = 0; i < h->nr_objs; i++) {
		char path[sizeof(o[i].path)];
		struct dec_file *f;
		uint32_t k;

		memcpy(path, o[i].path, sizeof(path));
		path[sizeof(path) - 1] = 0;
		f = file_get(d, path);
		if (!f)
			continue;
		for (k = 0; k < dp->nr_objs; k++)
			if (dp->objs[k].base == o[i].base && dp->objs[k].file == f)
				break;
		if (k < dp->nr_objs)
			continue;
		dp->objs[dp->nr_objs].base = o[i].base;
		dp->objs[dp->nr_objs].file = f;
		dp->nr_objs++;
	}
	return 0;
}

static struct dthr *thread_get(struct dec *d, uint32_t num)
{
	if (num >= (1U << 24))
		return NULL;
	if (ev_array_fit(&d->threads, &d->threads_cap, num, sizeof(*d->threads)))
		return NULL;
	return d->threads[num];
}

static int add_thread(struct dec *d, const unsigned char *p, uint32_t len)
{
	const struct rf_thread *h = (const void *)p;
	struct dthr *t;

	if (len < sizeof(*h))
		return -EINVAL;
	t = thread_get(d, h->thread);
	if (!t && h->thread < d->threads_cap) {
		t = calloc(1, sizeof(*t));
		if (!t)
			return -ENOMEM;
		d->threads[h->thread] = t;
	}
	if (!t)
		return -EINVAL;
	t->pub.num = h->thread;
	t->cur.thr = &t->pub;	/* thr_event_plain() leaves it */
	t->pub.pid = h->pid;
	t->pub.tid = h->tid;
	memcpy(t->pub.comm, h->comm, sizeof(t->pub.comm));
	t->pub.comm[sizeof(t->pub.comm) - 1] = 0;
	t->proc_seq = h->proc_seq;
	/* the process may be announced after its thread: looked up again later */
	t->pub.proc = h->proc_seq < d->procs_cap ? d->procs[h->proc_seq] : NULL;
	return 0;
}

static int add_data(struct dec *d, const unsigned char *p, uint32_t len)
{
	const struct rf_data *h = (const void *)p;
	struct dthr *t;

	if (len < sizeof(*h))
		return -EINVAL;
	t = thread_get(d, h->thread);
	if (!t)
		return -EINVAL;	/* data of a thread never announced */
	if (t->nr_chunks == t->cap_chunks) {
		size_t cap = t->cap_chunks ? 2 * t->cap_chunks : 8;
		struct dec_chunk *nc = realloc(t->chunks, cap * sizeof(*nc));

		if (!nc)
			return -ENOMEM;
		t->chunks = nc;
		t->cap_chunks = cap;
	}
	t->chunks[t->nr_chunks].p = p + sizeof(*h);
	t->chunks[t->nr_chunks++].len = len - sizeof(*h);
	return 0;
}

int dec_block(struct dec *d, uint32_t type, const void *payload, uint32_t len)
{
	const unsigned char *p = payload;

	switch (type) {
	case RF_EVENTS:
		return d->defs ? -EINVAL : parse_events(d, payload, len);
	case RF_CLOCK:
		if (len < sizeof(d->clock))
			return -EINVAL;
		memcpy(&d->clock, p, sizeof(d->clock));
		if (d->clock.kind == EV_CLOCK_TSC) {
			if (d->clock.tsc1 <= d->clock.tsc0 || d->clock.mono1 <= d->clock.mono0)
				return -EINVAL;
			d->tsc_ns = (double)(d->clock.mono1 - d->clock.mono0) /
				    (double)(d->clock.tsc1 - d->clock.tsc0);
		} else if (d->clock.kind != EV_CLOCK_MONO) {
			return -EINVAL;
		}
		d->have_clock = true;
		return 0;
	case RF_PROC:
		return add_proc(d, p, len);
	case RF_SYMS:
		return add_syms(d, p, len);
	case RF_THREAD:
		return add_thread(d, p, len);
	case RF_DATA:
		return add_data(d, p, len);
	case RF_END:
		if (len < sizeof(d->end))
			return -EINVAL;
		memcpy(&d->end, p, sizeof(d->end));
		d->have_end = true;
		return 0;
	case RF_INFO:
		return dec_info_parse(&d->info, p, len);
	default:
		return 0;	/* a later version's block: skipped */
	}
}

/* ---- records ----------------------------------------------------------- */

static inline uint64_t load64(const unsigned char *p)
{
	uint64_t v;

	memcpy(&v, p, 8);
	return v;
}

/* The full time of a record whose low 48 bits are @low, near @prev. */
static inline uint64_t extend_ts(uint64_t prev, uint64_t low)
{
	uint64_t cand = (prev & ~EV_TS_MASK) | low;

	if (cand > prev && cand - prev > (1ULL << (EV_TS_BITS - 1)) && cand >= (1ULL << EV_TS_BITS))
		cand -= 1ULL << EV_TS_BITS;
	else if (cand < prev && prev - cand > (1ULL << (EV_TS_BITS - 1)))
		cand += 1ULL << EV_TS_BITS;
	return cand;
}

static inline uint64_t to_ns(struct dec *d, uint64_t ts)
{
	if (d->clock.kind == EV_CLOCK_TSC)
		return d->clock.mono0 + (uint64_t)((double)(int64_t)(d->clock.base + ts -
								      d->clock.tsc0) * d->tsc_ns);
	return d->clock.base + ts;
}

/*
 * An entry at shadow-stack slot @slot: the frames at or above that slot
 * are gone without an exit (longjmp, a lost exit), and so is every frame
 * above them.  Slots grow from the bottom of the stack up; frames without
 * a slot between them stay where they are.
 */
static void open_entry(struct dthr *t, uint32_t slot, uint64_t ip, uint32_t def,
		       uint32_t *depth)
{
	size_t k = t->nr_stack, cut = t->nr_stack;

	if (t->last_was_entry && k && t->stack[k - 1].slot && t->stack[k - 1].ip == ip &&
	    slot > t->stack[k - 1].slot && t->stack[k - 1].def != def) {
		struct dframe *top = &t->stack[k - 1];
		int i;

		for (i = 0; i < (int)top->nr_alias; i++)
			if (top->alias_def[i] == def)
				break;
		if (i == (int)top->nr_alias && i < DEC_ALIASES) {
			/* another probe's entry of the same call */
			top->alias_slot[i] = slot;
			top->alias_def[i] = def;
			top->nr_alias++;
			*depth = k - 1;
			return;
		}
	}
	while (k) {
		const struct dframe *fr = &t->stack[k - 1];

		if (fr->slot && fr->slot < slot)
			break;
		if (fr->slot)
			cut = k - 1;
		k--;
	}
	t->nr_stack = cut;
	*depth = cut;
	if (cut < DEC_MAX_DEPTH &&
	    !ev_array_fit(&t->stack, &t->cap_stack, cut, sizeof(*t->stack))) {
		t->stack[cut].ip = ip;
		t->stack[cut].slot = slot;
		t->stack[cut].def = def;
		t->stack[cut].nr_alias = 0;
		t->nr_stack = cut + 1;
	}
	t->closed_slot = 0;
}

/* The exit at slot @slot: the function it returns from (0: not open) and its depth. */
static uint64_t close_entry(struct dthr *t, uint32_t slot, uint32_t *depth)
{
	size_t k = t->nr_stack;

	int i;

	while (k && (!t->stack[k - 1].slot || t->stack[k - 1].slot > slot))
		k--;
	if (k) {
		const struct dframe *fr = &t->stack[k - 1];
		bool hit = fr->slot == slot;

		for (i = 0; i < (int)fr->nr_alias; i++)
			hit |= fr->alias_slot[i] == slot;
		if (hit) {
			t->nr_stack = k - 1;
			*depth = k - 1;
			t->closed_slot = fr->slot;
			t->closed_nr_alias = fr->nr_alias;
			for (i = 0; i < (int)fr->nr_alias; i++)
				t->closed_alias[i] = fr->alias_slot[i];
			t->closed_depth = k - 1;
			t->closed_ip = fr->ip;
			return t->closed_ip;
		}
	}
	if (t->closed_slot) {
		bool hit = slot == t->closed_slot;

		for (i = 0; i < (int)t->closed_nr_alias; i++)
			hit |= t->closed_alias[i] == slot;
		if (hit) {
			*depth = t->closed_depth;
			return t->closed_ip;
		}
	}
	*depth = t->nr_stack;
	return 0;
}

/*
 * An entry without a slot whose event has an exit event (a kprobe 'p' with
 * its 'r'): pushed, to be closed by an exit of the same function.  A second
 * event of another definition right after it on the same function (two
 * probes on one function) is the same call.
 */
static void open_slotless(struct dthr *t, uint64_t ip, uint32_t def, uint32_t *depth)
{
	size_t n = t->nr_stack;

	if (t->last_was_entry && n && !t->stack[n - 1].slot && t->stack[n - 1].ip == ip &&
	    t->stack[n - 1].def != def) {
		*depth = n - 1;
		return;
	}
	*depth = n;
	if (n < DEC_MAX_DEPTH && !ev_array_fit(&t->stack, &t->cap_stack, n, sizeof(*t->stack))) {
		t->stack[n].ip = ip;
		t->stack[n].slot = 0;
		t->stack[n].def = def;
		t->stack[n].nr_alias = 0;
		t->nr_stack = n + 1;
	}
	t->closed_slot = 0;
}

/*
 * An exit without a slot, of function @ip: it closes the innermost open
 * entry of @ip without a slot, and every frame above it (their exits were
 * lost: a kretprobe out of instances).  An exit of no open entry leaves
 * the stack as it is.
 */
static bool close_slotless(struct dthr *t, uint64_t ip, uint32_t def, uint32_t *depth)
{
	size_t k = t->nr_stack;

	if (t->last_was_exit && !t->closed_slot && t->closed_ip == ip && t->last_def != def) {
		*depth = t->closed_depth;
		return true;
	}
	while (k && (t->stack[k - 1].slot || t->stack[k - 1].ip != ip))
		k--;
	if (!k) {
		*depth = t->nr_stack;
		t->closed_ip = 0;
		return false;
	}
	t->nr_stack = k - 1;
	*depth = k - 1;
	t->closed_slot = 0;
	t->closed_depth = k - 1;
	t->closed_ip = ip;
	return true;
}

static bool thr_next_slow(struct dec *d, struct dthr *t);
static bool thr_event_short(struct dec *d, struct dthr *t, uint32_t id, uint64_t w1,
			    const unsigned char *p);

/* Drop the rest of the current chunk: it does not parse. */
static void bad_chunk(struct dec *d, struct dthr *t)
{
	d->bad++;
	t->ci++;
	t->pos = 0;
}

/*
 * Fill @t's next event from a record of event @id: @w1 its second word,
 * @p the record, @ext_len its length, @flags its payload's flags.
 */
static __attribute__((always_inline)) inline bool
thr_event(struct dec *d, struct dthr *t, uint32_t id, uint64_t w1, const unsigned char *p,
	  uint64_t ext_len, uint64_t flags)
{
	struct dec_event *ev = &t->cur;
	uint32_t slot;

	ev->ip = 0;
	ev->ret_ip = 0;
	ev->args = NULL;
	ev->args_len = 0;
	if (__builtin_expect(!t->pub.proc && t->proc_seq, 0) && t->proc_seq < d->procs_cap)
		t->pub.proc = d->procs[t->proc_seq];
	ev->def = &d->defs[id];
	ev->thr = &t->pub;
	ev->ts = to_ns(d, t->ts);
	ev->cpu = t->cpu;
	ev->unwound = !!(w1 & EV_W1_UNWOUND);
	slot = (uint32_t)(w1 >> 48) & EV_DEPTH_MASK;
	if (ext_len > 16) {
		ev->args = p + 24;
		ev->args_len = ext_len - 24;
		if (flags & EV_W2_IP) {
			ev->ip = load64(ev->args);
			ev->args += 8;
			ev->args_len -= 8;
		}
	}
	if (!ev->def->is_return) {
		ev->ip = w1 & EV_ADDR_MASK;
		if (slot)
			open_entry(t, slot, ev->ip, id, &ev->depth);
		else if (ev->def->is_slice)
			open_slotless(t, ev->ip, id, &ev->depth);
		else
			ev->depth = t->nr_stack;
	} else {
		uint64_t ip = slot ? close_entry(t, slot, &ev->depth) : 0;

		ev->ret_ip = w1 & EV_ADDR_MASK;
		if (!ev->ip)
			ev->ip = ip;
		if (!slot && !(ev->def->is_slice && ev->ip &&
			       close_slotless(t, ev->ip, id, &ev->depth)))
			ev->depth = t->nr_stack;
	}
	t->last_def = id;
	t->last_was_entry = !ev->def->is_return;
	t->last_was_exit = ev->def->is_return;
	t->pub.events++;
	return true;
}

/*
 * A 16-byte record of event @id with a shadow-stack slot that opens a frame
 * right above the top one, or closes the top one (no other probe's entry
 * on it): what nearly every record of a function traced whole is.  False
 * when it is anything else, with nothing changed.
 */
static __attribute__((always_inline)) inline bool
thr_event_plain(struct dec *d, struct dthr *t, uint32_t id, uint64_t w1)
{
	const struct dec_event_def *def = &d->defs[id];
	struct dec_event *ev = &t->cur;
	uint32_t slot = (uint32_t)(w1 >> 48) & EV_DEPTH_MASK;
	size_t n = t->nr_stack;
	const struct dframe *top = n ? &t->stack[n - 1] : NULL;
	uint64_t addr = w1 & EV_ADDR_MASK;

	if (!slot || __builtin_expect(!t->pub.proc && t->proc_seq, 0))
		return false;
	if (!def->is_return) {
		struct dframe *fr;

		/* a slotless frame, one to cut, or another probe's entry of the top call */
		if (top && (!top->slot || top->slot >= slot ||
			    (t->last_was_entry && top->ip == addr && top->def != id)))
			return false;
		if (__builtin_expect(n >= t->cap_stack || n >= DEC_MAX_DEPTH, 0))
			return false;
		fr = &t->stack[n];
		fr->ip = addr;
		fr->slot = slot;
		fr->def = id;
		fr->nr_alias = 0;
		t->nr_stack = n + 1;
		t->closed_slot = 0;
		ev->ip = addr;
		ev->ret_ip = 0;
		ev->depth = n;
	} else {
		if (!top || top->slot != slot || top->nr_alias)
			return false;
		t->nr_stack = n - 1;
		t->closed_slot = slot;
		t->closed_nr_alias = 0;
		t->closed_depth = n - 1;
		t->closed_ip = top->ip;
		ev->ip = top->ip;
		ev->ret_ip = addr;
		ev->depth = n - 1;
	}
	ev->args = NULL;
	ev->args_len = 0;
	ev->def = def;
	ev->ts = to_ns(d, t->ts);
	/* ev->cpu: set by the record that changed it */
	ev->unwound = !!(w1 & EV_W1_UNWOUND);
	t->last_def = id;
	t->last_was_entry = !def->is_return;
	t->last_was_exit = def->is_return;
	t->pub.events++;
	return true;
}

/* Advance @t to its next event record; false when its queued data is done. */
static __attribute__((always_inline)) inline bool thr_next(struct dec *d, struct dthr *t)
{
	/*
	 * Nearly every record is 16 bytes of a known event: no padding, no
	 * ring record, no payload (ids of those are all >= any event's).
	 */
	if (__builtin_expect((uintptr_t)t->rend - (uintptr_t)t->rp >= 16, 1)) {
		const unsigned char *p = t->rp;
		uint64_t w0 = load64(p);
		uint32_t id = ev_w0_id(w0);

		if (id < (uint32_t)d->nr_defs) {
			uint64_t w1 = load64(p + 8);

			__builtin_prefetch(p + 1024);
			t->rp = p + 16;
			t->ts = extend_ts(t->ts, w0 & EV_TS_MASK);
			if (thr_event_plain(d, t, id, w1))
				return true;
			return thr_event_short(d, t, id, w1, p);
		}
	}
	return thr_next_slow(d, t);
}

/* rp and rend from ci and pos */
static void thr_sync(struct dthr *t)
{
	if (t->ci < t->nr_chunks) {
		t->rp = t->chunks[t->ci].p + t->pos;
		t->rend = t->chunks[t->ci].p + t->chunks[t->ci].len;
	} else {
		t->rp = t->rend = NULL;
	}
}

static bool thr_walk(struct dec *d, struct dthr *t);

static __attribute__((noinline)) bool thr_next_slow(struct dec *d, struct dthr *t)
{
	bool ok;

	if (t->ci < t->nr_chunks)
		t->pos = t->rp - t->chunks[t->ci].p;
	ok = thr_walk(d, t);
	thr_sync(t);
	return ok;
}

/* thr_event() of a 16-byte record */
static __attribute__((noinline)) bool thr_event_short(struct dec *d, struct dthr *t, uint32_t id,
						       uint64_t w1, const unsigned char *p)
{
	return thr_event(d, t, id, w1, p, 16, 0);
}

/* thr_next() of any record, from ci and pos */
static bool thr_walk(struct dec *d, struct dthr *t)
{
	while (t->ci < t->nr_chunks) {
		const struct dec_chunk *c = &t->chunks[t->ci];
		const unsigned char *p = c->p + t->pos;
		size_t left = c->len - t->pos;
		uint64_t w0, w1, ext_len = 16, flags = 0;
		uint32_t id;

		if (left < 8) {
			if (left)
				d->bad++;
			t->ci++;
			t->pos = 0;
			continue;
		}
		/* the data is read once, in order: ask for it ahead of its use */
		__builtin_prefetch(p + 1024);
		w0 = load64(p);
		id = ev_w0_id(w0);
		if (id == EV_ID_PAD) {
			uint64_t skip = w0 & EV_TS_MASK;

			if (skip < 8 || skip % 8 || skip > left) {
				bad_chunk(d, t);
				continue;
			}
			t->pos += skip;
			continue;
		}
		if (left < 16) {
			bad_chunk(d, t);
			continue;
		}
		w1 = load64(p + 8);
		if (id >= EV_ID_SPECIAL) {
			t->pos += 16;
			switch (id) {
			case EV_ID_TIME: t->ts = w1; break;
			case EV_ID_CPU: t->cur.cpu = t->cpu = (uint32_t)w1; break;
			case EV_ID_LOST: d->lost_inband += w1; break;
			default: d->bad++; break;
			}
			continue;
		}
		if (id & EV_ID_EXT) {
			uint64_t w2;

			if (left < 24) {
				bad_chunk(d, t);
				continue;
			}
			w2 = load64(p + 16);
			ext_len = (uint32_t)w2;
			flags = w2 >> 32;
			if (ext_len < 24 || ext_len % 8 || ext_len > left ||
			    ((flags & EV_W2_IP) && ext_len < 32)) {
				bad_chunk(d, t);
				continue;
			}
		}
		t->pos += ext_len;
		t->ts = extend_ts(t->ts, w0 & EV_TS_MASK);
		id &= ~EV_ID_EXT;
		if (id >= (uint32_t)d->nr_defs) {
			d->bad++;
			continue;
		}
		return thr_event(d, t, id, w1, p, ext_len, flags);
	}
	return false;
}

static inline bool heap_less(const struct dthr *a, const struct dthr *b)
{
	if (a->cur.ts != b->cur.ts)
		return a->cur.ts < b->cur.ts;
	return a->pub.num < b->pub.num;
}

static void heap_down(struct dec *d, size_t i)
{
	for (;;) {
		size_t l = 2 * i + 1, m = i;
		struct dthr *tmp;

		if (l < d->nr_heap && heap_less(d->heap[l], d->heap[m]))
			m = l;
		if (l + 1 < d->nr_heap && heap_less(d->heap[l + 1], d->heap[m]))
			m = l + 1;
		if (m == i)
			return;
		tmp = d->heap[i];
		d->heap[i] = d->heap[m];
		d->heap[m] = tmp;
		i = m;
	}
}

int dec_flush(struct dec *d, dec_emit_fn emit, void *ctx)
{
	return dec_flush_ends(d, emit, NULL, ctx);
}

int dec_flush_ends(struct dec *d, dec_emit_fn emit, dec_end_fn end, void *ctx)
{
	uint32_t i;
	size_t k;
	int ret = 0;

	free(d->heap);
	d->heap = calloc(d->threads_cap ? d->threads_cap : 1, sizeof(*d->heap));
	if (!d->heap)
		return -ENOMEM;
	d->nr_heap = 0;
	for (i = 0; i < d->threads_cap; i++) {
		struct dthr *t = d->threads[i];

		if (!t)
			continue;
		thr_sync(t);
		if (t->ci < t->nr_chunks && thr_next(d, t))
			d->heap[d->nr_heap++] = t;
	}
	for (k = d->nr_heap / 2 + 1; k-- > 0;)
		heap_down(d, k);
	while (d->nr_heap) {
		struct dthr *t = d->heap[0];

		if (d->nr_heap == 1) {
			/* the last thread: nothing to merge with */
			do {
				if (__builtin_expect(!ret, 1))
					ret = emit(ctx, &t->cur);
			} while (thr_next(d, t));
		} else {
			if (!ret)
				ret = emit(ctx, &t->cur);
			if (thr_next(d, t)) {
				/* often still the first: a thread's events come in runs */
				if (heap_less(t, d->heap[1]) &&
				    (d->nr_heap == 2 || heap_less(t, d->heap[2])))
					continue;
				heap_down(d, 0);
				continue;
			}
		}
		if (end && !ret)
			ret = end(ctx, &t->pub);
		d->heap[0] = d->heap[--d->nr_heap];
		heap_down(d, 0);
	}
	/* the data is consumed: the caller may reuse it */
	for (i = 0; i < d->threads_cap; i++) {
		struct dthr *t = d->threads[i];

		if (t) {
			t->nr_chunks = 0;
			t->ci = 0;
			t->pos = 0;
			t->rp = t->rend = NULL;
		}
	}
	return ret;
}

/* ---- files ------------------------------------------------------------- */

/*
 * A recording that comes through a pipe (`fhook record -o - | fhook report
 * -`, /dev/stdin, a FIFO) is copied whole into memory first: it is read as
 * a mapping.  The copy replaces @fd.
 */
static int dec_spool(int *fd, struct stat *st)
{
	char buf[1 << 16];
	int mfd = memfd_create("fhook-recording", MFD_CLOEXEC);
	ssize_t n;

	if (mfd < 0)
		return -errno;
	for (;;) {
		n = read(*fd, buf, sizeof(buf));
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			break;
		if (write(mfd, buf, n) != n) {
			n = -1;
			break;
		}
	}
	if (n < 0 || fstat(mfd, st)) {
		int ret = -errno;

		close(mfd);
		return ret;
	}
	close(*fd);
	*fd = mfd;
	return 0;
}

int dec_read_file(struct dec *d, const char *path, bool *truncated)
{
	const struct rf_header *h;
	struct stat st;
	size_t off;
	int fd, ret;

	*truncated = false;
	fd = !strcmp(path, "-") ? fcntl(STDIN_FILENO, F_DUPFD_CLOEXEC, 0) :
				 open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	if (fstat(fd, &st)) {
		ret = -errno;
		close(fd);
		return ret;
	}
	if (S_ISDIR(st.st_mode)) {
		close(fd);
		return -EISDIR;
	}
	if (!S_ISREG(st.st_mode) && (ret = dec_spool(&fd, &st))) {
		close(fd);
		return ret;
	}
	if ((size_t)st.st_size < sizeof(*h)) {
		close(fd);
		return -EPROTO;
	}
	d->map = mmap(NULL, st.st_size, PROT_READ, MAP_PRIVATE, fd, 0);
	close(fd);
	if (d->map == MAP_FAILED) {
		d->map = NULL;
		return -errno;
	}
	d->map_len = st.st_size;
	madvise(d->map, d->map_len, MADV_SEQUENTIAL);
	h = d->map;
	if (memcmp(h->magic, RF_MAGIC, 8) || h->hdr_size < sizeof(*h) || h->hdr_size % 8 ||
	    h->hdr_size > d->map_len)
		return -EPROTO;
	if (h->version != RF_VERSION)
		return -EPROTONOSUPPORT;
	for (off = h->hdr_size; off < d->map_len;) {
		const struct rf_block *b = (const void *)((char *)d->map + off);

		/*
		 * (no block has type 0: zeros are a hole that a recorder
		 * killed while its buffers were on their way left behind)
		 */
		if (d->map_len - off < sizeof(*b) || !b->type ||
		    d->map_len - off - sizeof(*b) < b->len) {
			*truncated = true;
			d->truncated = true;
			break;
		}
		if (dec_block(d, b->type, b + 1, b->len) == -EINVAL)
			d->bad++;
		if (d->block_hook) {
			ret = d->block_hook(d->block_ctx, b->type, b + 1, b->len);
			if (ret)
				return ret;
		}
		off += sizeof(*b) + rf_align(b->len);
	}
	if (!d->nr_defs)
		return -EPROTO;
	return 0;
}

void dec_set_block_hook(struct dec *d, dec_block_fn fn, void *ctx)
{
	d->block_hook = fn;
	d->block_ctx = ctx;
}

size_t dec_file_size(struct dec *d)
{
	return d->map_len;
}

bool dec_truncated(struct dec *d)
{
	return d->truncated;
}

const struct dec_event_def *dec_events(struct dec *d, int *nr)
{
	*nr = d->nr_defs;
	return d->defs;
}

const struct rf_end *dec_end(struct dec *d)
{
	return d->have_end ? &d->end : NULL;
}

const struct rec_info *dec_info(struct dec *d)
{
	return d->info.valid ? &d->info : NULL;
}

uint64_t dec_bad_records(struct dec *d)
{
	return d->bad;
}

uint64_t dec_lost_inband(struct dec *d)
{
	return d->lost_inband;
}

/* ---- symbols ----------------------------------------------------------- */

/* A file the recording has no symbols of: read them from disk, once. */
static void file_syms_from_disk(struct dec_file *f)
{
	struct fhook_event_prog *p;

	f->tried_disk = true;
	p = fhook_event_prog_open(f->path, NULL, 0);
	if (!p)
		return;
	ev_file_load(&p->files[0]);
	/* take the symbols over; the rest of the program goes */
	f->ef.syms = p->files[0].syms;
	f->ef.nr_syms = p->files[0].nr_syms;
	f->ef.names = p->files[0].names;
	p->files[0].syms = NULL;
	p->files[0].names = NULL;
	p->files[0].nr_syms = 0;
	fhook_event_prog_close(p);
	f->have_syms = true;
}

/* @raw's cached names, made on first use; NULL on no memory. */
static struct dec_demangled *demangled_of(struct dec *d, const char *raw)
{
	struct dec_demangled *m;
	size_t h;

	if (!d->demangled && !(d->demangled = calloc(DEC_DEMANGLE_BUCKETS, sizeof(*d->demangled))))
		return NULL;
	h = ((uintptr_t)raw >> 3) * 0x9e3779b97f4a7c15ULL >> 52;
	for (m = d->demangled[h]; m; m = m->next)
		if (m->mangled == raw)
			return m;
	m = calloc(1, sizeof(*m));
	if (!m)
		return NULL;
	m->mangled = raw;
	m->next = d->demangled[h];
	d->demangled[h] = m;
	return m;
}

/*
 * Forget the names shown (the mode or the symbols changed): kept until
 * dec_free(), as a caller may still hold one; and the symbol cache that
 * points at them.
 */
static void forget_names(struct dec *d)
{
	struct dec_demangled *m;
	int k;

	for (k = 0; d->demangled && k < (int)DEC_DEMANGLE_BUCKETS; k++) {
		for (m = d->demangled[k]; m; m = m->next) {
			if (!m->name)
				continue;
			if (d->nr_old_names == d->cap_old_names) {
				size_t cap = d->cap_old_names ? 2 * d->cap_old_names : 256;
				char **n = realloc(d->old_names, cap * sizeof(*n));

				if (!n)
					continue;	/* then it stays: shown in the old form */
				d->old_names = n;
				d->cap_old_names = cap;
			}
			d->old_names[d->nr_old_names++] = m->name;
			m->name = NULL;
		}
	}
	memset(d->cache, 0, DEC_SYM_CACHE * sizeof(*d->cache));
}

/*
 * The recording's function symbols, all of them (a short name is ambiguous
 * because of a function never called): filled when a C++ name is first
 * shown, and again when a file's symbols came since (live, a dlopen).
 */
static struct cxx_set *recording_names(struct dec *d)
{
	struct dec_file *f;
	size_t i;

	if (d->cxx && !d->cxx_stale)
		return d->cxx;
	if (!d->cxx && !(d->cxx = cxx_set_new()))
		return NULL;
	for (f = d->files; f; f = f->next) {
		if (!f->have_syms && !f->tried_disk)
			file_syms_from_disk(f);
		if (!f->have_syms || f->in_cxx)
			continue;
		for (i = 0; i < f->ef.nr_syms; i++)
			if (f->ef.syms[i].func && cxx_set_add(d->cxx, f->ef.syms[i].name))
				return NULL;
		f->in_cxx = true;
	}
	if (d->cxx_stale) {
		/* names shown so far may now say too little: work them out again */
		d->cxx_stale = false;
		forget_names(d);
	}
	return d->cxx;
}

/* @raw as the mode shows it: a C name, and any name on no memory, as it is. */
static const char *demangle(struct dec *d, const char *raw)
{
	struct dec_demangled *m;
	const char *s;

	if (!cxx_mangled(raw) || d->demangle == DEC_DEMANGLE_NO)
		return raw;
	if (d->demangle == DEC_DEMANGLE_SHORT && d->cxx_stale)
		recording_names(d);
	m = demangled_of(d, raw);
	if (!m)
		return raw;
	if (m->name)
		return m->name;
	if (d->demangle == DEC_DEMANGLE_FULL) {
		/* as __cxa_demangle and c++filt write it (what fhook showed before short names) */
		m->name = cxx_name(raw, CXX_SIG);
	} else {
		struct cxx_set *set = recording_names(d);

		s = set ? cxx_set_short(set, raw) : NULL;
		m->name = s ? strdup(s) : cxx_name(raw, CXX_SHORT);
	}
	/* a name libiberty cannot read is shown as it is, and not read again */
	if (!m->name)
		m->name = strdup(raw);
	return m->name ? m->name : raw;
}

bool dec_symbolize(struct dec *d, const struct dec_thread *thr, uint64_t addr,
		   struct dec_sym *out)
{
	const struct dec_proc *p = thr ? thr->proc : NULL;
	struct dec_cache *c;
	const struct ev_sym *best = NULL;
	uint64_t best_base = 0;
	uint32_t i;

	out->name = NULL;
	out->raw = NULL;
	if (!p)
		return false;
	c = &d->cache[((addr >> 2) ^ (addr >> 17) ^ p->seq * 0x9e37) & (DEC_SYM_CACHE - 1)];
	if (c->valid && c->addr == addr && c->proc == p) {
		*out = c->sym;
		return out->name != NULL;
	}
	for (i = 0; i < p->nr_objs; i++) {
		const struct dec_obj *o = &p->objs[i];
		const struct ev_sym *s;

		if (o->base > addr || (best && o->base < best_base))
			continue;
		if (!o->file->have_syms && !o->file->tried_disk) {
			file_syms_from_disk(o->file);
			/* a file the short names have not seen */
			if (d->cxx)
				d->cxx_stale = true;
		}
		s = ev_file_sym_at(&o->file->ef, addr - o->base);
		if (s) {
			best = s;
			best_base = o->base;
		}
	}
	if (best) {
		out->raw = best->name;
		out->name = demangle(d, best->name);
		out->off = addr - best_base - best->addr;
		out->size = best->size;
	}
	c->valid = true;
	c->addr = addr;
	c->proc = p;
	c->sym = *out;
	return out->name != NULL;
}

void dec_set_demangle(struct dec *d, enum dec_demangle mode)
{
	if (mode == d->demangle)
		return;
	d->demangle = mode;
	forget_names(d);
}

/*
 * A glob names a function by what is its name: its short and template
 * forms, its mangled name; never by the types of its return value or
 * parameters.  The name shown counts too, written out whole (copied from
 * a report: "geo::scale(long, int)", a full signature), as no glob.
 */
bool dec_name_match(struct dec *d, const char *raw, const char *glob)
{
	struct dec_demangled *m;
	int i;

	if (!fnmatch(glob, raw, 0))
		return true;
	if (!cxx_mangled(raw))
		return false;
	m = demangled_of(d, raw);
	if (!m)
		return false;
	if (!m->have_forms) {
		char *forms[CXX_NR_FORMS];

		if (!cxx_names(raw, (1U << CXX_SHORT) | (1U << CXX_TEMPL), forms)) {
			m->forms[0] = forms[CXX_SHORT];
			m->forms[1] = forms[CXX_TEMPL];
		}
		m->have_forms = true;
	}
	for (i = 0; i < 2; i++)
		if (m->forms[i] && (!fnmatch(glob, m->forms[i], 0) || !strcmp(glob, m->forms[i])))
			return true;
	return !strcmp(glob, demangle(d, raw));
}
