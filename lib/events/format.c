// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * Formatting decoded events (lib/events/format.h).
 */
#define _GNU_SOURCE
#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <fhook/internal/events.h>

#include "array.h"
#include "calls.h"
#include "format.h"
#include "perfetto.h"
#include "recorder/ring.h"

#define OUT_BUF		(1U << 20)

#define GRAPH_MAX_EV	8

enum { G_NONE, G_ENTRY, G_LEAF, G_EXIT };

/*
 * A thread's call the graph holds back: an entry until the next event
 * shows whether it is a leaf, and an entry or exit until no further event
 * of the same call can follow (their values go on one line).  The events'
 * arguments are copied: a live trace's data does not outlive its batch.
 */
struct graph_thr {
	int state;
	struct call c;
	struct dec_event in[GRAPH_MAX_EV], out[GRAPH_MAX_EV];
	size_t in_off[GRAPH_MAX_EV], out_off[GRAPH_MAX_EV];
	int nr_in, nr_out;
	unsigned char *argbuf;
	size_t arglen, argcap;
	/* an entry held: where its line goes in the output buffer, and in which order */
	bool placed;
	size_t at;
	uint64_t place_seq;
};

struct fmt_out {
	int fmt;
	int fd;
	struct dec *d;
	char *buf;
	size_t len;
	int err;
	bool first;
	uint64_t count;
	struct pf_writer *pf;
	char name[1024];	/* the last name handed to the Perfetto writer */
	/* the call graph's state */
	struct graph_thr *gthr;
	size_t nr_gthr;
	size_t g_last;		/* 1 + the thread whose event came last, 0: none */
	/* the threads whose held entry has its place in the buffer (graph_place()) */
	uint32_t *placed;
	size_t nr_placed, placed_cap;
	uint64_t place_seq;
	char *scratch;		/* a held entry's line is made here, then put in its place */
	bool in_scratch;
	uint64_t last_ts;	/* the latest time of an event formatted */
	/* the seconds of the last time written, and their text */
	uint64_t sec;
	int sec_width;
	size_t sec_len;
	char sec_text[32];
	/* calls, and the filters */
	struct calls *cs;
	/* copies of the definitions as events of no call (a call's further events) */
	struct dec_event_def *inst;
	int nr_inst;
};

static const struct {
	const char *name;
	int fmt;
} fmt_names[] = {
	{ "text", FMT_TEXT }, { "json", FMT_JSON }, { "chrome", FMT_CHROME },
	{ "graph", FMT_GRAPH }, { "perfetto", FMT_PERFETTO },
};

int fmt_by_name(const char *name)
{
	size_t i;

	for (i = 0; i < sizeof(fmt_names) / sizeof(fmt_names[0]); i++)
		if (!strcmp(name, fmt_names[i].name))
			return fmt_names[i].fmt;
	return -1;
}

/* ---- the output buffer ------------------------------------------------- */

static void ob_write(struct fmt_out *f, const char *p, size_t n)
{
	size_t off = 0;

	while (off < n && !f->err) {
		ssize_t w = write(f->fd, p + off, n - off);

		if (w < 0) {
			if (errno != EINTR)
				f->err = -errno;
			continue;
		}
		off += w;
	}
}

/* The held entry whose line comes first in the output (NULL: none). */
static struct graph_thr *placed_first(const struct fmt_out *f)
{
	struct graph_thr *first = NULL;
	size_t i;

	for (i = 0; i < f->nr_placed; i++) {
		struct graph_thr *h = &f->gthr[f->placed[i]];

		if (!first || h->at < first->at ||
		    (h->at == first->at && h->place_seq < first->place_seq))
			first = h;
	}
	return first;
}

/*
 * Writes the buffer up to the first held entry's place: what follows it
 * waits for that line.  A line made in the scratch buffer longer than the
 * whole buffer is cut (its beginning lost), never written out of place.
 */
static void ob_flush(struct fmt_out *f)
{
	struct graph_thr *first;
	size_t n, i;

	if (f->in_scratch) {
		f->len = 0;
		return;
	}
	first = placed_first(f);
	n = first ? first->at : f->len;
	ob_write(f, f->buf, n);
	memmove(f->buf, f->buf + n, f->len - n);
	f->len -= n;
	for (i = 0; i < f->nr_placed; i++)
		f->gthr[f->placed[i]].at -= n;
}

static void graph_force(struct fmt_out *f);

static __attribute__((noinline)) void ob_make_room(struct fmt_out *f, size_t n)
{
	ob_flush(f);
	/* the buffer full of lines after a held entry: it is written as it is now */
	while (f->len + n > OUT_BUF && f->nr_placed && !f->in_scratch && !f->err)
		graph_force(f);
}

/* Room for @n more bytes (n < OUT_BUF). */
static inline char *ob_room(struct fmt_out *f, size_t n)
{
	if (f->len + n > OUT_BUF)
		ob_make_room(f, n);
	return f->buf + f->len;
}

static inline void ob_mem(struct fmt_out *f, const char *s, size_t n)
{
	while (n) {
		size_t chunk = n < OUT_BUF / 2 ? n : OUT_BUF / 2;

		memcpy(ob_room(f, chunk), s, chunk);
		f->len += chunk;
		s += chunk;
		n -= chunk;
	}
}

