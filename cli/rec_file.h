/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The recording's file (rec_file.c): the sink `fhook record` writes
 * into, by direct I/O where the file system takes it.
 */
#ifndef FHOOK_CLI_REC_FILE_H
#define FHOOK_CLI_REC_FILE_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

#include "../lib/events/session.h"

struct rec_file {
	struct ev_sink s;
	int fd;
	const char *path;	/* opened at the first write; NULL: fd is open */
	uint64_t bytes;		/* given to the file so far */
	bool want_direct;	/* a path, and the recording is a stream */
	bool direct;		/* writes go by O_DIRECT */
	bool seek;		/* direct writes went by offset: plain ones seek there first */
	char *buf;		/* what waits for a whole direct write */
	size_t fill;
	off_t off;		/* where the buffer's first byte goes */
	uint64_t synced;	/* when the file was last made whole (ns) */
	/*
	 * Where each unit the buffer holds began in the stream (the first
	 * may have begun before it): on an error, what was not written is
	 * told in whole units (ev_sink.unwritten)
	 */
	uint64_t *units;
	size_t nr_units, cap_units;
	int err;		/* a write failed: every later one fails */
	uint64_t durable;	/* ... and the file holds the stream's bytes below this */
};

/*
 * @path is opened (created, truncated) at the first write, or @fd is
 * written as it is (a pipe, standard output): never directly.
 */
void rec_file_init(struct rec_file *f, const char *path, int fd, bool direct);
/* Write what waits and close: 0 or a negative errno. */
int rec_file_close(struct rec_file *f);

#endif /* FHOOK_CLI_REC_FILE_H */
