// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * `fhook replay --format perfetto`: decoded events written as Perfetto's
 * native trace format, by hand.
 *
 * A trace file is a Trace message: nothing but its field 1, a TracePacket,
 * repeated, each length-delimited.  We write one packet per event, plus one
 * TrackDescriptor packet per process and per thread the first time it is
 * seen (again if its name changes), and two first packets: a ClockSnapshot
 * making CLOCK_MONOTONIC the trace's clock, and one that starts the packet
 * sequence we use and sets its default clock to CLOCK_MONOTONIC.
 *
 * Events are TrackEvents on their thread's track: the entry and exit events
 * of a slice (dec_event_def.is_slice) become SLICE_BEGIN and SLICE_END,
 * the others INSTANT, named by the function, with the category
 * "group/event", and their arguments as debug annotations.  Names,
 * categories and argument names are interned: the first packet using one
 * carries it in its InternedData with a new iid, later ones only the iid,
 * so a long trace pays for each distinct string once.
 *
 * Nested messages are written in place: a one-byte length is reserved and,
 * when the message ends and is 128 bytes or more, its body is moved up to
 * make room for the longer varint.  Bodies are small (one event), so this
 * costs less than computing sizes in advance, and unlike a padded
 * fixed-width length it wastes no byte in the file.
 *
 * The recorded data comes from the traced program: argument bytes are read
 * only up to args_len, and every string is made valid UTF-8, as protobuf's
 * string type requires.
 */
#include <errno.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <fhook/internal/events.h>

#include "perfetto.h"

/*
 * Field numbers, from Perfetto's protos (google/perfetto, protos/perfetto/).
 *
 * trace/trace.proto, message Trace:
 */
#define F_TRACE_PACKET			1	/* repeated TracePacket packet */
/* trace/trace_packet.proto, message TracePacket: */
#define F_PKT_CLOCK_SNAPSHOT		6	/* ClockSnapshot clock_snapshot */
#define F_PKT_TIMESTAMP			8	/* uint64 timestamp */
#define F_PKT_SEQUENCE_ID		10	/* uint32 trusted_packet_sequence_id */
#define F_PKT_TRACK_EVENT		11	/* TrackEvent track_event */
#define F_PKT_INTERNED_DATA		12	/* InternedData interned_data */
#define F_PKT_SEQUENCE_FLAGS		13	/* uint32 sequence_flags */
#define F_PKT_DEFAULTS			59	/* TracePacketDefaults trace_packet_defaults */
#define F_PKT_TRACK_DESCRIPTOR		60	/* TrackDescriptor track_descriptor */
/* trace/trace_packet.proto, enum TracePacket.SequenceFlags: */
#define SEQ_INCREMENTAL_STATE_CLEARED	1
#define SEQ_NEEDS_INCREMENTAL_STATE	2
/* trace/trace_packet_defaults.proto, message TracePacketDefaults: */
#define F_DEF_TIMESTAMP_CLOCK_ID	58	/* uint32 timestamp_clock_id */
/* trace/clock_snapshot.proto, messages ClockSnapshot and ClockSnapshot.Clock: */
#define F_CS_CLOCKS			1	/* repeated Clock clocks */
#define F_CS_PRIMARY_TRACE_CLOCK	2	/* BuiltinClock primary_trace_clock */
#define F_CLOCK_ID			1	/* uint32 clock_id */
#define F_CLOCK_TIMESTAMP		2	/* uint64 timestamp */
/* common/builtin_clock.proto, enum BuiltinClock (and ClockSnapshot.Clock.BuiltinClocks): */
#define BUILTIN_CLOCK_MONOTONIC		3
/* trace/track_event/track_descriptor.proto, message TrackDescriptor: */
#define F_TD_UUID			1	/* uint64 uuid */
#define F_TD_PROCESS			3	/* ProcessDescriptor process */
#define F_TD_THREAD			4	/* ThreadDescriptor thread */
/* trace/track_event/process_descriptor.proto, message ProcessDescriptor: */
#define F_PD_PID			1	/* int32 pid */
#define F_PD_PROCESS_NAME		6	/* string process_name */
/* trace/track_event/thread_descriptor.proto, message ThreadDescriptor: */
#define F_THD_PID			1	/* int32 pid */
#define F_THD_TID			2	/* int32 tid */
#define F_THD_THREAD_NAME		5	/* string thread_name */
/* trace/track_event/track_event.proto, message TrackEvent: */
#define F_TE_CATEGORY_IIDS		3	/* repeated uint64 category_iids */
#define F_TE_DEBUG_ANNOTATIONS		4	/* repeated DebugAnnotation debug_annotations */
#define F_TE_TYPE			9	/* Type type */
#define F_TE_NAME_IID			10	/* uint64 name_iid */
#define F_TE_TRACK_UUID			11	/* uint64 track_uuid */
/* trace/track_event/track_event.proto, enum TrackEvent.Type: */
#define TYPE_SLICE_BEGIN		1
#define TYPE_SLICE_END			2
#define TYPE_INSTANT			3
/*
 * trace/track_event/track_event.proto, messages EventCategory and EventName,
 * and trace/track_event/debug_annotation.proto, DebugAnnotationName: the same
 * two fields.
 */