static inline void ob_str(struct fmt_out *f, const char *s)
{
	ob_mem(f, s, strlen(s));
}

static inline void ob_char(struct fmt_out *f, char c)
{
	*ob_room(f, 1) = c;
	f->len++;
}

/* @v in decimal, at least @width digits wide (@pad before), into @p; returns the length. */
static inline size_t fmt_u64(char *p, uint64_t v, int width, char pad)
{
	static const char pairs[201] =
		"00010203040506070809101112131415161718192021222324252627282930313233343536373839"
		"40414243444546474849505152535455565758596061626364656667686970717273747576777879"
		"8081828384858687888990919293949596979899";
	char tmp[24], *e = tmp + sizeof(tmp), *q = e;
	size_t n, k = 0;

	/* two digits a step: this runs several times for every line written */
	while (v >= 100) {
		unsigned int r = (unsigned int)(v % 100);

		v /= 100;
		q -= 2;
		q[0] = pairs[2 * r];
		q[1] = pairs[2 * r + 1];
	}
	if (v >= 10) {
		q -= 2;
		q[0] = pairs[2 * v];
		q[1] = pairs[2 * v + 1];
	} else {
		*--q = (char)('0' + v);
	}
	n = (size_t)(e - q);
	if (width > 0 && n < (size_t)width) {
		k = (size_t)width - n;
		memset(p, pad, k);
	}
	memcpy(p + k, q, n);
	return k + n;
}

static inline void ob_u64(struct fmt_out *f, uint64_t v, int width, char pad)
{
	f->len += fmt_u64(ob_room(f, 48), v, width, pad);
}

static inline void ob_s64(struct fmt_out *f, int64_t v)
{
	if (v < 0) {
		ob_char(f, '-');
		ob_u64(f, -(uint64_t)v, 0, ' ');
	} else {
		ob_u64(f, (uint64_t)v, 0, ' ');
	}
}

static inline void ob_hex(struct fmt_out *f, uint64_t v)
{
	static const char digits[] = "0123456789abcdef";
	char tmp[16], *p = ob_room(f, 20);
	int n = 0, k = 0;

	do {
		tmp[n++] = digits[v & 15];
		v >>= 4;
	} while (v);
	p[k++] = '0';
	p[k++] = 'x';
	while (n)
		p[k++] = tmp[--n];
	f->len += k;
}

/* @s right-aligned in @width columns. */
static void ob_rjust(struct fmt_out *f, const char *s, int width)
{
	int n = (int)strlen(s);

	while (n < width--)
		ob_char(f, ' ');
	ob_str(f, s);
}

/*
 * A JSON string.  The bytes come from the traced program: invalid UTF-8
 * becomes U+FFFD, and a sequence cut off at the end (a string the recorder
 * cut at its size limit) is dropped, so any JSON parser reads the output.
 */
static void ob_json_str(struct fmt_out *f, const char *s, size_t n)
{
	const unsigned char *p = (const unsigned char *)s, *end = p + n;

	ob_char(f, '"');
	while (p < end) {
		unsigned char c = *p;
		int need = c < 0x80 ? 0 : (c & 0xe0) == 0xc0 ? 1 : (c & 0xf0) == 0xe0 ? 2 :
			   (c & 0xf8) == 0xf0 ? 3 : -1;
		int k;

		if (need == 0) {
			if (c == '"' || c == '\\') {
				ob_char(f, '\\');
				ob_char(f, (char)c);
			} else if (c < 0x20) {
				static const char hex[] = "0123456789abcdef";

				ob_str(f, "\\u00");
				ob_char(f, hex[c >> 4]);
				ob_char(f, hex[c & 15]);
			} else {
				ob_char(f, (char)c);
			}
			p++;
			continue;
		}
		if (need > 0 && end - p <= need) {
			/* a character cut at the end: complete prefix or garbage, drop it */
			for (k = 1; p + k < end && (p[k] & 0xc0) == 0x80; k++)
				;
			if (p + k == end)
				break;
		}
		for (k = 1; need > 0 && k <= need && p + k < end && (p[k] & 0xc0) == 0x80; k++)
			;
		if (need < 0 || k != need + 1 || (c == 0xc0 || c == 0xc1 || c > 0xf4) ||
		    (c == 0xe0 && p[1] < 0xa0) || (c == 0xed && p[1] > 0x9f) ||
		    (c == 0xf0 && p[1] < 0x90) || (c == 0xf4 && p[1] > 0x8f)) {
			ob_str(f, "\\ufffd");
			p++;
			continue;
		}
		ob_mem(f, (const char *)p, need + 1);
		p += need + 1;
	}
	ob_char(f, '"');
}

/*
 * What was formatted since @start, as a JSON string instead: values that
 * JSON must quote are formatted into the buffer first, then moved behind
 * a quote.  Call ob_room(f, 2048) before formatting them.
 */
static void ob_quote_from(struct fmt_out *f, size_t start)
{
	char tmp[2048];
	size_t n = f->len - start < sizeof(tmp) ? f->len - start : sizeof(tmp);

	memcpy(tmp, f->buf + start, n);
	f->len = start;
	ob_json_str(f, tmp, n);
}

/* ---- symbols ----------------------------------------------------------- */

