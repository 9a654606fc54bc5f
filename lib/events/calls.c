// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * Calls from decoded events (lib/events/calls.h).
 *
 * Each thread has a stack of its open calls, mirroring the decoder's
 * depths: an entry at depth d finds the calls at d and above gone (their
 * exits were lost: a longjmp the tracer did not see, a kretprobe out of
 * instances), an exit at depth d closes the call there if it is the same
 * function.  Memory is one stack per thread, however long the recording.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fnmatch.h>
#include <stdlib.h>
#include <string.h>

#include "array.h"
#include "calls.h"

struct cframe {
	struct call c;
	uint32_t def;		/* the definition of its first entry event */
	uint64_t seq;		/* its number among its thread's calls */
	int anc;		/* the nearest shown call below it, -1: none */
	uint32_t kids_depth;	/* the depth its callees are shown at */
	uint32_t root_depth;	/* the depth of the -F call it is under */
	bool in_only;		/* under an -F function (or no -F) */
	bool hidden_sub;	/* under an -N function */
	bool shown;		/* shown at its entry */
};

struct cthr {
	struct cframe *st;
	size_t n, cap;
	uint64_t last_ts;
	uint64_t seq;		/* calls entered so far */
	/* the last event: a further event of the same entry or exit joins it */
	bool last_entry, last_exit;
	uint32_t last_def;
	size_t closed_pos;	/* where the call the last exit closed was on the stack:
				 * its frame stays there until the next entry */
	uint32_t closed_def;	/* the definition of its exit event */
	bool closed_valid;
	/* the first pass's verdicts: bit n set when call n took at least min_time */
	uint8_t *long_calls;
	size_t long_cap;
	bool wanted;		/* its tid is in --tid */
	bool seen;
	bool quick;		/* seen and wanted: its events may take calls_event()'s short way */
};

/* A function's verdict under -F and -N, by the name's address. */
struct cname {
	const char *name;
	uint8_t flags;
};

#define CN_ONLY		1
#define CN_HIDE		2
#define CN_BUCKETS	(1U << 12)

struct calls {
	struct dec *d;
	const struct call_filter *flt;
	struct call_filter none;
	const struct call_view *view;
	void *ctx;
	struct cthr *thr;
	size_t nr_thr;
	bool prepass, prepass_done;
	bool all;		/* no filter at all */
	bool fast;		/* all, and not the first pass: every call shown as it is */
	bool quick;		/* fast, no error, and the first event seen: the short way open */
	/* with quick: the thread of the last event that took the short way, and its state */
	const struct dec_thread *cur_thr;
	struct cthr *cur;
	bool have_t0;
	uint64_t t0, lo, hi;
	uint64_t unpaired, unfinished;
	struct cname *names;	/* open addressing */
	size_t nr_names, cap_names;
	int err;
};

struct calls *calls_new(struct dec *d, const struct call_filter *flt,
			const struct call_view *view, void *ctx)
{
	struct calls *cs = calloc(1, sizeof(*cs));

	if (!cs)
		return NULL;
	cs->d = d;
	cs->flt = flt ? flt : &cs->none;
	cs->view = view;
	cs->ctx = ctx;
	cs->hi = UINT64_MAX;
	cs->all = !cs->flt->nr_only && !cs->flt->nr_hide && !cs->flt->max_depth &&
		  !cs->flt->min_time && !cs->flt->have_range;
	cs->fast = cs->all;
	return cs;
}

void calls_free(struct calls *cs)
{
	size_t i;

	if (!cs)
		return;
	for (i = 0; i < cs->nr_thr; i++) {
		free(cs->thr[i].st);
		free(cs->thr[i].long_calls);
	}
	free(cs->thr);
	free(cs->names);
	free(cs);
}

bool calls_need_prepass(const struct calls *cs)
{
	return cs->flt->min_time && !cs->prepass_done;
}

void calls_rewind(struct calls *cs, struct dec *d)
{
	size_t i;

	cs->d = d;
	cs->prepass = false;
	cs->prepass_done = true;
	cs->fast = cs->all;
	cs->quick = false;
	cs->cur_thr = NULL;
	cs->unpaired = 0;
	cs->unfinished = 0;
	cs->have_t0 = false;
	/* names are by address in the old decoder's tables */
	free(cs->names);
	cs->names = NULL;
	cs->nr_names = cs->cap_names = 0;
	for (i = 0; i < cs->nr_thr; i++) {
		struct cthr *t = &cs->thr[i];

		t->n = 0;
		t->seq = 0;
		t->last_entry = t->last_exit = false;
		t->closed_valid = false;
		t->seen = false;
		t->quick = false;
	}
}