#define F_INTERNED_IID			1	/* uint64 iid */
#define F_INTERNED_NAME			2	/* string name */
/* trace/interned_data/interned_data.proto, message InternedData: */
#define F_ID_EVENT_CATEGORIES		1	/* repeated EventCategory event_categories */
#define F_ID_EVENT_NAMES		2	/* repeated EventName event_names */
#define F_ID_DEBUG_ANNOTATION_NAMES	3	/* repeated DebugAnnotationName ... */
/* trace/track_event/debug_annotation.proto, message DebugAnnotation: */
#define F_DA_NAME_IID			1	/* uint64 name_iid */
#define F_DA_BOOL_VALUE			2	/* bool bool_value */
#define F_DA_UINT_VALUE			3	/* uint64 uint_value */
#define F_DA_INT_VALUE			4	/* int64 int_value */
#define F_DA_STRING_VALUE		6	/* string string_value */
#define F_DA_POINTER_VALUE		7	/* uint64 pointer_value */
#define F_DA_ARRAY_VALUES		12	/* repeated DebugAnnotation array_values */

/* Protobuf wire types. */
#define WT_VARINT	0
#define WT_LEN		2

/* Our one packet sequence (0 is invalid). */
#define PF_SEQUENCE_ID	1

/* Write the buffer out once a packet ends beyond this. */
#define PF_FLUSH_AT	(1u << 20)
#define PF_BUF_INIT	(PF_FLUSH_AT + (64u << 10))

/* Deepest nesting: Trace.packet > track_event > debug_annotations > array_values. */
#define PF_MAX_NEST	8

enum { T_CATEGORY, T_NAME, T_ARG_NAME, T_NR };

static const unsigned int interned_field[T_NR] = {
	[T_CATEGORY] = F_ID_EVENT_CATEGORIES,
	[T_NAME] = F_ID_EVENT_NAMES,
	[T_ARG_NAME] = F_ID_DEBUG_ANNOTATION_NAMES,
};

/* An interned string; key NULL: a free slot. */
struct pf_str {
	char *key;
	uint64_t hash;
	uint64_t iid;
};

struct pf_strtab {
	struct pf_str *slot;
	size_t cap, nr;		/* cap: 0 or a power of two */
	uint64_t last_iid;	/* iids are per table, from 1 */
};

/* A process (key pid + 1) or a thread (key num + 1) and what we told of it; key 0: free. */
struct pf_track {
	uint64_t key;
	uint32_t pid, tid;
	char name[16];
};

struct pf_tracktab {
	struct pf_track *slot;
	size_t cap, nr;
};

/* A string interned while building the current packet: its InternedData entry is due. */
struct pf_fresh {
	int table;
	const char *s;
	uint64_t iid;
};

struct pf_writer {
	int fd;
	int err;		/* sticky: the first error */
	bool write_failed;	/* then the file has a hole: write nothing more */
	pf_name_fn name_of;
	void *ctx;

