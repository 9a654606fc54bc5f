/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The recording file of `fhook record` (docs/recording-format.md): a
 * header, then blocks.  Every block is an 8-byte header and its payload,
 * padded to 8 bytes; a reader stops at the first block that is not whole,
 * so a recording cut short (tracer killed, disk full) is readable up to
 * its last complete block.
 *
 * The ring bytes of the traced threads go into RF_DATA blocks as they are:
 * the writer never decodes them.  Everything else a reader needs comes
 * first or along the way: the events (RF_EVENTS), the clock (RF_CLOCK),
 * each process image and its objects (RF_PROC), the symbols of every
 * object (RF_SYMS), each thread (RF_THREAD) before its first data, and a
 * summary at the end (RF_END).  What the recording is (RF_INFO: the
 * command line, the wall clock, the machine) comes once, after RF_EVENTS.
 */
#ifndef FHOOK_EV_RECFILE_H
#define FHOOK_EV_RECFILE_H

#include <stdint.h>

#define RF_MAGIC	"FHOOKREC"
#define RF_VERSION	2

struct rf_header {
	char magic[8];
	uint32_t version;
	uint32_t hdr_size;	/* bytes before the first block */
};

struct rf_block {
	uint32_t type;		/* RF_* */
	uint32_t len;		/* payload bytes; the next block starts 8-aligned */
};

enum {
	RF_EVENTS = 1,	/* text: the event description (lib/recorder/evdesc.h) */
	RF_CLOCK,	/* struct rf_clock; a later one replaces an earlier one */
	RF_PROC,	/* struct rf_proc, then nr_objs x struct rf_obj */
	RF_SYMS,	/* struct rf_syms, syms, path, build-id, names */
	RF_THREAD,	/* struct rf_thread */
	RF_DATA,	/* struct rf_data, then ring bytes (lib/recorder/ring.h records) */
	RF_END,		/* struct rf_end */
	RF_INFO,	/* struct rf_info, then its strings (lib/events/recinfo.h) */
};

struct rf_clock {
	uint32_t kind;		/* EV_CLOCK_* */
	uint32_t pad;
	uint64_t base;		/* the clock's value at a record's time 0 */
	/* TSC: two readings of both clocks; MONO: mono0 = base, the rest 0 */
	uint64_t tsc0, mono0, tsc1, mono1;
};

struct rf_obj {
	uint64_t base;
	char path[240];
};

struct rf_proc {
	uint64_t seq;
	uint32_t pid;
	uint32_t nr_objs;
};

struct rf_sym {
	uint64_t addr;		/* link-time */
	uint32_t size;
	uint32_t name;		/* offset in the names */
};

struct rf_syms {
	uint32_t nr_syms;
	uint32_t path_len;	/* without a NUL */
	uint32_t build_id_len;
	uint32_t names_len;
	/* nr_syms x struct rf_sym (functions only, sorted), path, build-id, names */
};

struct rf_thread {
	uint32_t thread;	/* the recording's number for it: RF_DATA names it */
	uint32_t pid, tid;
	uint32_t pad;
	uint64_t proc_seq;	/* its process image (RF_PROC), 0: none */
	char comm[16];
};

struct rf_data {
	uint32_t thread;
	uint32_t pad;
};

enum {
	RF_END_OK,
	RF_END_WRITE_ERROR,	/* the recording stopped early: the message says why */
	RF_END_STOPPED,		/* stopped by a signal to fhook */
};

struct rf_end {
	uint64_t events;	/* event records the threads wrote */
	uint64_t lost;		/* dropped: lossy rings, no ring, or after a stop */
	uint64_t nmissed;	/* fprobe nmissed (recursion, shadow stack full) */
	uint64_t waits;		/* times a thread waited for room */
	uint32_t status;	/* RF_END_* */
	uint32_t err;		/* errno of a write error */
};

/*
 * What the recording is: written once, after RF_EVENTS.  The strings
 * follow the header in this order, each without a NUL but for the command
 * line's arguments, which end in one each.  A reader takes the strings
 * from hdr_len on: a later version may add fields before them.
 */
struct rf_info {
	uint32_t hdr_len;	/* bytes of this header: 56, or more in a later version */
	uint32_t pid;		/* record -p: the process attached to; 0: the program was started */
	uint64_t mono_ns;	/* CLOCK_MONOTONIC when the recording started ... */
	uint64_t real_ns;	/* ... and CLOCK_REALTIME read with it (ns since the Epoch) */
	uint32_t flags;		/* RF_INFO_* */
	uint32_t version_len;	/* fhook's version (FHOOK_VERSION) */
	uint32_t host_len;	/* the host name */
	uint32_t release_len;	/* uname's release and machine */
	uint32_t machine_len;
	uint32_t cpu_len;	/* the cpu's model name */
	uint32_t argv_len;	/* the command line: its arguments, each ending in a NUL */
	uint32_t pad;
};

#define RF_INFO_ARGV_CUT	1U	/* the command line was longer: its last arguments left out */

static inline uint32_t rf_align(uint32_t len)
{
	return (len + 7) & ~7U;
}

#endif
