// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * fhook trace -e SPEC... [--caller SYM]... [-o FILE] [--format FMT]
 *             [--dry-run] [--no-follow] [--lossy] -- PROG [ARGS]
 * fhook trace -p PID [--duration SECS] -e SPEC... [...]
 *
 * A recording consumed as it is made: the drain hands each round's blocks
 * to a printer thread, which decodes and formats them (lib/events).  The
 * queue between the two is bounded; when the printer falls behind, the
 * drain waits, and so do the traced threads (unless --lossy): nothing is
 * lost, the program runs at the printer's pace.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli.h"
#include "evcli.h"
#include "../lib/events/decode.h"
#include "../lib/events/format.h"

#define LIVE_QUEUE_MAX		(256UL << 20)

struct live_buf {
	struct live_buf *next;
	unsigned char *data;
	size_t len, cap;
};

struct live_sink {
	struct ev_sink s;
	pthread_mutex_t lock;
	pthread_cond_t cond;
	struct live_buf *cur;		/* filled by the drain */
	struct live_buf *head, **tail;	/* rounds waiting for the printer */
	struct live_buf *spare;
	size_t queued;
	bool done;
	bool header_seen;
	struct dec *dec;
	struct fmt_out *fmt;
	int err;
	/*
	 * -o: opened (and truncated) at the first block, when the program is
	 * about to run or the process has agreed to be traced, over @fd, a
	 * placeholder the formatter was given: a refusal leaves no file.
	 */
	const char *path;
	int fd;
};

static int live_write(struct ev_sink *sink, const struct iovec *iov, int n)
{
	struct live_sink *l = (struct live_sink *)sink;
	struct live_buf *b = l->cur;
	size_t total = 0;
	int i;

	if (l->path) {
		int fd = open(l->path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);

		if (fd < 0)
			return -errno;
		if (dup3(fd, l->fd, O_CLOEXEC) < 0) {
			close(fd);
			return -errno;
		}
		close(fd);
		l->path = NULL;
	}
	for (i = 0; i < n; i++)
		total += iov[i].iov_len;
	if (!b) {
		pthread_mutex_lock(&l->lock);
		b = l->spare;
		if (b)
			l->spare = b->next;
		pthread_mutex_unlock(&l->lock);
		if (!b && !(b = calloc(1, sizeof(*b))))
			return -ENOMEM;
		b->len = 0;
		b->next = NULL;
		l->cur = b;
	}
	if (b->len + total > b->cap) {
		size_t cap = b->cap ? b->cap : (1UL << 20);
		unsigned char *nd;

		while (cap < b->len + total)
			cap *= 2;
		nd = realloc(b->data, cap);
		if (!nd)
			return -ENOMEM;
		b->data = nd;
		b->cap = cap;
	}
	for (i = 0; i < n; i++) {
		if (!iov[i].iov_len)
			continue;	/* (an empty part may have no base: memcpy's is never NULL) */
		memcpy(b->data + b->len, iov[i].iov_base, iov[i].iov_len);
		b->len += iov[i].iov_len;
	}
	return 0;
}

/* A round is complete: queue it, waiting while the printer is far behind. */
static int live_round(struct ev_sink *sink)
{
	struct live_sink *l = (struct live_sink *)sink;
	struct live_buf *b = l->cur;

	if (!b)
		return 0;
	l->cur = NULL;
	pthread_mutex_lock(&l->lock);
	while (l->queued > LIVE_QUEUE_MAX && !l->err)
		pthread_cond_wait(&l->cond, &l->lock);
	*l->tail = b;
	l->tail = &b->next;
	l->queued += b->len;
	pthread_cond_broadcast(&l->cond);
	pthread_mutex_unlock(&l->lock);
	return l->err;
}