	unsigned char *buf;
	size_t len, cap;
	size_t pkt;		/* where the packet being built starts */
	size_t nest[PF_MAX_NEST];
	int depth;

	struct pf_strtab tab[T_NR];
	struct pf_tracktab procs, threads;

	struct pf_fresh *fresh;
	size_t nr_fresh, cap_fresh;

	char *cat;		/* scratch for "group/event" */
	size_t cat_cap;
};

/* ---- output buffer and protobuf encoding ---- */

static int write_all(int fd, const unsigned char *p, size_t n)
{
	while (n) {
		ssize_t r = write(fd, p, n);

		if (r < 0) {
			if (errno == EINTR)
				continue;
			return -errno;
		}
		if (r == 0)
			return -EIO;
		p += r;
		n -= r;
	}
	return 0;
}

static int flush(struct pf_writer *w)
{
	int ret;

	if (w->write_failed)
		return w->err;
	ret = write_all(w->fd, w->buf, w->len);
	w->len = 0;
	if (ret) {
		w->write_failed = true;
		if (!w->err)
			w->err = ret;
	}
	return ret;
}

/*
 * Make room for @n more bytes.  On failure the error sticks and every put
 * below becomes a no-op, so a packet is checked once, at its end.
 */
static bool room(struct pf_writer *w, size_t n)
{
	size_t cap;
	unsigned char *p;

	if (w->err)
		return false;
	if (w->cap - w->len >= n)
		return true;
	cap = w->cap * 2;
	if (cap < w->len + n)
		cap = w->len + n;
	p = realloc(w->buf, cap);
	if (!p) {
		w->err = -ENOMEM;
		return false;
	}
	w->buf = p;
	w->cap = cap;
	return true;
}

static unsigned int varint_len(uint64_t v)
{
	unsigned int n = 1;

	while (v >= 0x80) {
		v >>= 7;
		n++;
	}
	return n;
}

static unsigned int encode_varint(unsigned char *p, uint64_t v)
{
	unsigned int n = 0;

	while (v >= 0x80) {
		p[n++] = (unsigned char)(v | 0x80);
		v >>= 7;
	}
	p[n++] = (unsigned char)v;
	return n;
}

static void put_varint(struct pf_writer *w, uint64_t v)
{
	if (room(w, 10))
		w->len += encode_varint(w->buf + w->len, v);
}

static void put_tag(struct pf_writer *w, unsigned int field, unsigned int wire_type)
{
	put_varint(w, (uint64_t)field << 3 | wire_type);
}

static void put_uint(struct pf_writer *w, unsigned int field, uint64_t v)
{
	put_tag(w, field, WT_VARINT);
	put_varint(w, v);
}

/* int32 and int64 fields: negative values are sign-extended to 64 bits. */
static void put_int(struct pf_writer *w, unsigned int field, int64_t v)
{
	put_uint(w, field, (uint64_t)v);
}

/* Open a length-delimited field: its length byte is reserved, fixed in end(). */
static void begin(struct pf_writer *w, unsigned int field)
{
	put_tag(w, field, WT_LEN);
	if (!room(w, 1))
		return;
	if (w->depth == PF_MAX_NEST) {
		w->err = -EOVERFLOW;	/* a bug of ours, not of the data */
		return;
	}
	w->nest[w->depth++] = w->len;
	w->buf[w->len++] = 0;
}

static void end(struct pf_writer *w)
{
	size_t off, body;
	unsigned int n;

	if (w->err || !w->depth)
		return;
	off = w->nest[--w->depth];
	body = w->len - off - 1;
	n = varint_len(body);
	if (n > 1) {
		if (!room(w, n - 1))
			return;
		memmove(w->buf + off + n, w->buf + off + 1, body);
		w->len += n - 1;
	}
	encode_varint(w->buf + off, body);
}

/*
 * The length of the well-formed UTF-8 sequence (RFC 3629: no overlong
 * forms, surrogates or code points above U+10FFFF) at @s, or 0.  NUL counts
 * as malformed: C strings end there, so one seen here is data.
 */
