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
#include "format.h"
#include "perfetto.h"
#include "ring.h"

#define OUT_BUF		(1U << 20)

struct graph_thr {
	uint64_t *ts;		/* entry time by depth, + 1; 0: none */
	size_t cap;
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
	struct dec_event pending;
	bool have_pending;
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

static void ob_flush(struct fmt_out *f)
{
	size_t off = 0;

	while (off < f->len && !f->err) {
		ssize_t w = write(f->fd, f->buf + off, f->len - off);

		if (w < 0) {
			if (errno != EINTR)
				f->err = -errno;
			continue;
		}
		off += w;
	}
	f->len = 0;
}

/* Room for @n more bytes (n < OUT_BUF). */
static inline char *ob_room(struct fmt_out *f, size_t n)
{
	if (f->len + n > OUT_BUF)
		ob_flush(f);
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
	char tmp[24];
	int n = 0, k = 0;

	do {
		tmp[n++] = (char)('0' + v % 10);
		v /= 10;
	} while (v);
	while (n + k < width)
		p[k++] = pad;
	while (n)
		p[k++] = tmp[--n];
	return k;
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

/* Decode the arguments of @ev into "name=value" pairs (or JSON members). */
static void args(struct fmt_out *f, const struct dec_event *ev)
{
	const struct dec_event_def *def = ev->def;
	const unsigned char *p = ev->args, *end = ev->args + ev->args_len;
	bool text = f->fmt == FMT_TEXT;
	int i;
	unsigned int k;

	for (i = 0; i < def->nr_args && p && p < end; i++) {
		const struct dec_arg *a = &def->args[i];

		if (text) {
			ob_char(f, ' ');
			ob_str(f, a->name);
			ob_char(f, '=');
		} else {
			if (i)
				ob_char(f, ',');
			ob_json_str(f, a->name, strlen(a->name));
			ob_char(f, ':');
		}
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
	ob_u64(f, ts / 1000000000ULL, width, ' ');
	ob_char(f, '.');
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
	ts_sec_usec(f, ev->ts, 0);
	ob_str(f, ",\"group\":\"");
	ob_str(f, ev->def->group);
	ob_str(f, "\",\"event\":\"");
	ob_str(f, ev->def->event);
	ob_str(f, ev->def->is_return ? "\",\"type\":\"exit\",\"func\":" : "\",\"type\":\"entry\",\"func\":");
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
	ob_str(f, ",\"cat\":\"");
	ob_str(f, def->group);
	ob_char(f, '/');
	ob_str(f, def->event);
	ob_str(f, !def->is_slice ? "\",\"ph\":\"i\",\"s\":\"t\"," :
		  def->is_return ? "\",\"ph\":\"E\"," : "\",\"ph\":\"B\",");
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
 * The call graph: "SECS.USECS  DURATION [TID] | func() {" per entry,
 * "} /" "* func *" "/" with the call's duration per exit, and a call that
 * made no traced call on one line, "func();" (an entry is held back until
 * the next event shows whether it is a leaf).
 */
static void graph_dur(struct fmt_out *f, uint64_t ns, bool known)
{
	char buf[32];

	if (!known)
		snprintf(buf, sizeof(buf), "%10s", "");
	else if (ns < 1000000)
		snprintf(buf, sizeof(buf), "%7.3f us", ns / 1e3);
	else if (ns < 1000000000)
		snprintf(buf, sizeof(buf), "%7.3f ms", ns / 1e6);
	else
		snprintf(buf, sizeof(buf), "%7.3f  s", ns / 1e9);
	ob_str(f, buf);
}

static void graph_prefix(struct fmt_out *f, const struct dec_event *ev, uint64_t ts,
			 uint64_t dur, bool known)
{
	uint32_t i, depth = ev->depth < 256 ? ev->depth : 256;

	ts_sec_usec(f, ts, 5);
	ob_char(f, ' ');
	graph_dur(f, dur, known);
	ob_str(f, " [");
	{
		char *p = ob_room(f, 32);

		f->len += fmt_u64(p, ev->thr->tid, 6, ' ');
	}
	ob_str(f, "] | ");
	for (i = 0; i < depth; i++)
		ob_str(f, "  ");
}

/* The function's name, with "()" unless a demangled C++ name brings its own. */
static void graph_name(struct fmt_out *f, const struct dec_event *ev)
{
	size_t start;

	ob_room(f, 4096);
	start = f->len;
	ob_sym(f, ev->thr, ev->ip, true);
	if (!memchr(f->buf + start, '(', f->len - start))
		ob_str(f, "()");
}

/* Where entry times wait for their exits: per thread, by depth. */
static uint64_t *graph_slot(struct fmt_out *f, const struct dec_event *ev)
{
	struct graph_thr *g;

	if (ev->depth >= 1U << 16 ||
	    ev_array_fit(&f->gthr, &f->nr_gthr, ev->thr->num, sizeof(*f->gthr)))
		return NULL;
	g = &f->gthr[ev->thr->num];
	if (ev_array_fit(&g->ts, &g->cap, ev->depth, sizeof(*g->ts)))
		return NULL;
	return &g->ts[ev->depth];
}

static void graph_flush_pending(struct fmt_out *f)
{
	if (!f->have_pending)
		return;
	f->have_pending = false;
	graph_prefix(f, &f->pending, f->pending.ts, 0, false);
	graph_name(f, &f->pending);
	ob_str(f, " {\n");
}

static void event_graph(struct fmt_out *f, const struct dec_event *ev)
{
	const struct dec_event_def *def = ev->def;
	uint64_t *slot;

	if (f->have_pending) {
		const struct dec_event *p = &f->pending;

		if (ev->thr == p->thr && def->is_slice && def->is_return && ev->depth == p->depth &&
		    (!ev->ip || ev->ip == p->ip) && !ev->args_len && !ev->unwound) {
			f->have_pending = false;
			graph_prefix(f, p, p->ts, ev->ts - p->ts, ev->ts >= p->ts);
			graph_name(f, p);
			ob_str(f, ";\n");
			return;
		}
		graph_flush_pending(f);
	}
	if (!def->is_slice) {
		graph_prefix(f, ev, ev->ts, 0, false);
		ob_str(f, "/* ");
		ob_str(f, def->event);
		ob_str(f, ": ");
		ob_sym(f, ev->thr, ev->ip, true);
		args(f, ev);
		ob_str(f, " */\n");
		return;
	}
	slot = graph_slot(f, ev);
	if (!def->is_return) {
		if (slot)
			*slot = ev->ts + 1;
		if (!ev->args_len) {
			/* the arguments of a held-back event would not outlive this batch */
			f->pending = *ev;
			f->pending.args = NULL;
			f->have_pending = true;
			return;
		}
		graph_prefix(f, ev, ev->ts, 0, false);
		graph_name(f, ev);
		ob_str(f, " {");
		args(f, ev);
		ob_char(f, '\n');
		return;
	}
	graph_prefix(f, ev, ev->ts, slot && *slot && *slot - 1 <= ev->ts ? ev->ts - (*slot - 1) : 0,
		     slot && *slot && *slot - 1 <= ev->ts);
	ob_str(f, ev->unwound ? "} /* unwound: " : "} /* ");
	ob_sym(f, ev->thr, ev->ip, true);
	ob_str(f, " */");
	args(f, ev);
	ob_char(f, '\n');
	if (slot)
		*slot = 0;
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

struct fmt_out *fmt_new(int fmt, int fd, struct dec *d)
{
	struct fmt_out *f = calloc(1, sizeof(*f));

	if (!f)
		return NULL;
	f->buf = malloc(OUT_BUF);
	if (!f->buf) {
		free(f);
		return NULL;
	}
	f->fmt = fmt;
	f->fd = fd;
	f->d = d;
	f->first = true;
	if (fmt == FMT_PERFETTO && !(f->pf = pf_new(fd, pf_name, f))) {
		free(f->buf);
		free(f);
		return NULL;
	}
	if (fmt == FMT_CHROME)
		ob_str(f, "{\"traceEvents\":[\n");
	return f;
}

int fmt_event(void *arg, const struct dec_event *ev)
{
	struct fmt_out *f = arg;

	switch (f->fmt) {
	case FMT_TEXT: event_text(f, ev); break;
	case FMT_JSON: event_json(f, ev); break;
	case FMT_CHROME: event_chrome(f, ev); break;
	case FMT_PERFETTO:
		f->count++;
		return pf_event(f->pf, ev);
	default: event_graph(f, ev); break;
	}
	f->count++;
	return f->err;
}

uint64_t fmt_count(const struct fmt_out *f)
{
	return f->count;
}

int fmt_finish(struct fmt_out *f)
{
	int err;

	if (f->fmt == FMT_CHROME)
		ob_str(f, "\n],\"displayTimeUnit\":\"ns\"}\n");
	if (f->fmt == FMT_GRAPH)
		graph_flush_pending(f);
	ob_flush(f);
	err = f->err;
	while (f->nr_gthr)
		free(f->gthr[--f->nr_gthr].ts);
	free(f->gthr);
	if (f->pf) {
		int e = pf_finish(f->pf);

		if (!err)
			err = e;
	}
	free(f->buf);
	free(f);
	return err;
}