/* Feed one round's blocks to the decoder and print its events. */
static int live_print(struct live_sink *l, struct live_buf *b)
{
	size_t off = 0;
	int ret;

	if (!l->header_seen) {
		if (b->len < sizeof(struct rf_header))
			return -EPROTO;
		off = ((const struct rf_header *)b->data)->hdr_size;
		l->header_seen = true;
	}
	while (off + sizeof(struct rf_block) <= b->len) {
		const struct rf_block *h = (const void *)(b->data + off);

		if (b->len - off - sizeof(*h) < h->len)
			break;
		dec_block(l->dec, h->type, h + 1, h->len);
		off += sizeof(*h) + rf_align(h->len);
	}
	ret = dec_flush(l->dec, fmt_event, l->fmt);
	return ret ? ret : fmt_round_end(l->fmt);
}

static void *print_thread(void *arg)
{
	struct live_sink *l = arg;

	pthread_setname_np(pthread_self(), "fhook-print");
	for (;;) {
		struct live_buf *b;
		int err;

		pthread_mutex_lock(&l->lock);
		while (!l->head && !l->done)
			pthread_cond_wait(&l->cond, &l->lock);
		b = l->head;
		if (b) {
			l->head = b->next;
			if (!l->head)
				l->tail = &l->head;
			l->queued -= b->len;
		}
		pthread_mutex_unlock(&l->lock);
		if (!b)
			break;
		err = live_print(l, b);
		pthread_mutex_lock(&l->lock);
		if (err && !l->err)
			l->err = err;
		b->next = l->spare;
		l->spare = b;
		pthread_cond_broadcast(&l->cond);
		pthread_mutex_unlock(&l->lock);
	}
	return NULL;
}

static void free_bufs(struct live_buf *b)
{
	while (b) {
		struct live_buf *n = b->next;

		free(b->data);
		free(b);
		b = n;
	}
}

static void trace_usage(FILE *f)
{
	fprintf(f,
		"usage: fhook trace -e SPEC... [--caller SYM]... [-o FILE]\n"
		"                   [--format text|json|chrome|graph] [--dry-run] [--no-follow]\n"
		"                   [--lossy] [--clock mono|tsc] [--buffer-size N] -- PROG [ARGS]\n"
		"       fhook trace -p PID [--duration SECS] -e SPEC... [...]\n"
		"\n"
		"Trace fprobe and kprobe events in PROG, or in the running process PID,\n"
		"defined with the kernel's dynamic_events syntax:\n"
		"  f[MAXACTIVE][:[GRP/][EVENT]] SYM[%%return] [FETCHARGS]   (fhook sites)\n"
		"  p[:[GRP/][EVENT]] [MOD:]SYM[+OFFS]|ADDR [FETCHARGS]      (any code)\n"
		"  r[MAXACTIVE][:[GRP/][EVENT]] [MOD:]SYM[+0] [FETCHARGS]   (any function)\n"
		"  -:[GRP/]EVENT\n"
		"'p' and 'r' work on programs not built for fhook.  MOD: the file name or\n"
		"path of a library (also one PROG loads later) or of a program PROG starts;\n"
		"ADDR: a link-time address in PROG (for a stripped PROG).\n"
		"FETCHARGS: $argN $arg* $retval $stackN $stack $comm @ADDR @SYM[+|-offs]\n"
		"  %%REG (p and r: %%ax %%bx %%cx %%dx %%si %%di %%bp %%sp %%r8-%%r15 %%ip ...)\n"
		"  +|-[u]OFFS(FETCHARG) \\IMM \\\"STRING\" NAME=FETCHARG FETCHARG:TYPE, and\n"
		"  parameter names and fields (file->f_path.dentry) where PROG has DWARF\n"
		"  (f events).\n"
		"TYPE: u8/16/32/64 s8/16/32/64 x8/16/32/64 char string ustring symbol symstr\n"
		"  TYPE[N] b<bits>@<offs>/<size>\n"
		"\n"
		"  -e, --event SPEC     an event definition (repeatable); SYM may be a glob\n"
		"  --caller SYM         record only calls made from SYM (repeatable)\n"
		"  -o, --output FILE    write the trace to FILE (default: stderr)\n"
		"  --format FMT         text (the kernel's trace format), json (one object\n"
		"                       per line), chrome (trace-event JSON) or graph (calls\n"
		"                       indented by depth)\n"
		"  --dry-run            print the definitions as dynamic_events shows them\n"
		"                       and exit, without running PROG\n"
		"  --no-follow          do not trace the processes PROG starts\n"
		"  --lossy              drop records when a buffer is full (counted) instead\n"
		"                       of making the thread wait\n"
		"  --clock mono|tsc, --buffer-size N   as for fhook record\n"
		"  --flight-recorder, --trigger   fhook record's only: a live trace has no dump\n"
		"  --page-cache         fhook record's only: a live trace writes no recording\n"
		"  -p, --pid PID        trace the running process PID instead of starting\n"
		"                       PROG: attach, trace until Ctrl-C, --duration or its\n"
		"                       exit, then remove every probe\n"
		"  --duration SECS      with -p: stop after SECS seconds (a decimal number)\n"
		"\n"
		"To keep a trace and format it later, see fhook record.\n"
		"Exit status: PROG's; 1 for a bad definition or a failed output; 2 for bad usage.\n");
}