static size_t utf8_seq(const unsigned char *s, size_t n)
{
	unsigned char c = s[0], lo = 0x80, hi = 0xbf;
	size_t k, i;

	if (c >= 0x01 && c < 0x80)
		return 1;
	if (c >= 0xc2 && c <= 0xdf) {
		k = 2;
	} else if (c >= 0xe0 && c <= 0xef) {
		k = 3;
		if (c == 0xe0)
			lo = 0xa0;
		else if (c == 0xed)
			hi = 0x9f;
	} else if (c >= 0xf0 && c <= 0xf4) {
		k = 4;
		if (c == 0xf0)
			lo = 0x90;
		else if (c == 0xf4)
			hi = 0x8f;
	} else {
		return 0;
	}
	if (n < k || s[1] < lo || s[1] > hi)
		return 0;
	for (i = 2; i < k; i++)
		if ((s[i] & 0xc0) != 0x80)
			return 0;
	return k;
}

/*
 * A string field.  Bytes that are not UTF-8 become the text \xNN (hex):
 * dropping or replacing them (U+FFFD) would hide what the program had.
 */
static void put_str(struct pf_writer *w, unsigned int field, const char *str, size_t n)
{
	static const char hex[] = "0123456789abcdef";
	const unsigned char *s = (const unsigned char *)str;
	unsigned char *o;
	size_t i = 0, k;

	begin(w, field);
	if (!room(w, 4 * n))	/* the worst case: every byte escaped */
		return;
	o = w->buf + w->len;
	while (i < n) {
		k = utf8_seq(s + i, n - i);
		if (k) {
			memcpy(o, s + i, k);
			o += k;
			i += k;
			continue;
		}
		*o++ = '\\';
		*o++ = 'x';
		*o++ = hex[s[i] >> 4];
		*o++ = hex[s[i] & 15];
		i++;
	}
	w->len = o - w->buf;
	end(w);
}

static void put_cstr(struct pf_writer *w, unsigned int field, const char *s)
{
	put_str(w, field, s, strlen(s));
}

/* Start a TracePacket; false if the writer has failed. */
static bool packet_begin(struct pf_writer *w)
{
	if (w->err)
		return false;
	if (w->len >= PF_FLUSH_AT && flush(w))
		return false;
	w->pkt = w->len;
	w->depth = 0;
	w->nr_fresh = 0;
	begin(w, F_TRACE_PACKET);
	return !w->err;
}

/* End it, on our sequence; on an error drop what was built of it. */
static int packet_end(struct pf_writer *w, unsigned int flags)
{
	put_uint(w, F_PKT_SEQUENCE_ID, PF_SEQUENCE_ID);
	if (flags)
		put_uint(w, F_PKT_SEQUENCE_FLAGS, flags);
	end(w);
	if (w->err) {
		w->len = w->pkt;
		w->depth = 0;
	}
	return w->err;
}

/* ---- interning ---- */

static uint64_t str_hash(const char *s, size_t *len)
{
	const unsigned char *p = (const unsigned char *)s;
	uint64_t h = 0xcbf29ce484222325ull;	/* FNV-1a */

	while (*p) {
		h ^= *p++;
		h *= 0x100000001b3ull;
	}
	*len = (const char *)p - s;
	return h;
}

static int strtab_grow(struct pf_strtab *t)
{
	size_t cap = t->cap ? t->cap * 2 : 64, i, j;
	struct pf_str *slot = calloc(cap, sizeof(*slot));

	if (!slot)
		return -ENOMEM;
	for (i = 0; i < t->cap; i++) {
		if (!t->slot[i].key)
			continue;
		for (j = t->slot[i].hash & (cap - 1); slot[j].key; j = (j + 1) & (cap - 1))
			;
		slot[j] = t->slot[i];
	}
	free(t->slot);
	t->slot = slot;
	t->cap = cap;
	return 0;
}

/*
 * The iid of @s, interning it if new (then it is queued for this packet's
 * InternedData).  0 on an error, which sticks.
 */