/* "name+0xoff/0xsize", or "name" with @no_off, or "0xaddr". */
static void ob_sym(struct fmt_out *f, const struct dec_thread *thr, uint64_t addr, bool no_off)
{
	struct dec_sym s;

	if (!dec_symbolize(f->d, thr, addr, &s)) {
		ob_hex(f, addr);
		return;
	}
	ob_str(f, s.name);
	if (no_off)
		return;
	ob_char(f, '+');
	ob_hex(f, s.off);
	ob_char(f, '/');
	ob_hex(f, s.size);
}

/* ---- arguments --------------------------------------------------------- */

/* One value as the kernel prints it; false when JSON needs it quoted. */
static bool value(struct fmt_out *f, const struct dec_thread *thr, int type,
		  const unsigned char *p)
{
	uint64_t v = 0;

	memcpy(&v, p, fhook_ev_type_size(type));
	switch (type) {
	case FHOOK_EVT_U8: case FHOOK_EVT_U16: case FHOOK_EVT_U32: case FHOOK_EVT_U64:
		ob_u64(f, v, 0, ' ');
		return true;
	case FHOOK_EVT_S8: ob_s64(f, (int8_t)v); return true;
	case FHOOK_EVT_S16: ob_s64(f, (int16_t)v); return true;
	case FHOOK_EVT_S32: ob_s64(f, (int32_t)v); return true;
	case FHOOK_EVT_S64: ob_s64(f, (int64_t)v); return true;
	case FHOOK_EVT_CHAR:
		ob_char(f, '\'');
		ob_char(f, (char)v);
		ob_char(f, '\'');
		return false;
	case FHOOK_EVT_SYMBOL:
		ob_sym(f, thr, v, false);
		return false;
	case FHOOK_EVT_F32:
	case FHOOK_EVT_F64: {
		char buf[40];
		double d;
		float fl;

		if (type == FHOOK_EVT_F32) {
			memcpy(&fl, p, 4);
			d = fl;
		} else {
			memcpy(&d, p, 8);
		}
		/* JSON has no NaN or infinity: those are quoted */
		snprintf(buf, sizeof(buf), type == FHOOK_EVT_F32 ? "%.7g" : "%.15g", d);
		ob_str(f, buf);
		return d == d && d - d == 0;
	}
	default:
		ob_hex(f, v);
		return false;
	}
}

/* A value as JSON: numbers bare, the rest quoted. */
static void json_value(struct fmt_out *f, const struct dec_thread *thr, int type,
		       const unsigned char *p)
{
	size_t start;

	ob_room(f, 2048);
	start = f->len;
	if (!value(f, thr, type, p))
		ob_quote_from(f, start);
}

enum { ARGS_TEXT, ARGS_JSON, ARGS_VALUES };

/*
 * Decode the arguments of @ev: " name=value" pairs (ARGS_TEXT), JSON
 * members (ARGS_JSON) or values alone, ", " between them (ARGS_VALUES,
 * the graph's).  *@first: nothing written before in this list.
 */
static void args_as(struct fmt_out *f, const struct dec_event *ev, int style, bool *first)
{
	const struct dec_event_def *def = ev->def;
	const unsigned char *p = ev->args, *end = ev->args + ev->args_len;
	bool text = style != ARGS_JSON;
	int i;
	unsigned int k;

	for (i = 0; i < def->nr_args && p && p < end; i++) {
		const struct dec_arg *a = &def->args[i];

		if (style == ARGS_TEXT) {
			ob_char(f, ' ');
			ob_str(f, a->name);
			ob_char(f, '=');
		} else if (style == ARGS_VALUES) {
			if (!*first)
				ob_str(f, ", ");
		} else {
			if (!*first)
				ob_char(f, ',');
			ob_json_str(f, a->name, strlen(a->name));
			ob_char(f, ':');
		}
		*first = false;
		if (fhook_ev_type_is_string(a->type)) {
			uint32_t len;
			const char *s = (const char *)p + 4;

			/* the record comes from the traced program: trust no length */
			if (end - p < 4)
				break;
			memcpy(&len, p, 4);
			if (len > (size_t)(end - p) - 4) {
				ob_str(f, text ? "(bad)" : "null");
				break;
			}
			if (!len) {
				ob_str(f, text ? "(fault)" : "\"(fault)\"");
			} else if (a->type == FHOOK_EVT_SYMSTR) {
				uint64_t addr = 0;

				if (len >= 8)
					memcpy(&addr, s, 8);
				if (text) {
					ob_char(f, '"');
					ob_sym(f, ev->thr, addr, false);
					ob_char(f, '"');
				} else {
					json_value(f, ev->thr, FHOOK_EVT_SYMBOL, (const unsigned char *)&addr);
				}
			} else if (text) {
				ob_char(f, '"');
				ob_mem(f, s, strnlen(s, len));
				ob_char(f, '"');
			} else {
				ob_json_str(f, s, strnlen(s, len));
			}
			p += (4 + len + 7) & ~7U;
			continue;
		}
		{
			unsigned int size = fhook_ev_type_size(a->type), n = a->count ? a->count : 1;

			if ((size_t)(end - p) < (size_t)size * n + 1) {
				ob_str(f, text ? "(bad)" : "null");
				break;
			}
			if (p[size * n]) {
				ob_str(f, text ? "(fault)" : "null");
			} else {
				if (a->count)
					ob_char(f, text ? '{' : '[');
				for (k = 0; k < n; k++) {
					if (k)
						ob_char(f, ',');
					if (text)
						value(f, ev->thr, a->type, p + k * size);
					else
						json_value(f, ev->thr, a->type, p + k * size);
				}
				if (a->count)
					ob_char(f, text ? '}' : ']');
			}
			p += (size * n + 1 + 7) & ~7U;
		}
	}
}

