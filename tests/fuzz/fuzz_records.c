// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * libFuzzer harness for reading recordings: the ring bytes a traced
 * process writes (which a buggy or hostile program could corrupt), and the
 * blocks of a recording file (which could be damaged or crafted), decoded
 * and printed in every format.  Nothing a recording holds may crash the
 * command.
 *
 * data[0] chooses the format and the mode: the rest is either one
 * thread's ring bytes in an otherwise valid recording, or the blocks that
 * follow a valid header.
 */
#define _GNU_SOURCE
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "../../lib/events/decode.h"
#include "../../lib/events/calls.h"
#include "../../lib/events/format.h"
#include "../../lib/recorder/ring.h"

static const char events[] =
	"E 0 0 6 0 0 g e1 foo\n"
	"A 3 0 arg1 0\nA 14 0 s 0\nA 0 4 arr 0\nA 13 0 sym 0\nA 5 0 bf 0\nA 16 0 ss 0\n"
	"E 1 1 2 0 0 g e2 foo\n"
	"A 10 0 ret 0\nA 14 0 c 0\n"
	"E 2 0 0 0 0 fprobes bar__entry bar\n"
	"E 3 1 0 0 0 fprobes bar__exit bar\n";

static void put(int fd, uint32_t type, const void *p, uint32_t len)
{
	struct rf_block b = { type, len };
	static const char zero[8];

	write(fd, &b, sizeof(b));
	write(fd, p, len);
	write(fd, zero, rf_align(len) - len);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static char path[] = "/tmp/fhook-fuzz-records-XXXXXX";
	static int fd = -1, devnull = -1;
	struct rf_header h = { .version = RF_VERSION, .hdr_size = sizeof(h) };
	struct rf_clock clk = { .kind = EV_CLOCK_MONO };
	struct rf_proc proc = { .seq = 1, .pid = 1, .nr_objs = 1 };
	struct rf_obj obj = { .base = 0x1000, .path = "/nonexistent/fuzz-object" };
	struct rf_thread thr = { .thread = 1, .pid = 1, .tid = 1, .proc_seq = 1, .comm = "fuzz" };
	struct fmt_out *f;
	struct dec *d;
	bool truncated;

	if (fd < 0) {
		fd = mkstemp(path);
		unlink(path);
		devnull = open("/dev/null", O_WRONLY);
		snprintf(path, sizeof(path), "/proc/self/fd/%d", fd);
	}
	if (size < 1)
		return 0;
	ftruncate(fd, 0);
	lseek(fd, 0, SEEK_SET);
	memcpy(h.magic, RF_MAGIC, 8);
	write(fd, &h, sizeof(h));
	if (data[0] & 0x10) {
		/* crafted blocks after the header */
		write(fd, data + 1, size - 1);
	} else {
		unsigned char *buf = malloc(size - 1 + sizeof(struct rf_data));
		struct rf_data dh = { .thread = 1 };

		put(fd, RF_EVENTS, events, sizeof(events) - 1);
		put(fd, RF_CLOCK, &clk, sizeof(clk));
		{
			unsigned char pb[sizeof(proc) + sizeof(obj)];

			memcpy(pb, &proc, sizeof(proc));
			memcpy(pb + sizeof(proc), &obj, sizeof(obj));
			put(fd, RF_PROC, pb, sizeof(pb));
		}
		put(fd, RF_THREAD, &thr, sizeof(thr));
		memcpy(buf, &dh, sizeof(dh));
		memcpy(buf + sizeof(dh), data + 1, size - 1);
		put(fd, RF_DATA, buf, size - 1 + sizeof(dh));
		free(buf);
	}
	d = dec_new();
	if (!dec_read_file(d, path, &truncated)) {
		/* the high bits of the first byte choose a filter: calls.c under fire too */
		static const char *only[] = { "f*" }, *hide[] = { "g*" };
		struct call_filter flt = {
			.only = only, .nr_only = (data[0] >> 4) & 1,
			.hide = hide, .nr_hide = (data[0] >> 5) & 1,
			.max_depth = (data[0] >> 6) & 3,
		};

		f = fmt_new(data[0] % 4, devnull, d, &flt);
		dec_flush_ends(d, fmt_event, fmt_thread_end, f);
		fmt_finish(f);
	}
	dec_free(d);
	return 0;
}
