/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * What a recording is (RF_INFO of lib/events/recfile.h): the command line
 * recorded, when (the wall clock beside the monotonic clock the events are
 * timed with), and on what (fhook's version, the host, its kernel and cpu).
 * The recorder collects and encodes it once; a reader parses it, never
 * trusting it: the file may be damaged or crafted.
 *
 * The strings are kept in fixed buffers, so that a struct rec_info needs no
 * freeing; a string longer than its buffer is cut (the command line at its
 * last whole argument: argv_cut says so).
 */
#ifndef FHOOK_EV_RECINFO_H
#define FHOOK_EV_RECINFO_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

#define REC_INFO_ARGV_MAX	8192

struct rec_info {
	bool valid;		/* a whole RF_INFO was read */
	bool argv_cut;		/* the command line was longer than argv[]: the last arguments left out */
	uint32_t pid;		/* record -p: the process attached to; 0: the program was started */
	uint64_t mono_ns;	/* CLOCK_MONOTONIC when the recording started */
	uint64_t real_ns;	/* CLOCK_REALTIME at the same moment, ns since the Epoch */
	char version[64];	/* fhook's version */
	char host[256];
	char release[128];	/* uname -r */
	char machine[64];	/* uname -m */
	char cpu[256];		/* the cpu's model name */
	uint32_t argc;
	uint32_t argv_len;	/* bytes of argv[] */
	char argv[REC_INFO_ARGV_MAX];	/* argc arguments, each ending in a NUL */
};

/*
 * Fill @out for a recording starting now: fhook's version, the clocks
 * (read together), the host name, uname's release and machine, the cpu's
 * model name, and the command line: @argv (NULL-terminated), or with
 * @argv NULL, process @pid's (/proc/PID/cmdline).  What cannot be read is
 * left empty.  Any thread may call it; it reads /proc and the clocks.
 */
void rec_info_collect(struct rec_info *out, char *const *argv, pid_t pid);

/*
 * Encode @in as an RF_INFO payload into a malloc'd buffer (*@buf, *@len
 * bytes).  Returns 0 or -ENOMEM.
 */
int rec_info_encode(const struct rec_info *in, void **buf, uint32_t *len);

/*
 * Parse an RF_INFO payload of @len bytes at @p (untrusted).  On success
 * *@out is replaced (out->valid set) and 0 returned; a malformed payload
 * (lengths that do not fit, a command line that does not end in a NUL)
 * leaves *@out as it was and returns -EINVAL.
 */
int dec_info_parse(struct rec_info *out, const void *p, uint32_t len);

/* The wall-clock time (ns since the Epoch) of CLOCK_MONOTONIC time @mono_ns. */
static inline uint64_t rec_info_wall_ns(const struct rec_info *in, uint64_t mono_ns)
{
	return in->real_ns + (mono_ns - in->mono_ns);
}

#endif