static void args(struct fmt_out *f, const struct dec_event *ev)
{
	bool first = true;

	args_as(f, ev, f->fmt == FMT_JSON || f->fmt == FMT_CHROME ? ARGS_JSON : ARGS_TEXT, &first);
}

/* ---- events ------------------------------------------------------------ */

/* "(func+0x0/0x20)" for an entry, "(caller+0x1b/0x20 <- func)" for an exit. */
static void where(struct fmt_out *f, const struct dec_event *ev)
{
	if (ev->def->is_return) {
		ob_sym(f, ev->thr, ev->ret_ip, false);
		ob_str(f, " <- ");
		ob_sym(f, ev->thr, ev->ip, true);
	} else {
		ob_sym(f, ev->thr, ev->ip, false);
	}
}

static void ts_sec_usec(struct fmt_out *f, uint64_t ts, int width)
{
	uint64_t sec = ts / 1000000000ULL;

	/* the seconds change seldom from one line to the next: formatted once */
	if (sec != f->sec || width != f->sec_width || !f->sec_len) {
		f->sec = sec;
		f->sec_width = width;
		f->sec_len = fmt_u64(f->sec_text, sec, width, ' ');
		f->sec_text[f->sec_len++] = '.';
	}
	ob_mem(f, f->sec_text, f->sec_len);
	ob_u64(f, ts % 1000000000ULL / 1000, 6, '0');
}

static void event_text(struct fmt_out *f, const struct dec_event *ev)
{
	const struct dec_thread *thr = ev->thr;

	ob_rjust(f, thr->comm, 16);
	ob_char(f, '-');
	{
		char *p = ob_room(f, 32);
		size_t n = fmt_u64(p, thr->tid, 0, ' ');

		while (n < 7)
			p[n++] = ' ';
		f->len += n;
	}
	ob_str(f, " [");
	ob_u64(f, ev->cpu, 3, '0');
	ob_str(f, "] ");
	ts_sec_usec(f, ev->ts, 5);
	ob_str(f, ": ");
	ob_str(f, ev->def->event);
	ob_str(f, ": (");
	where(f, ev);
	ob_char(f, ')');
	if (ev->unwound)
		ob_str(f, " unwound");
	args(f, ev);
	ob_char(f, '\n');
}

static void event_json(struct fmt_out *f, const struct dec_event *ev)
{
	const struct dec_thread *thr = ev->thr;
	size_t start;

	ob_str(f, "{\"comm\":");
	ob_json_str(f, thr->comm, strlen(thr->comm));
	ob_str(f, ",\"pid\":");
	ob_u64(f, thr->pid, 0, ' ');
	ob_str(f, ",\"tid\":");
	ob_u64(f, thr->tid, 0, ' ');
	ob_str(f, ",\"cpu\":");
	ob_u64(f, ev->cpu, 0, ' ');
	ob_str(f, ",\"ts\":");
	ob_u64(f, ev->ts, 0, ' ');
	/* the names come from the recording, which may be damaged: quoted as JSON strings */
	ob_str(f, ",\"group\":");
	ob_json_str(f, ev->def->group, strlen(ev->def->group));
	ob_str(f, ",\"event\":");
	ob_json_str(f, ev->def->event, strlen(ev->def->event));
	ob_str(f, ev->def->is_return ? ",\"type\":\"exit\",\"func\":" : ",\"type\":\"entry\",\"func\":");
	/* symbol names are bytes of an ELF file: quoted as JSON strings */
	ob_room(f, 2048);
	start = f->len;
	ob_sym(f, thr, ev->ip, true);
	ob_quote_from(f, start);
	ob_str(f, ",\"at\":");
	ob_room(f, 2048);
	start = f->len;
	where(f, ev);
	ob_quote_from(f, start);
	if (ev->unwound)
		ob_str(f, ",\"unwound\":true");
	ob_str(f, ",\"args\":{");
	args(f, ev);
	ob_str(f, "}}\n");
}

static void event_chrome(struct fmt_out *f, const struct dec_event *ev)
{
	const struct dec_thread *thr = ev->thr;
	const struct dec_event_def *def = ev->def;
	size_t start;

	ob_str(f, f->first ? "{\"name\":" : ",\n{\"name\":");
	f->first = false;
	ob_room(f, 2048);
	start = f->len;
	ob_sym(f, thr, ev->ip, true);
	ob_quote_from(f, start);
	ob_str(f, ",\"cat\":");
	ob_room(f, 2048);
	start = f->len;
	ob_str(f, def->group);
	ob_char(f, '/');
	ob_str(f, def->event);
	ob_quote_from(f, start);
	ob_str(f, !def->is_slice ? ",\"ph\":\"i\",\"s\":\"t\"," :
		  def->is_return ? ",\"ph\":\"E\"," : ",\"ph\":\"B\",");
	ob_str(f, "\"ts\":");
	ob_u64(f, ev->ts / 1000, 0, ' ');
	ob_char(f, '.');
	ob_u64(f, ev->ts % 1000, 3, '0');
	ob_str(f, ",\"pid\":");
	ob_u64(f, thr->pid, 0, ' ');
	ob_str(f, ",\"tid\":");
	ob_u64(f, thr->tid, 0, ' ');
	ob_str(f, ",\"args\":{");
	args(f, ev);
	ob_str(f, "}}");
}