uint64_t calls_unpaired(const struct calls *cs)
{
	return cs->unpaired;
}

uint64_t calls_unfinished(const struct calls *cs)
{
	return cs->unfinished;
}

/* ---- names ------------------------------------------------------------- */

static bool any_match(struct calls *cs, const char *raw, const char **globs, int nr)
{
	int i;

	for (i = 0; i < nr; i++)
		if (dec_name_match(cs->d, raw, globs[i]))
			return true;
	return false;
}

static uint8_t match_flags(struct calls *cs, const char *name)
{
	uint8_t fl = 0;

	if (any_match(cs, name, cs->flt->only, cs->flt->nr_only))
		fl |= CN_ONLY;
	if (any_match(cs, name, cs->flt->hide, cs->flt->nr_hide))
		fl |= CN_HIDE;
	return fl;
}

static uint8_t name_flags(struct calls *cs, const struct dec_thread *thr, uint64_t ip)
{
	const struct call_filter *flt = cs->flt;
	struct dec_sym s;
	size_t h, mask;
	uint8_t fl;

	if (!flt->nr_only && !flt->nr_hide)
		return 0;
	if (!dec_symbolize(cs->d, thr, ip, &s))
		return 0;	/* an address: no glob names it */
	if (cs->nr_names * 2 >= cs->cap_names) {
		size_t cap = cs->cap_names ? 2 * cs->cap_names : CN_BUCKETS, i;
		struct cname *nn = calloc(cap, sizeof(*nn));

		if (!nn)
			goto compute;	/* not cached, still right */
		for (i = 0; i < cs->cap_names; i++) {
			if (!cs->names[i].name)
				continue;
			h = ((uintptr_t)cs->names[i].name >> 3) * 0x9e3779b97f4a7c15ULL;
			while (nn[h & (cap - 1)].name)
				h++;
			nn[h & (cap - 1)] = cs->names[i];
		}
		free(cs->names);
		cs->names = nn;
		cs->cap_names = cap;
	}
	mask = cs->cap_names - 1;
	for (h = ((uintptr_t)s.raw >> 3) * 0x9e3779b97f4a7c15ULL; cs->names[h & mask].name; h++)
		if (cs->names[h & mask].name == s.raw)
			return cs->names[h & mask].flags;
	fl = match_flags(cs, s.raw);
	cs->names[h & mask].name = s.raw;
	cs->names[h & mask].flags = fl;
	cs->nr_names++;
	return fl;
compute:
	return match_flags(cs, s.raw);
}

/* ---- threads and frames ------------------------------------------------ */

static struct cthr *thr_get(struct calls *cs, const struct dec_thread *thr)
{
	struct cthr *t;
	int i;

	cs->cur_thr = NULL;	/* the array may move */
	if (ev_array_fit(&cs->thr, &cs->nr_thr, thr->num, sizeof(*cs->thr)))
		return NULL;
	t = &cs->thr[thr->num];
	if (!t->seen) {
		t->seen = true;
		t->wanted = !cs->flt->nr_tids;
		for (i = 0; i < cs->flt->nr_tids; i++)
			if (cs->flt->tids[i] == thr->tid)
				t->wanted = true;
	}
	return t;
}

static bool is_long(const struct cthr *t, uint64_t seq)
{
	return seq / 8 < t->long_cap && (t->long_calls[seq / 8] & (1U << (seq % 8)));
}

static void mark_long(struct cthr *t, uint64_t seq)
{
	if (ev_array_fit(&t->long_calls, &t->long_cap, seq / 8, 1))
		return;
	t->long_calls[seq / 8] |= 1U << (seq % 8);
}