static uint64_t intern(struct pf_writer *w, int table, const char *s)
{
	struct pf_strtab *t = &w->tab[table];
	struct pf_str *e;
	size_t len, i;
	uint64_t h;

	if (w->err)
		return 0;
	h = str_hash(s, &len);
	/* at most half full: probes stay short */
	if ((t->nr + 1) * 2 > t->cap && strtab_grow(t))
		goto nomem;
	for (i = h & (t->cap - 1);; i = (i + 1) & (t->cap - 1)) {
		e = &t->slot[i];
		if (!e->key)
			break;
		if (e->hash == h && !strcmp(e->key, s))
			return e->iid;
	}
	if (w->nr_fresh == w->cap_fresh) {
		size_t cap = w->cap_fresh ? w->cap_fresh * 2 : 16;
		struct pf_fresh *f = realloc(w->fresh, cap * sizeof(*f));

		if (!f)
			goto nomem;
		w->fresh = f;
		w->cap_fresh = cap;
	}
	e->key = malloc(len + 1);
	if (!e->key)
		goto nomem;
	memcpy(e->key, s, len + 1);
	e->hash = h;
	e->iid = ++t->last_iid;
	t->nr++;
	w->fresh[w->nr_fresh++] = (struct pf_fresh){ table, e->key, e->iid };
	return e->iid;
nomem:
	w->err = -ENOMEM;
	return 0;
}

/* The InternedData of the strings the current packet was first to use. */
static void put_interned(struct pf_writer *w)
{
	size_t i;
	int t;

	if (!w->nr_fresh)
		return;
	begin(w, F_PKT_INTERNED_DATA);
	for (t = 0; t < T_NR; t++) {
		for (i = 0; i < w->nr_fresh; i++) {
			if (w->fresh[i].table != t)
				continue;
			begin(w, interned_field[t]);
			put_uint(w, F_INTERNED_IID, w->fresh[i].iid);
			put_cstr(w, F_INTERNED_NAME, w->fresh[i].s);
			end(w);
		}
	}
	end(w);
}

static uint64_t intern_category(struct pf_writer *w, const struct dec_event_def *def)
{
	const char *g = def->group ? def->group : "?";
	const char *e = def->event ? def->event : "?";
	size_t gl = strlen(g), el = strlen(e);

	if (gl + el + 2 > w->cat_cap) {
		char *p = realloc(w->cat, gl + el + 2);

		if (!p) {
			w->err = -ENOMEM;
			return 0;
		}
		w->cat = p;
		w->cat_cap = gl + el + 2;
	}
	memcpy(w->cat, g, gl);
	w->cat[gl] = '/';
	memcpy(w->cat + gl + 1, e, el + 1);
	return intern(w, T_CATEGORY, w->cat);
}

/* ---- tracks ---- */

static struct pf_track *track_get(struct pf_writer *w, struct pf_tracktab *t, uint64_t key,
				  bool *fresh)
{
	size_t i, j, cap;
	struct pf_track *slot;

	if ((t->nr + 1) * 2 > t->cap) {
		cap = t->cap ? t->cap * 2 : 16;
		slot = calloc(cap, sizeof(*slot));
		if (!slot) {
			w->err = -ENOMEM;
			return NULL;
		}
		for (i = 0; i < t->cap; i++) {
			if (!t->slot[i].key)
				continue;
			for (j = (t->slot[i].key * 0x9e3779b97f4a7c15ull) >> 32 & (cap - 1);
			     slot[j].key; j = (j + 1) & (cap - 1))
				;
			slot[j] = t->slot[i];
		}
		free(t->slot);
		t->slot = slot;
		t->cap = cap;
	}
	for (i = (key * 0x9e3779b97f4a7c15ull) >> 32 & (t->cap - 1);; i = (i + 1) & (t->cap - 1)) {
		if (t->slot[i].key == key) {
			*fresh = false;
			return &t->slot[i];
		}
		if (!t->slot[i].key)
			break;
	}
	t->slot[i].key = key;
	t->nr++;
	*fresh = true;
	return &t->slot[i];
}