/*
 * The call graph: "SECS.USECS  DURATION [TID] | func(args) {" per entry,
 * "} = ret; /" "* func *" "/" with the call's duration per exit, and a call
 * that made no shown call on one line, "func(args) = ret;".
 */
/* "%7.3f us" (or ms, s) of @ns, formatted without printf: this is per line */
static void graph_dur(struct fmt_out *f, uint64_t ns, bool known)
{
	static const char *const units[] = { " us", " ms", "  s" };
	uint64_t v;
	char *p, tmp[24];
	size_t n, k;
	int u;

	if (!known) {
		ob_mem(f, "          ", 10);
		return;
	}
	/* three decimals of the unit, rounded as printf would */
	if (ns < 1000000) {
		v = ns;
		u = 0;
	} else if (ns < 1000000000) {
		v = (ns + 500) / 1000;
		u = 1;
	} else {
		v = (ns + 500000) / 1000000;
		u = 2;
	}
	n = fmt_u64(tmp, v / 1000, 0, ' ');
	tmp[n++] = '.';
	n += fmt_u64(tmp + n, v % 1000, 3, '0');
	p = ob_room(f, 32);
	for (k = 0; n + k < 7; k++)
		p[k] = ' ';
	memcpy(p + k, tmp, n);
	f->len += k + n;
	ob_str(f, units[u]);
}

static void graph_prefix(struct fmt_out *f, const struct dec_thread *thr, uint32_t depth,
			 uint64_t ts, uint64_t dur, bool known)
{
	uint32_t i;

	if (depth > 256)
		depth = 256;
	ts_sec_usec(f, ts, 5);
	ob_char(f, ' ');
	graph_dur(f, dur, known);
	ob_str(f, " [");
	{
		char *p = ob_room(f, 32);

		f->len += fmt_u64(p, thr->tid, 6, ' ');
	}
	ob_str(f, "] | ");
	for (i = 0; i < depth; i += 32)
		ob_mem(f, "                                                                ",
		       2 * (depth - i < 32 ? depth - i : 32));
}

static const unsigned char *g_args(const struct graph_thr *g, size_t off, const struct dec_event *ev)
{
	return ev->args_len ? g->argbuf + off : NULL;
}

/* The values of a side's events, ", " between them; false when there are none. */
static bool graph_values(struct fmt_out *f, const struct graph_thr *g, bool out)
{
	const struct dec_event *evs = out ? g->out : g->in;
	const size_t *offs = out ? g->out_off : g->in_off;
	int i, nr = out ? g->nr_out : g->nr_in;
	bool first = true;

	for (i = 0; i < nr; i++) {
		struct dec_event ev = evs[i];

		if (!ev.args_len || !ev.def->nr_args)
			continue;
		ev.args = g_args(g, offs[i], &evs[i]);
		args_as(f, &ev, ARGS_VALUES, &first);
	}
	return !first;
}

static bool graph_has_values(const struct graph_thr *g, bool out)
{
	const struct dec_event *evs = out ? g->out : g->in;
	int i, nr = out ? g->nr_out : g->nr_in;

	for (i = 0; i < nr; i++)
		if (evs[i].args_len && evs[i].def->nr_args)
			return true;
	return false;
}

/* "name(args)": a demangled C++ name that brings its own parameters keeps them. */
static void graph_call(struct fmt_out *f, const struct graph_thr *g)
{
	size_t start;
	bool has_paren;

	ob_room(f, 4096);
	start = f->len;
	ob_sym(f, g->c.thr, g->c.ip, true);
	has_paren = memchr(f->buf + start, '(', f->len - start) != NULL;
	if (graph_has_values(g, false)) {
		ob_char(f, '(');
		graph_values(f, g, false);
		ob_char(f, ')');
	} else if (!has_paren) {
		ob_str(f, "()");
	}
}

static void graph_ret(struct fmt_out *f, const struct graph_thr *g)
{
	if (!graph_has_values(g, true))
		return;
	ob_str(f, " = ");
	graph_values(f, g, true);
}

static char *memdup_or_null(const char *s, size_t n)
{
	char *p = malloc(n ? n : 1);

	return p ? memcpy(p, s, n) : NULL;
}

static void graph_unplace(struct fmt_out *f, struct graph_thr *g)
{
	size_t i;

	for (i = 0; i < f->nr_placed; i++)
		if (&f->gthr[f->placed[i]] == g) {
			f->placed[i] = f->placed[--f->nr_placed];
			break;
		}
	g->placed = false;
}

/*
 * Keeps the place of @g's entry, at the end of what is written so far: its
 * line (a call with its callees, or a leaf) is known only at its thread's
 * next event, and the other threads' lines meanwhile go after it.
 */