int cmd_trace(int argc, char **argv)
{
	struct cli_ev c = { .cmd = "trace" };
	struct live_sink l = { .s = { .write = live_write, .round = live_round } };
	struct rf_end end = { 0 };
	pthread_t th;
	int ret, fd, fmt, err;
	bool failed;

	ret = cli_ev_parse(&c, argc, argv, trace_usage);
	if (ret) {
		cli_ev_free(&c);
		return ret < 0 ? 0 : ret;
	}
	fmt = fmt_by_name(c.format ? c.format : "text");
	if (fmt < 0) {
		fprintf(stderr, "fhook: trace: unknown format '%s' (text, json, chrome or graph)\n",
			c.format);
		cli_ev_free(&c);
		return 2;
	}
	ret = cli_ev_resolve(&c);
	if (ret) {
		cli_ev_free(&c);
		return ret < 0 ? 0 : ret;
	}
	fd = STDERR_FILENO;
	if (c.out && (fd = open("/dev/null", O_WRONLY | O_CLOEXEC)) < 0) {
		fprintf(stderr, "fhook: trace: /dev/null: %s\n", strerror(errno));
		cli_ev_free(&c);
		return 1;
	}
	l.path = c.out;
	l.fd = fd;
	pthread_mutex_init(&l.lock, NULL);
	pthread_cond_init(&l.cond, NULL);
	l.tail = &l.head;
	l.dec = dec_new();
	l.fmt = l.dec ? fmt_new(fmt, fd, l.dec, NULL) : NULL;
	if (!l.fmt) {
		fprintf(stderr, "fhook: trace: out of memory\n");
		cli_ev_free(&c);
		return 1;
	}
	cli_helper_thread(&th, print_thread, &l);
	ret = cli_ev_run(&c, &l.s, &end, &failed);
	pthread_mutex_lock(&l.lock);
	l.done = true;
	pthread_cond_broadcast(&l.cond);
	pthread_mutex_unlock(&l.lock);
	pthread_join(th, NULL);
	{
		uint64_t printed = fmt_count(l.fmt);

		err = fmt_finish(l.fmt);
		if (!err && l.err)
			err = l.err;
		if (err && !failed) {
			fprintf(stderr, "fhook: trace: writing %s: %s\n", c.out ? c.out : "the trace",
				strerror(-err));
			failed = true;
		}
		/* (refused before anything ran: the refusal was said, no count to add) */
		if (c.started)
			fprintf(stderr, "fhook: trace: %llu events, %llu nmissed, %llu lost%s\n",
				(unsigned long long)printed, (unsigned long long)end.nmissed,
				(unsigned long long)(end.lost + (end.events > printed && failed ?
								 end.events - printed : 0)),
				err ? "; the output failed: not all of them reached it" : "");
		cli_ev_print_untraced(&c);
	}
	if (c.out)
		close(fd);
	dec_free(l.dec);
	free_bufs(l.head);
	free_bufs(l.spare);
	free_bufs(l.cur);
	cli_ev_free(&c);
	return failed ? 1 : ret;
}
