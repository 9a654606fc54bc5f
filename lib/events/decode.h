/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Reading a recording: the blocks of lib/events/recfile.h fed one by one
 * (from a file, or live from the drain), and the events of all threads
 * given back in time order, decoded: time in CLOCK_MONOTONIC ns, the
 * thread and its process, the function of an exit found from its entry,
 * and each event's call depth on its thread.
 *
 * The data handed in is never trusted: the traced program wrote it.  A
 * record that does not parse ends that data block and is counted.
 */
#ifndef FHOOK_EV_DECODE_H
#define FHOOK_EV_DECODE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "recfile.h"

struct dec;
struct ev_file;
struct rec_info;

struct dec_arg {
	char *name;
	int type;		/* FHOOK_EVT_* */
	unsigned int count;	/* array length, 0: scalar */
};

struct dec_event_def {
	uint32_t id;
	bool is_return;
	bool is_slice;		/* the first entry and first exit event of a symbol: a slice */
	char *group, *event, *symbol;
	int nr_args;
	struct dec_arg *args;
};

struct dec_obj {
	uint64_t base;
	struct dec_file *file;
};

struct dec_proc {
	uint64_t seq;
	uint32_t pid;
	uint32_t nr_objs;
	struct dec_obj *objs;
};

struct dec_thread {
	uint32_t num;		/* the recording's number for it */
	uint32_t pid, tid;
	char comm[16];
	const struct dec_proc *proc;	/* NULL: addresses print as numbers */
	uint64_t events;	/* decoded so far */
};

struct dec_event {
	uint64_t ts;		/* CLOCK_MONOTONIC, ns */
	const struct dec_thread *thr;
	const struct dec_event_def *def;
	uint32_t cpu;
	uint32_t depth;		/* entries open below it on its thread */
	uint64_t ip;		/* the function (0: unknown, an exit whose entry was lost) */
	uint64_t ret_ip;	/* exit events: where it returned to */
	bool unwound;		/* an exit made by an exception, longjmp or cancellation */
	const unsigned char *args;	/* the fetched arguments, as record_fetch.c wrote them */
	size_t args_len;
};

struct dec_sym {
	const char *name;	/* NULL: not found; else in the form dec_set_demangle() chose */
	const char *raw;	/* the symbol table's own name */
	uint64_t off, size;
};

/* How C++ names are shown. */
enum dec_demangle {
	DEC_DEMANGLE_SHORT,	/* ns::Class::method (the default) */
	DEC_DEMANGLE_FULL,	/* with template arguments and parameters */
	DEC_DEMANGLE_NO,	/* as mangled */
};

void dec_set_demangle(struct dec *d, enum dec_demangle mode);
/* Does @glob name the function whose symbol is @raw (never by its types)? */
bool dec_name_match(struct dec *d, const char *raw, const char *glob);

typedef int (*dec_emit_fn)(void *ctx, const struct dec_event *ev);

struct dec *dec_new(void);
void dec_free(struct dec *d);

/*
 * Feed one block.  RF_DATA payloads are kept by reference until the next
 * dec_flush(): the caller keeps them alive that long.  Returns 0 or a
 * negative errno (-EINVAL: a malformed block, which is skipped).
 */
int dec_block(struct dec *d, uint32_t type, const void *payload, uint32_t len);

/* Decode every queued RF_DATA block and emit its events in time order. */
int dec_flush(struct dec *d, dec_emit_fn emit, void *ctx);

typedef int (*dec_end_fn)(void *ctx, const struct dec_thread *thr);
/*
 * The same, and @end is called when a thread's queued data is done, right
 * after its last event: for a whole file, where the thread's events end.
 */
int dec_flush_ends(struct dec *d, dec_emit_fn emit, dec_end_fn end, void *ctx);

/*
 * Read a recording file: feed its blocks, stopping at the first one that is
 * not whole (*truncated then true).  The file stays mapped while @d lives.
 */
int dec_read_file(struct dec *d, const char *path, bool *truncated);

/*
 * Before dec_read_file(): @fn is called with every whole block it reads,
 * after the decoder took it (the payload is untrusted); a non-zero return
 * stops the reading and is what dec_read_file() returns.
 */
typedef int (*dec_block_fn)(void *ctx, uint32_t type, const void *payload, uint32_t len);
void dec_set_block_hook(struct dec *d, dec_block_fn fn, void *ctx);
/* The size of the file dec_read_file() read, and whether it ends in a part of a block. */
size_t dec_file_size(struct dec *d);
bool dec_truncated(struct dec *d);

/* The events the recording defines (valid while @d lives). */
const struct dec_event_def *dec_events(struct dec *d, int *nr);
/* The summary block, if the recording has one. */
const struct rf_end *dec_end(struct dec *d);
/*
 * What the recording is (RF_INFO, lib/events/recinfo.h), if it says: NULL
 * for a recording of an older fhook, or one whose RF_INFO did not parse.
 * Valid while @d lives.
 */
const struct rec_info *dec_info(struct dec *d);
/* Records that did not parse, and events lost inside the data (lossy rings). */
uint64_t dec_bad_records(struct dec *d);
uint64_t dec_lost_inband(struct dec *d);

/* The symbol @addr of @thr's process falls in, cached per address. */
bool dec_symbolize(struct dec *d, const struct dec_thread *thr, uint64_t addr,
		   struct dec_sym *out);

#endif