static int graph_place(struct fmt_out *f, struct graph_thr *g)
{
	if (f->nr_placed == f->placed_cap) {
		size_t cap = f->placed_cap ? 2 * f->placed_cap : 16;
		uint32_t *p = realloc(f->placed, cap * sizeof(*p));

		if (!p)
			return -ENOMEM;
		f->placed = p;
		f->placed_cap = cap;
	}
	f->placed[f->nr_placed++] = g - f->gthr;
	g->placed = true;
	g->at = f->len;
	g->place_seq = ++f->place_seq;
	return 0;
}

/* Puts @n bytes of @g's line at its place, and forgets the place. */
static void graph_put(struct fmt_out *f, struct graph_thr *g, const char *s, size_t n)
{
	char *copy = NULL;
	size_t i;

	while (f->len + n > OUT_BUF && !f->err) {
		ob_flush(f);
		if (f->len + n <= OUT_BUF)
			break;
		if (placed_first(f) == g) {
			/* the first line still to write: straight out */
			graph_unplace(f, g);
			ob_write(f, s, n);
			free(copy);
			return;
		}
		/* the scratch buffer serves the line written before this one */
		if (!copy && !(s = copy = memdup_or_null(s, n))) {
			f->err = -ENOMEM;
			break;
		}
		graph_force(f);
	}
	if (!f->err) {
		memmove(f->buf + g->at + n, f->buf + g->at, f->len - g->at);
		memcpy(f->buf + g->at, s, n);
		f->len += n;
		for (i = 0; i < f->nr_placed; i++) {
			struct graph_thr *h = &f->gthr[f->placed[i]];

			if (h != g && (h->at > g->at ||
				       (h->at == g->at && h->place_seq > g->place_seq)))
				h->at += n;
		}
	}
	graph_unplace(f, g);
	free(copy);
}

static void graph_flush(struct fmt_out *f, struct graph_thr *g)
{
	uint64_t dur = g->c.end - g->c.start;
	char *buf = f->buf;
	size_t len = f->len;

	if (g->placed) {
		/*
		 * Nothing written and no other entry held since its entry (one
		 * thread, mostly): its place is the end.  An entry held before
		 * it at the same place keeps its place, before this line.
		 */
		if ((g->state != G_ENTRY && g->state != G_LEAF) ||
		    (g->at == f->len && g->place_seq == f->place_seq)) {
			graph_unplace(f, g);
		} else {
			f->buf = f->scratch;
			f->len = 0;
			f->in_scratch = true;
		}
	}
	switch (g->state) {
	case G_ENTRY:
		graph_prefix(f, g->c.thr, g->c.depth, g->c.start, 0, false);
		graph_call(f, g);
		ob_str(f, " {\n");
		break;
	case G_LEAF:
		graph_prefix(f, g->c.thr, g->c.depth, g->c.start, dur, true);
		graph_call(f, g);
		graph_ret(f, g);
		ob_str(f, ";\n");
		break;
	case G_EXIT:
		graph_prefix(f, g->c.thr, g->c.depth, g->c.end, dur, true);
		ob_char(f, '}');
		graph_ret(f, g);
		if (graph_has_values(g, true))
			ob_char(f, ';');
		ob_str(f, g->c.unwound ? " /* unwound: " : " /* ");
		ob_sym(f, g->c.thr, g->c.ip, true);
		ob_str(f, g->c.unfinished ? " (unfinished) */\n" : " */\n");
		break;
	}
	g->state = G_NONE;
	g->nr_in = g->nr_out = 0;
	g->arglen = 0;
	if (f->in_scratch) {
		const char *s = f->buf;
		size_t n = f->len;

		f->buf = buf;
		f->len = len;
		f->in_scratch = false;
		graph_put(f, g, s, n);
	}
}

/*
 * The output buffer is full behind the first held entry: its line is
 * written as it can be now (an entry whose exit is yet to come: "func() {",
 * its exit later "}"), which frees the buffer up to the next one.
 */
static void graph_force(struct fmt_out *f)
{
	struct graph_thr *first = placed_first(f);

	if (first)
		graph_flush(f, first);
	ob_flush(f);
}

/*
 * @thr's graph state.  An event of another thread than the last one's
 * first writes the line that one holds, if it is complete (a leaf's or an
 * exit's): nothing of the same call can follow an event of another thread,
 * and the lines stay in time order.  An entry held to see whether it is a
 * leaf stays held until its own thread's next event.
 */
static struct graph_thr *graph_thr(struct fmt_out *f, const struct dec_thread *thr)
{
	size_t last = f->g_last;

	if (ev_array_fit(&f->gthr, &f->nr_gthr, thr->num, sizeof(*f->gthr)))
		return NULL;
	if (last && last - 1 != thr->num && last - 1 < f->nr_gthr &&
	    (f->gthr[last - 1].state == G_LEAF || f->gthr[last - 1].state == G_EXIT))
		graph_flush(f, &f->gthr[last - 1]);
	f->g_last = thr->num + 1;
	return &f->gthr[thr->num];
}