/* What an entry's callees inherit, and whether it is shown. */
static void frame_place(struct calls *cs, struct cthr *t, struct cframe *fr, size_t at)
{
	const struct call_filter *flt = cs->flt;
	const struct cframe *up = at ? &t->st[at - 1] : NULL;
	uint32_t depth = up ? up->kids_depth : 0;
	uint8_t fl;

	if (cs->all) {
		/* no filter: every call shown, one deeper than its caller */
		fr->anc = at ? (int)at - 1 : -1;
		fr->hidden_sub = false;
		fr->in_only = true;
		fr->root_depth = 0;
		fr->shown = true;
		fr->c.depth = depth;
		fr->kids_depth = depth + 1;
		return;
	}
	fl = name_flags(cs, fr->c.thr, fr->c.ip);

	fr->anc = up ? (up->shown ? (int)at - 1 : up->anc) : -1;
	fr->hidden_sub = (up && up->hidden_sub) || (fl & CN_HIDE);
	if (!flt->nr_only) {
		fr->in_only = true;
		fr->root_depth = 0;
	} else if (up && up->in_only) {
		fr->in_only = true;
		fr->root_depth = up->root_depth;
	} else {
		fr->in_only = fl & CN_ONLY;
		fr->root_depth = depth;
	}
	fr->shown = fr->in_only && !fr->hidden_sub &&
		    (!flt->max_depth || depth - fr->root_depth < flt->max_depth) &&
		    fr->c.start >= cs->lo && fr->c.start <= cs->hi &&
		    (!flt->min_time || cs->prepass || !cs->prepass_done || is_long(t, fr->seq));
	fr->c.depth = depth;
	fr->kids_depth = depth + fr->shown;
}

/*
 * Close the call on top of @t's stack by its exit event @ev, with no
 * filter and not in the first pass: the common case, kept short.
 */
static inline int frame_close_fast(struct calls *cs, struct cthr *t, const struct dec_event *ev)
{
	struct cframe *fr = &t->st[--t->n];
	uint64_t dur;

	fr->c.end = ev->ts > fr->c.start ? ev->ts : fr->c.start;
	fr->c.unwound = ev->unwound;
	fr->c.shown = true;
	dur = fr->c.end - fr->c.start;
	if (fr->anc >= 0)
		t->st[fr->anc].c.child += dur;
	t->closed_pos = t->n;
	t->closed_def = ev->def->id;
	t->closed_valid = true;
	return cs->view->exit ? cs->view->exit(cs->ctx, &fr->c, ev) : 0;
}

/* Close the call on top of @t's stack at @ts; @ev its exit event or NULL. */
static int frame_close(struct calls *cs, struct cthr *t, uint64_t ts, const struct dec_event *ev)
{
	struct cframe *fr = &t->st[--t->n];
	uint64_t dur;
	int ret = 0;

	fr->c.end = ts > fr->c.start ? ts : fr->c.start;
	fr->c.unfinished = !ev;
	fr->c.unwound = ev && ev->unwound;
	dur = fr->c.end - fr->c.start;
	if (!ev && fr->shown && !cs->prepass)
		cs->unfinished++;
	if (cs->prepass) {
		if (dur >= cs->flt->min_time)
			mark_long(t, fr->seq);
	} else if (fr->shown) {
		fr->c.shown = !cs->flt->min_time || dur >= cs->flt->min_time;
		if (fr->c.shown && fr->anc >= 0)
			t->st[fr->anc].c.child += dur;
		if (cs->view->exit)
			ret = cs->view->exit(cs->ctx, &fr->c, ev);
	}
	t->closed_pos = t->n;
	t->closed_def = ev ? ev->def->id : 0;
	t->closed_valid = !!ev;
	return ret;
}

/* Frames from @depth up are gone: closed unfinished at the thread's last event. */
static int cut_to(struct calls *cs, struct cthr *t, size_t depth)
{
	int ret = 0;

	while (t->n > depth && !ret)
		ret = frame_close(cs, t, t->last_ts, NULL);
	return ret;
}

