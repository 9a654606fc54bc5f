/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The recording's file (rec_file.c): the sink `fhook record` writes
 * into, by direct I/O where the file system takes it.
 */
#ifndef FHOOK_CLI_REC_FILE_H
#define FHOOK_CLI_REC_FILE_H

#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

#include "../lib/events/session.h"

#define REC_FILE_NBUF	8

struct rec_buf {
	char *data;
	size_t fill;
	uint64_t off;		/* where its first byte goes in the file */
	int state;		/* RB_*: the lock's, but the filling one's bytes are the drain's */
};

struct rec_file {
	struct ev_sink s;
	int fd;			/* O_DIRECT while threaded */
	const char *path;	/* opened at the first write; NULL: fd is open */
	uint64_t bytes;		/* given to the file so far */
	bool want_direct;	/* a path, and the recording is a stream */
	/* direct I/O: buffers, the writer thread, a plain descriptor of the same file */
	bool threaded;
	bool direct_ok;		/* the file system took every direct write so far */
	int plain_fd;
	struct rec_buf bufs[REC_FILE_NBUF];
	int cur;		/* the one being filled */
	int queue[REC_FILE_NBUF];	/* full ones for the writer, in order */
	unsigned int q_head, q_tail;	/* (q_head: the next the writer takes) */
	bool writing;		/* the writer is writing one */
	bool hold;		/* ... and takes no other: the drain takes them back */
	bool stop;
	pthread_t writer;
	pthread_mutex_t lock;
	pthread_cond_t cond;
	uint64_t synced;	/* when the file was last made whole (ns) */
	/*
	 * Where each unit (the header, a block) not yet surely in the file
	 * began in the stream: on an error, what was not written is told in
	 * whole units (ev_sink.unwritten)
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