/* Keep @ev (and a copy of its arguments) on side @out of @g's call. */
static void graph_keep(struct graph_thr *g, const struct dec_event *ev, bool out)
{
	struct dec_event *evs = out ? g->out : g->in;
	size_t *offs = out ? g->out_off : g->in_off;
	int *nr = out ? &g->nr_out : &g->nr_in;

	if (!ev || *nr == GRAPH_MAX_EV)
		return;
	evs[*nr] = *ev;
	offs[*nr] = g->arglen;
	if (ev->args_len) {
		if (g->arglen + ev->args_len > g->argcap) {
			size_t cap = (g->arglen + ev->args_len) * 2;
			unsigned char *nb = realloc(g->argbuf, cap);

			if (!nb) {
				evs[*nr].args_len = 0;
				goto kept;
			}
			g->argbuf = nb;
			g->argcap = cap;
		}
		memcpy(g->argbuf + g->arglen, ev->args, ev->args_len);
		g->arglen += ev->args_len;
	}
kept:
	evs[*nr].args = NULL;
	++*nr;
}

static int graph_enter(struct fmt_out *f, struct call *c, const struct dec_event *ev, bool more)
{
	struct graph_thr *g = graph_thr(f, c->thr);

	if (!g)
		return -ENOMEM;
	if (c->start > f->last_ts)
		f->last_ts = c->start;
	if (!more || g->state != G_ENTRY) {
		graph_flush(f, g);
		g->state = G_ENTRY;
		g->c = *c;
		if (graph_place(f, g))
			return -ENOMEM;
	}
	graph_keep(g, ev, false);
	return f->err;
}

static int graph_exit(struct fmt_out *f, struct call *c, const struct dec_event *ev, bool more)
{
	struct graph_thr *g = graph_thr(f, c->thr);

	if (!g)
		return -ENOMEM;
	if (c->end > f->last_ts)
		f->last_ts = c->end;
	if (more) {
		if (g->state == G_LEAF || g->state == G_EXIT)
			graph_keep(g, ev, true);
		return f->err;
	}
	/* a call left by an exception, longjmp or exec is no leaf: its end says so */
	if (g->state == G_ENTRY && g->c.start == c->start && g->c.depth == c->depth &&
	    !c->unwound && !c->unfinished) {
		if (!c->shown) {
			g->state = G_NONE;
			g->nr_in = 0;
			g->arglen = 0;
			if (g->placed)
				graph_unplace(f, g);
			return f->err;
		}
		g->state = G_LEAF;
	} else {
		graph_flush(f, g);
		if (!c->shown)
			return f->err;
		g->state = G_EXIT;
	}
	g->c = *c;
	graph_keep(g, ev, true);
	return f->err;
}

static int graph_instant(struct fmt_out *f, const struct dec_event *ev, uint32_t depth)
{
	struct graph_thr *g = graph_thr(f, ev->thr);

	if (!g)
		return -ENOMEM;
	if (ev->ts > f->last_ts)
		f->last_ts = ev->ts;
	graph_flush(f, g);
	graph_prefix(f, ev->thr, depth, ev->ts, 0, false);
	ob_str(f, "/* ");
	ob_str(f, ev->def->event);
	ob_str(f, ": ");
	ob_sym(f, ev->thr, ev->ip, true);
	args(f, ev);
	ob_str(f, " */\n");
	return f->err;
}

/* The Perfetto writer interns names: it asks for one per address it meets. */
static const char *pf_name(void *ctx, const struct dec_event *ev)
{
	struct fmt_out *f = ctx;
	struct dec_sym s;

	if (dec_symbolize(f->d, ev->thr, ev->ip, &s))
		return s.name;
	snprintf(f->name, sizeof(f->name), "0x%llx", (unsigned long long)ev->ip);
	return f->name;
}

/* @ev as an event of no call: a call's further entry or exit events in formats of slices. */
static const struct dec_event *as_instant(struct fmt_out *f, const struct dec_event *ev,
					  struct dec_event *tmp)
{
	if (!f->inst) {
		const struct dec_event_def *defs = dec_events(f->d, &f->nr_inst);

		f->inst = calloc(f->nr_inst ? f->nr_inst : 1, sizeof(*f->inst));
		if (!f->inst)
			return ev;
		memcpy(f->inst, defs, f->nr_inst * sizeof(*f->inst));
		for (int i = 0; i < f->nr_inst; i++)
			f->inst[i].is_slice = false;
	}
	if (ev->def->id >= (uint32_t)f->nr_inst)
		return ev;
	*tmp = *ev;
	tmp->def = &f->inst[ev->def->id];
	return tmp;
}

/* One event of the recording in an event format (all but the graph). */
static int one(struct fmt_out *f, const struct dec_event *ev, bool more)
{
	struct dec_event tmp;

	if (more && (f->fmt == FMT_CHROME || f->fmt == FMT_PERFETTO))
		ev = as_instant(f, ev, &tmp);
	switch (f->fmt) {
	case FMT_TEXT: event_text(f, ev); break;
	case FMT_JSON: event_json(f, ev); break;
	case FMT_CHROME: event_chrome(f, ev); break;
	case FMT_PERFETTO:
		f->count++;
		return pf_event(f->pf, ev);
	}
	f->count++;
	return f->err;
}

static int v_enter(void *ctx, struct call *c, const struct dec_event *ev)
{
	struct fmt_out *f = ctx;

	if (f->fmt == FMT_GRAPH) {
		f->count++;
		return graph_enter(f, c, ev, false);
	}
	return one(f, ev, false);
}