static int on_entry_ev(struct calls *cs, struct cthr *t, const struct dec_event *ev)
{
	uint32_t id = ev->def->id;
	struct cframe *fr;
	int ret;

	if (t->last_entry && t->n && t->n - 1 == ev->depth && t->st[t->n - 1].c.ip == ev->ip &&
	    t->st[t->n - 1].def != id) {
		fr = &t->st[t->n - 1];
		if (fr->shown && !cs->prepass && cs->view->enter_more)
			return cs->view->enter_more(cs->ctx, &fr->c, ev);
		return 0;
	}
	if (__builtin_expect(t->n > ev->depth, 0)) {
		ret = cut_to(cs, t, ev->depth);
		if (ret)
			return ret;
	}
	if (__builtin_expect(t->n >= t->cap, 0) &&
	    ev_array_fit(&t->st, &t->cap, t->n, sizeof(*t->st)))
		return -ENOMEM;
	fr = &t->st[t->n];
	fr->c.thr = ev->thr;
	fr->c.ip = ev->ip;
	fr->c.start = ev->ts;
	fr->c.end = 0;
	fr->c.child = 0;
	fr->c.unfinished = fr->c.unwound = fr->c.shown = false;
	fr->c.priv[0] = fr->c.priv[1] = NULL;
	fr->def = id;
	fr->seq = t->seq++;
	if (cs->fast) {
		/* every call shown, one deeper than its caller */
		fr->anc = (int)t->n - 1;
		fr->shown = true;
		fr->c.depth = t->n ? t->st[t->n - 1].kids_depth : 0;
		fr->kids_depth = fr->c.depth + 1;
		fr->c.up = t->n ? &t->st[t->n - 1].c : NULL;
		t->n++;
		return cs->view->enter ? cs->view->enter(cs->ctx, &fr->c, ev) : 0;
	}
	frame_place(cs, t, fr, t->n);
	fr->c.up = fr->anc >= 0 ? &t->st[fr->anc].c : NULL;
	t->n++;
	if (fr->shown && !cs->prepass && cs->view->enter)
		return cs->view->enter(cs->ctx, &fr->c, ev);
	return 0;
}

/* An event of no call: shown where its thread's current call would show a callee. */
static int on_instant(struct calls *cs, struct cthr *t, const struct dec_event *ev)
{
	const struct cframe *top = t->n ? &t->st[t->n - 1] : NULL;

	if (cs->prepass || !cs->view->event)
		return 0;
	if (ev->ts < cs->lo || ev->ts > cs->hi)
		return 0;
	if (top ? (!top->in_only || top->hidden_sub) : cs->flt->nr_only > 0)
		return 0;
	return cs->view->event(cs->ctx, ev, top ? top->kids_depth : 0);
}

static int on_exit_ev(struct calls *cs, struct cthr *t, const struct dec_event *ev)
{
	size_t d = ev->depth;
	int ret;

	if (t->last_exit && t->closed_valid && t->closed_pos == d && t->st[d].c.ip == ev->ip &&
	    t->closed_def != ev->def->id) {
		struct cframe *fr = &t->st[d];

		if (fr->shown && fr->c.shown && !cs->prepass && cs->view->exit_more)
			return cs->view->exit_more(cs->ctx, &fr->c, ev);
		return 0;
	}
	if (d >= t->n || (ev->ip && t->st[d].c.ip != ev->ip)) {
		/* its entry was not recorded (or not by an event that has this exit) */
		cs->unpaired++;
		t->closed_valid = false;
		return on_instant(cs, t, ev);
	}
	if (__builtin_expect(t->n > d + 1, 0)) {
		ret = cut_to(cs, t, d + 1);
		if (ret)
			return ret;
	}
	if (cs->fast)
		return frame_close_fast(cs, t, ev);
	return frame_close(cs, t, ev->ts, ev);
}

static __attribute__((noinline)) int one_event(struct calls *cs, const struct dec_event *ev)
{
	const struct dec_event_def *def = ev->def;
	uint32_t num = ev->thr->num;
	struct cthr *t;
	int ret;

	if (__builtin_expect(!cs->have_t0, 0)) {
		const struct call_filter *flt = cs->flt;

		cs->have_t0 = true;
		cs->t0 = ev->ts;
		if (flt->have_range) {
			cs->lo = flt->lo_rel ? cs->t0 + flt->lo : flt->lo;
			cs->hi = flt->hi == UINT64_MAX ? UINT64_MAX :
				 flt->hi_rel ? cs->t0 + flt->hi : flt->hi;
		}
	}
	if (__builtin_expect(num < cs->nr_thr && cs->thr[num].seen, 1))
		t = &cs->thr[num];
	else if (!(t = thr_get(cs, ev->thr)))
		return -ENOMEM;
	if (!t->wanted)
		return 0;
	t->quick = true;
	cs->quick = cs->fast;
	if (!def->is_slice) {
		ret = on_instant(cs, t, ev);
		t->last_entry = t->last_exit = false;
	} else if (def->is_return) {
		ret = on_exit_ev(cs, t, ev);
		t->last_entry = false;
		t->last_exit = true;
	} else {
		ret = on_entry_ev(cs, t, ev);
		t->last_entry = true;
		t->last_exit = false;
	}
	t->last_ts = ev->ts;
	return ret;
}