/*
 * Track uuids: a process's is even, from its pid, a thread's odd, from the
 * recording's number for it (which tells apart two threads that had the
 * same tid at different times).  Both stay small: short varints.
 */
static uint64_t proc_uuid(uint32_t pid)
{
	return ((uint64_t)pid + 1) << 1;
}

static uint64_t thread_uuid(uint32_t num)
{
	return (uint64_t)num << 1 | 1;
}

static int emit_process(struct pf_writer *w, const struct pf_track *p)
{
	if (!packet_begin(w))
		return w->err;
	begin(w, F_PKT_TRACK_DESCRIPTOR);
	put_uint(w, F_TD_UUID, proc_uuid(p->pid));
	begin(w, F_TD_PROCESS);
	put_int(w, F_PD_PID, (int32_t)p->pid);
	put_str(w, F_PD_PROCESS_NAME, p->name, strnlen(p->name, sizeof(p->name)));
	end(w);
	end(w);
	return packet_end(w, SEQ_NEEDS_INCREMENTAL_STATE);
}

static int emit_thread(struct pf_writer *w, const struct pf_track *t, uint32_t num)
{
	if (!packet_begin(w))
		return w->err;
	begin(w, F_PKT_TRACK_DESCRIPTOR);
	put_uint(w, F_TD_UUID, thread_uuid(num));
	begin(w, F_TD_THREAD);
	put_int(w, F_THD_PID, (int32_t)t->pid);
	put_int(w, F_THD_TID, (int32_t)t->tid);
	put_str(w, F_THD_THREAD_NAME, t->name, strnlen(t->name, sizeof(t->name)));
	end(w);
	end(w);
	return packet_end(w, SEQ_NEEDS_INCREMENTAL_STATE);
}

/*
 * The track of @thr's events, described first if new or changed (a thread
 * renamed by prctl, or a number reused by a malformed recording).  A
 * process is named after the first of its threads seen, then after its
 * main thread.
 */
static uint64_t thread_track(struct pf_writer *w, const struct dec_thread *thr)
{
	struct pf_track *t, *p;
	bool fresh;

	t = track_get(w, &w->threads, (uint64_t)thr->num + 1, &fresh);
	if (!t)
		return 0;
	if (!fresh && t->pid == thr->pid && t->tid == thr->tid &&
	    !strncmp(t->name, thr->comm, sizeof(t->name)))
		return thread_uuid(thr->num);
	t->pid = thr->pid;
	t->tid = thr->tid;
	memcpy(t->name, thr->comm, sizeof(t->name));

	p = track_get(w, &w->procs, (uint64_t)thr->pid + 1, &fresh);
	if (!p)
		return 0;
	if (fresh || (thr->tid == thr->pid && strncmp(p->name, thr->comm, sizeof(p->name)))) {
		p->pid = thr->pid;
		p->tid = thr->pid;
		memcpy(p->name, thr->comm, sizeof(p->name));
		if (emit_process(w, p))
			return 0;
	}
	if (emit_thread(w, t, thr->num))
		return 0;
	return thread_uuid(thr->num);
}

/* ---- events ---- */

/* One scalar of a fixed-size type, as the value of the open annotation. */
static void put_value(struct pf_writer *w, int type, const unsigned char *p, unsigned int size)
{
	uint64_t v = 0;
	char c;

	memcpy(&v, p, size);	/* the recording is little-endian, as the host */
	switch (type) {
	case FHOOK_EVT_U8: case FHOOK_EVT_U16: case FHOOK_EVT_U32: case FHOOK_EVT_U64:
		put_uint(w, F_DA_UINT_VALUE, v);
		break;
	case FHOOK_EVT_S8: put_int(w, F_DA_INT_VALUE, (int8_t)v); break;
	case FHOOK_EVT_S16: put_int(w, F_DA_INT_VALUE, (int16_t)v); break;
	case FHOOK_EVT_S32: put_int(w, F_DA_INT_VALUE, (int32_t)v); break;
	case FHOOK_EVT_S64: put_int(w, F_DA_INT_VALUE, (int64_t)v); break;
	case FHOOK_EVT_CHAR:
		c = (char)v;
		put_str(w, F_DA_STRING_VALUE, &c, 1);
		break;
	default:
		/* x8..x64 and symbol: the viewer shows pointer values in hex */
		put_uint(w, F_DA_POINTER_VALUE, v);
		break;
	}
}