static int v_enter_more(void *ctx, struct call *c, const struct dec_event *ev)
{
	struct fmt_out *f = ctx;

	if (f->fmt == FMT_GRAPH) {
		f->count++;
		return graph_enter(f, c, ev, true);
	}
	return one(f, ev, true);
}

static int v_exit(void *ctx, struct call *c, const struct dec_event *ev)
{
	struct fmt_out *f = ctx;

	if (f->fmt == FMT_GRAPH) {
		f->count += !!ev;
		return graph_exit(f, c, ev, false);
	}
	/* an unfinished call has no exit event to print */
	return ev ? one(f, ev, false) : f->err;
}

static int v_exit_more(void *ctx, struct call *c, const struct dec_event *ev)
{
	struct fmt_out *f = ctx;

	if (f->fmt == FMT_GRAPH) {
		f->count++;
		return graph_exit(f, c, ev, true);
	}
	return one(f, ev, true);
}

static int v_event(void *ctx, const struct dec_event *ev, uint32_t depth)
{
	struct fmt_out *f = ctx;

	if (f->fmt == FMT_GRAPH) {
		f->count++;
		return graph_instant(f, ev, depth);
	}
	return one(f, ev, ev->def->is_slice);
}

static int v_thread_end(void *ctx, const struct dec_thread *thr)
{
	struct fmt_out *f = ctx;

	if (f->fmt == FMT_GRAPH && thr->num < f->nr_gthr)
		graph_flush(f, &f->gthr[thr->num]);
	return f->err;
}

static const struct call_view fmt_view = {
	.thread_end = v_thread_end,
	.enter = v_enter,
	.enter_more = v_enter_more,
	.exit = v_exit,
	.exit_more = v_exit_more,
	.event = v_event,
};

struct fmt_out *fmt_new(int fmt, int fd, struct dec *d, const struct call_filter *flt)
{
	struct fmt_out *f = calloc(1, sizeof(*f));

	if (!f)
		return NULL;
	f->buf = malloc(OUT_BUF);
	f->cs = calls_new(d, flt, &fmt_view, f);
	if (!f->buf || !f->cs)
		goto fail;
	f->fmt = fmt;
	f->fd = fd;
	f->d = d;
	f->first = true;
	if (fmt == FMT_PERFETTO && !(f->pf = pf_new(fd, pf_name, f)))
		goto fail;
	if (fmt == FMT_GRAPH && !(f->scratch = malloc(OUT_BUF)))
		goto fail;
	if (fmt == FMT_CHROME)
		ob_str(f, "{\"traceEvents\":[\n");
	return f;
fail:
	calls_free(f->cs);
	free(f->scratch);
	free(f->buf);
	free(f);
	return NULL;
}

struct calls *fmt_calls(struct fmt_out *f)
{
	return f->cs;
}

void fmt_rewind(struct fmt_out *f, struct dec *d)
{
	f->d = d;
	calls_rewind(f->cs, d);
}

int fmt_thread_end(void *arg, const struct dec_thread *thr)
{
	struct fmt_out *f = arg;

	return calls_thread_end(f->cs, thr);
}

int fmt_event(void *arg, const struct dec_event *ev)
{
	struct fmt_out *f = arg;
	int ret = calls_event(f->cs, ev);

	return ret ? ret : f->err;
}

/*
 * How long the live graph keeps an entry to learn whether it is a leaf
 * while other threads' later lines wait behind it: then it is written as
 * an entry, and its exit later.
 */
#define GRAPH_LIVE_HOLD_NS	100000000ULL

/*
 * A live view shows a round's events when the round is read: the graph's
 * complete lines go out with it, and an entry held behind which other
 * threads' lines have waited GRAPH_LIVE_HOLD_NS of their time.  A thread
 * blocked in a call holds nothing back for longer; a leaf stays one line.
 * (A further event of a return that only a later round holds is not
 * joined to its line.)
 */
int fmt_round_end(struct fmt_out *f)
{
	size_t i;

	for (i = 0; i < f->nr_gthr; i++) {
		struct graph_thr *g = &f->gthr[i];

		if (g->state == G_LEAF || g->state == G_EXIT ||
		    (g->state == G_ENTRY && g->c.start + GRAPH_LIVE_HOLD_NS < f->last_ts))
			graph_flush(f, g);
	}
	ob_flush(f);
	return f->err;
}

uint64_t fmt_count(const struct fmt_out *f)
{
	return f->count;
}

int fmt_finish(struct fmt_out *f)
{
	int err = calls_finish(f->cs);
	size_t i;

	if (f->fmt == FMT_CHROME)
		ob_str(f, "\n],\"displayTimeUnit\":\"ns\"}\n");
	for (i = 0; i < f->nr_gthr; i++)
		graph_flush(f, &f->gthr[i]);
	ob_flush(f);
	if (!err)
		err = f->err;
	for (i = 0; i < f->nr_gthr; i++)
		free(f->gthr[i].argbuf);
	free(f->gthr);
	free(f->placed);
	free(f->scratch);
	if (f->pf) {
		int e = pf_finish(f->pf);

		if (!err)
			err = e;
	}
	calls_free(f->cs);
	free(f->inst);
	free(f->buf);
	free(f);
	return err;
}