/*
 * The entry of a call right above its thread's top one, with no filter:
 * nearly every entry.  False when it is anything else, nothing changed.
 */
static __attribute__((always_inline)) inline bool
fast_entry(struct calls *cs, struct cthr *t, const struct dec_event *ev, int *ret)
{
	size_t n = t->n;
	struct cframe *fr, *up = n ? &t->st[n - 1] : NULL;

	if (n != ev->depth || n >= t->cap ||
	    (t->last_entry && up && up->c.ip == ev->ip && up->def != ev->def->id))
		return false;
	fr = &t->st[n];
	fr->c.thr = ev->thr;
	fr->c.ip = ev->ip;
	fr->c.start = ev->ts;
	fr->c.end = 0;
	fr->c.child = 0;
	fr->c.unfinished = fr->c.unwound = fr->c.shown = false;
	fr->c.priv[0] = fr->c.priv[1] = NULL;
	fr->c.up = up ? &up->c : NULL;
	fr->c.depth = up ? up->kids_depth : 0;
	fr->def = ev->def->id;
	/* fr->seq: only -t's first pass reads it */
	fr->anc = (int)n - 1;
	fr->kids_depth = fr->c.depth + 1;
	fr->root_depth = 0;
	fr->in_only = fr->shown = true;
	fr->hidden_sub = false;
	t->n = n + 1;
	t->last_entry = true;
	t->last_exit = false;
	t->last_ts = ev->ts;
	*ret = cs->view->enter ? cs->view->enter(cs->ctx, &fr->c, ev) : 0;
	return true;
}

/* The exit of its thread's top call, with no filter: nearly every exit. */
static __attribute__((always_inline)) inline bool
fast_exit(struct calls *cs, struct cthr *t, const struct dec_event *ev, int *ret)
{
	size_t n = t->n;
	struct cframe *fr = n ? &t->st[n - 1] : NULL;
	uint64_t dur;

	if (!fr || ev->depth != n - 1 || (ev->ip && fr->c.ip != ev->ip) ||
	    (t->last_exit && t->closed_valid && t->closed_pos == n - 1 &&
	     t->st[n - 1].c.ip == ev->ip && t->closed_def != ev->def->id))
		return false;
	t->n = n - 1;
	fr->c.end = ev->ts > fr->c.start ? ev->ts : fr->c.start;
	fr->c.unwound = ev->unwound;
	fr->c.shown = true;
	dur = fr->c.end - fr->c.start;
	if (fr->anc >= 0)
		t->st[fr->anc].c.child += dur;
	t->closed_pos = n - 1;
	t->closed_def = ev->def->id;
	t->closed_valid = true;
	t->last_entry = false;
	t->last_exit = true;
	t->last_ts = ev->ts;
	*ret = cs->view->exit ? cs->view->exit(cs->ctx, &fr->c, ev) : 0;
	return true;
}

/* quick_thr() of a thread other than the last one's */
static __attribute__((noinline)) struct cthr *quick_thr_find(struct calls *cs,
							     const struct dec_event *ev)
{
	uint32_t num = ev->thr->num;

	if (!cs->quick || num >= cs->nr_thr || !cs->thr[num].quick)
		return NULL;
	cs->cur_thr = ev->thr;
	cs->cur = &cs->thr[num];
	return cs->cur;
}

/* @ev's thread when its events may take the short way, else NULL */
static inline struct cthr *quick_thr(struct calls *cs, const struct dec_event *ev)
{
	if (__builtin_expect(cs->cur_thr == ev->thr, 1))
		return cs->cur;
	return quick_thr_find(cs, ev);
}