/*
 * The arguments of @ev as debug annotations, decoded as record_fetch.c laid them
 * out: each 8-byte aligned; a string is a u32 length (0: a fault) and its
 * bytes with the NUL; any other type is its values and a fault byte.  An
 * argument cut short by args_len shows as "(bad)" and ends the list, as in
 * the text format.
 */
static void put_args(struct pf_writer *w, const struct dec_event *ev)
{
	const struct dec_event_def *def = ev->def;
	const unsigned char *p = ev->args, *end_p = p + ev->args_len;
	int i;

	if (!p || !def->args)
		return;
	for (i = 0; i < def->nr_args && p < end_p; i++) {
		const struct dec_arg *a = &def->args[i];
		size_t left = end_p - p, need, step;
		unsigned int size, n, k;

		begin(w, F_TE_DEBUG_ANNOTATIONS);
		put_uint(w, F_DA_NAME_IID, intern(w, T_ARG_NAME, a->name ? a->name : "?"));
		if (fhook_ev_type_is_string(a->type)) {
			const char *s = (const char *)p + 4;
			uint32_t len;

			if (left < 4)
				goto bad;
			memcpy(&len, p, 4);
			if (len > left - 4)
				goto bad;
			if (!len) {
				put_cstr(w, F_DA_STRING_VALUE, "(fault)");
			} else if (a->type == FHOOK_EVT_SYMSTR) {
				struct dec_event at = *ev;
				uint64_t addr;

				if (len < 8)
					goto bad;
				memcpy(&addr, s, 8);
				at.ip = addr;
				put_cstr(w, F_DA_STRING_VALUE, w->name_of(w->ctx, &at) ?: "?");
			} else {
				/* the recorder's strings are shorter: only a bad one is cut */
				put_str(w, F_DA_STRING_VALUE, s,
					strnlen(s, len < FHOOK_EV_MAX_STRING_SIZE ?
						   len : FHOOK_EV_MAX_STRING_SIZE));
			}
			step = (4 + (size_t)len + 7) & ~(size_t)7;
		} else {
			size = fhook_ev_type_size(a->type);
			n = a->count ? a->count : 1;
			need = (size_t)size * n + 1;
			/* put_value() reads at most 8 bytes a value */
			if (!size || size > 8 || left < need)
				goto bad;
			if (p[need - 1]) {
				put_cstr(w, F_DA_STRING_VALUE, "(fault)");
			} else if (!a->count) {
				put_value(w, a->type, p, size);
			} else {
				for (k = 0; k < n; k++) {
					begin(w, F_DA_ARRAY_VALUES);
					put_value(w, a->type, p + (size_t)k * size, size);
					end(w);
				}
			}
			step = (need + 7) & ~(size_t)7;
		}
		end(w);
		p = step < left ? p + step : end_p;
		continue;
bad:
		put_cstr(w, F_DA_STRING_VALUE, "(bad)");
		end(w);
		break;
	}
}

int pf_event(struct pf_writer *w, const struct dec_event *ev)
{
	const struct dec_event_def *def = ev->def;
	uint64_t uuid = 0;
	int type;

	if (w->err)
		return w->err;
	if (!def)
		return -EINVAL;
	/*
	 * An exit whose entry was lost (ip 0) would end whatever slice is
	 * open on the track, its caller's: it shows as an instant instead.
	 */
	if (def->is_slice && !def->is_return)
		type = TYPE_SLICE_BEGIN;
	else if (def->is_slice && ev->ip)
		type = TYPE_SLICE_END;
	else
		type = TYPE_INSTANT;
	if (ev->thr) {
		uuid = thread_track(w, ev->thr);
		if (w->err)
			return w->err;
	}

	if (!packet_begin(w))
		return w->err;
	put_uint(w, F_PKT_TIMESTAMP, ev->ts);
	begin(w, F_PKT_TRACK_EVENT);
	put_uint(w, F_TE_TYPE, type);
	if (uuid)	/* else the trace-global track */
		put_uint(w, F_TE_TRACK_UUID, uuid);
	/* an end needs no name: the viewer takes the begin's */
	if (type != TYPE_SLICE_END) {
		const char *fn = w->name_of(w->ctx, ev);

		put_uint(w, F_TE_NAME_IID, intern(w, T_NAME, fn ? fn : "?"));
		put_uint(w, F_TE_CATEGORY_IIDS, intern_category(w, def));
	}
	put_args(w, ev);
	if (def->is_return && ev->unwound) {
		/* left by an exception, longjmp or cancellation, not a return */
		begin(w, F_TE_DEBUG_ANNOTATIONS);
		put_uint(w, F_DA_NAME_IID, intern(w, T_ARG_NAME, "unwound"));
		put_uint(w, F_DA_BOOL_VALUE, 1);
		end(w);
	}
	end(w);
	put_interned(w);
	return packet_end(w, SEQ_NEEDS_INCREMENTAL_STATE);
}

/* ---- the writer ---- */

static void pf_free(struct pf_writer *w)
{
	size_t i;
	int t;

	for (t = 0; t < T_NR; t++) {
		for (i = 0; i < w->tab[t].cap; i++)
			free(w->tab[t].slot[i].key);
		free(w->tab[t].slot);
	}
	free(w->procs.slot);
	free(w->threads.slot);
	free(w->fresh);
	free(w->cat);
	free(w->buf);
	free(w);
}

struct pf_writer *pf_new(int fd, pf_name_fn name_of, void *ctx)
{
	struct pf_writer *w;

	if (!name_of) {
		errno = EINVAL;
		return NULL;
	}
	w = calloc(1, sizeof(*w));
	if (!w)
		goto nomem;
	w->fd = fd;
	w->name_of = name_of;
	w->ctx = ctx;
	w->buf = malloc(PF_BUF_INIT);
	if (!w->buf)
		goto nomem;
	w->cap = PF_BUF_INIT;

	/*
	 * Trace processor puts every timestamp on one trace clock, BOOTTIME
	 * unless a ClockSnapshot names another: with no snapshot relating
	 * MONOTONIC to BOOTTIME, it would drop all our events.  So the first
	 * packet names MONOTONIC (the one clock reading it must carry relates
	 * nothing: there is no other clock).
	 */
	packet_begin(w);
	begin(w, F_PKT_CLOCK_SNAPSHOT);
	begin(w, F_CS_CLOCKS);
	put_uint(w, F_CLOCK_ID, BUILTIN_CLOCK_MONOTONIC);
	put_uint(w, F_CLOCK_TIMESTAMP, 0);
	end(w);
	put_uint(w, F_CS_PRIMARY_TRACE_CLOCK, BUILTIN_CLOCK_MONOTONIC);
	end(w);
	packet_end(w, 0);
	/*
	 * The second starts the sequence's incremental state (interned strings
	 * and defaults) and makes CLOCK_MONOTONIC the clock of every later
	 * packet's timestamp; the later ones say they depend on it.
	 */
	packet_begin(w);
	begin(w, F_PKT_DEFAULTS);
	put_uint(w, F_DEF_TIMESTAMP_CLOCK_ID, BUILTIN_CLOCK_MONOTONIC);
	end(w);
	if (packet_end(w, SEQ_INCREMENTAL_STATE_CLEARED))
		goto nomem;
	return w;
nomem:
	if (w)
		pf_free(w);
	errno = ENOMEM;
	return NULL;
}

int pf_finish(struct pf_writer *w)
{
	int ret;

	if (!w)
		return -EINVAL;
	/* after -ENOMEM the whole packets before it are still worth having */
	flush(w);
	ret = w->err;
	pf_free(w);
	return ret;
}