int calls_event(void *arg, const struct dec_event *ev)
{
	struct calls *cs = arg;
	const struct dec_event_def *def = ev->def;
	struct cthr *t;
	int ret;

	if (__builtin_expect(def->is_slice, 1) && (t = quick_thr(cs, ev)) &&
	    (def->is_return ? fast_exit(cs, t, ev, &ret) : fast_entry(cs, t, ev, &ret))) {
		if (__builtin_expect(ret, 0)) {
			cs->err = ret;
			cs->quick = false;
			cs->cur_thr = NULL;
		}
		return ret;
	}
	if (cs->err)
		return cs->err;
	cs->err = one_event(cs, ev);
	if (cs->err) {
		cs->quick = false;
		cs->cur_thr = NULL;
	}
	return cs->err;
}

int calls_prepass(void *arg, const struct dec_event *ev)
{
	struct calls *cs = arg;

	cs->prepass = true;
	cs->fast = cs->quick = false;
	cs->cur_thr = NULL;
	return calls_event(cs, ev);
}

int calls_thread_end(void *arg, const struct dec_thread *thr)
{
	struct calls *cs = arg;
	struct cthr *t;
	int ret;

	if (cs->err)
		return cs->err;
	if (thr->num >= cs->nr_thr || !(t = &cs->thr[thr->num])->seen || !t->wanted)
		return 0;
	ret = cut_to(cs, t, 0);
	if (!ret && !cs->prepass && cs->view->thread_end)
		ret = cs->view->thread_end(cs->ctx, thr);
	cs->err = ret;
	if (ret) {
		cs->quick = false;
		cs->cur_thr = NULL;
	}
	return ret;
}

int calls_finish(struct calls *cs)
{
	size_t i;
	int ret = cs->err;

	for (i = 0; i < cs->nr_thr && !ret; i++)
		ret = cut_to(cs, &cs->thr[i], 0);
	return ret;
}

/* ---- options ----------------------------------------------------------- */

bool calls_parse_duration(const char *s, uint64_t *out)
{
	static const struct {
		const char *unit;
		double ns;
	} units[] = {
		{ "", 1 }, { "ns", 1 }, { "us", 1e3 }, { "ms", 1e6 }, { "s", 1e9 },
		{ "m", 60e9 },
	};
	char *end;
	double v;
	size_t i;

	v = strtod(s, &end);
	if (end == s || !(v >= 0) || v > 1e12)
		return false;
	for (i = 0; i < sizeof(units) / sizeof(units[0]); i++) {
		if (!strcmp(end, units[i].unit)) {
			*out = (uint64_t)(v * units[i].ns + 0.5);
			return true;
		}
	}
	return false;
}

/* One end of a range: a duration with a unit (relative) or seconds as printed. */
static bool range_end(const char *s, size_t n, uint64_t *out, bool *rel)
{
	char buf[64], *end;
	double v;

	if (n >= sizeof(buf))
		return false;
	memcpy(buf, s, n);
	buf[n] = 0;
	v = strtod(buf, &end);
	if (end == buf || !(v >= 0) || v > 1e12)
		return false;
	if (!*end) {
		*rel = false;
		*out = (uint64_t)(v * 1e9 + 0.5);
		return true;
	}
	*rel = true;
	return calls_parse_duration(buf, out);
}

bool calls_parse_range(struct call_filter *flt, const char *s)
{
	const char *tilde = strchr(s, '~');

	if (!tilde)
		return false;
	flt->lo = 0;
	flt->lo_rel = true;
	flt->hi = UINT64_MAX;
	flt->hi_rel = false;
	if (tilde > s && !range_end(s, tilde - s, &flt->lo, &flt->lo_rel))
		return false;
	if (tilde[1] && !range_end(tilde + 1, strlen(tilde + 1), &flt->hi, &flt->hi_rel))
		return false;
	flt->have_range = true;
	return true;
}

bool calls_parse_tids(struct call_filter *flt, const char *s)
{
	char *end;

	while (*s) {
		unsigned long v = strtoul(s, &end, 10);
		uint32_t *nt;

		if (end == s || v == 0 || v > UINT32_MAX || (*end && *end != ','))
			return false;
		nt = realloc(flt->tids, (flt->nr_tids + 1) * sizeof(*nt));
		if (!nt)
			return false;
		flt->tids = nt;
		flt->tids[flt->nr_tids++] = (uint32_t)v;
		s = *end ? end + 1 : end;
	}
	return flt->nr_tids > 0;
}
