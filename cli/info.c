// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * fhook info [--json] [PATH]
 *
 * What a recording is: the command line recorded, its processes and
 * threads, when it started (the wall clock of its RF_INFO) and how long
 * its events span, its counts, how it ended, how many functions have
 * events, and the fhook and machine that made it.  A recording of an older
 * fhook has no RF_INFO: what only that block says is "unknown".
 *
 * The processes and threads come from the file's RF_PROC and RF_THREAD
 * blocks, read here (the decoder keeps them to itself); the counts that
 * need the events come from one pass of the decoder.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "cli.h"
#include "../lib/events/decode.h"
#include "../lib/events/recinfo.h"
#include "../lib/recorder/ring.h"

/* A process image (RF_PROC), or the threads of a pid that announced none. */
struct info_img {
	uint64_t seq;		/* 0: no RF_PROC */
	uint32_t pid;
	char prog[sizeof(((struct rf_obj *)0)->path)];	/* its first object, or a thread's comm */
	uint32_t threads;
	uint64_t events, funcs;
};

struct info_thr {
	uint32_t num, pid;
	size_t order;		/* of its block in the file */
	uint64_t proc_seq;
	char comm[16];
	size_t img;
};

/* A function with events: in which image, at which address. */
struct info_fn {
	uint64_t img;
	uint64_t ip;		/* 0: a free slot */
};

struct info {
	uint64_t size;
	bool truncated;
	struct info_img *imgs;	/* by seq, then the pids without one */
	size_t nr_imgs, nr_seq_imgs;
	struct info_thr *thrs;	/* sorted by num once read */
	size_t nr_thrs;
	/* from the events */
	uint64_t decoded, first_ts, last_ts, funcs;
	struct info_fn *set;
	size_t set_cap, set_nr;
	const struct dec_thread *last_thr;
	size_t last_img;
};

static void info_usage(FILE *f)
{
	fprintf(f,
		"usage: fhook info [--json] [PATH]\n"
		"\n"
		"What a recording made by fhook record is (default: fhook.rec): the command\n"
		"line recorded, its programs with their pids and threads, when it started\n"
		"(local time and ISO 8601) and how long its events span, its events, lost,\n"
		"nmissed and waits, how it ended, how many functions have events, and the\n"
		"fhook, host, kernel and cpu that made it (\"unknown\" for a recording of an\n"
		"older fhook).\n"
		"\n"
		"  --json               one JSON object, for scripts (null: unknown)\n"
		"\n"
		"Exit status: 0; 1 when the recording cannot be read; 2 for bad usage.\n");
}

/* ---- processes and threads: the file's own blocks ---------------------- */

static struct info_img *img_add(struct info *in, uint64_t seq, uint32_t pid, const char *prog)
{
	struct info_img *n = realloc(in->imgs, (in->nr_imgs + 1) * sizeof(*n));

	if (!n)
		return NULL;
	in->imgs = n;
	n += in->nr_imgs++;
	memset(n, 0, sizeof(*n));
	n->seq = seq;
	n->pid = pid;
	snprintf(n->prog, sizeof(n->prog), "%s", prog);
	return n;
}

static int add_proc(struct info *in, const unsigned char *p, uint32_t len)
{
	struct rf_proc h;
	struct rf_obj o;

	if (len < sizeof(h))
		return 0;
	memcpy(&h, p, sizeof(h));
	if (!h.seq || h.nr_objs > EV_MAX_OBJS || len < sizeof(h) + (uint64_t)h.nr_objs * sizeof(o))
		return 0;	/* the decoder skips it too */
	memset(&o, 0, sizeof(o));
	if (h.nr_objs)
		memcpy(&o, p + sizeof(h), sizeof(o));
	o.path[sizeof(o.path) - 1] = 0;
	return img_add(in, h.seq, h.pid, o.path) ? 0 : -ENOMEM;
}

static int add_thread(struct info *in, const unsigned char *p, uint32_t len)
{
	struct info_thr *n;
	struct rf_thread h;

	if (len < sizeof(h))
		return 0;
	memcpy(&h, p, sizeof(h));
	n = realloc(in->thrs, (in->nr_thrs + 1) * sizeof(*n));
	if (!n)
		return -ENOMEM;
	in->thrs = n;
	n += in->nr_thrs;
	n->num = h.thread;
	n->order = in->nr_thrs++;
	n->pid = h.pid;
	n->proc_seq = h.proc_seq;
	memcpy(n->comm, h.comm, sizeof(n->comm));
	n->comm[sizeof(n->comm) - 1] = 0;
	return 0;
}

/* The row of the threads of @pid that name no process image; made on first use. */
static long pid_row(struct info *in, uint32_t pid, const char *comm)
{
	size_t i;

	for (i = in->nr_seq_imgs; i < in->nr_imgs; i++)
		if (in->imgs[i].pid == pid)
			return i;
	return img_add(in, 0, pid, comm) ? (long)in->nr_imgs - 1 : -ENOMEM;
}

/* By seq; the same image again (objects it loaded later) after the first. */
static int img_cmp(const void *a, const void *b)
{
	const struct info_img *x = a, *y = b;

	if (x->seq != y->seq)
		return x->seq < y->seq ? -1 : 1;
	return x < y ? -1 : x > y;
}

/* By number; the same thread announced again after the first. */
static int thr_cmp(const void *a, const void *b)
{
	const struct info_thr *x = a, *y = b;

	if (x->num != y->num)
		return x->num < y->num ? -1 : 1;
	return x->order < y->order ? -1 : x->order > y->order;
}

/*
 * Sort the process images by seq, keeping each one's first block (with
 * its program), and the threads by number, keeping each one's last (as
 * the decoder does); give each thread its row.
 */
static int assign_threads(struct info *in)
{
	size_t i, n;

	/* qsort of equal seqs: the blocks were appended in order, img_cmp compares places */
	qsort(in->imgs, in->nr_imgs, sizeof(*in->imgs), img_cmp);
	for (i = n = 0; i < in->nr_imgs; i++)
		if (!n || in->imgs[i].seq != in->imgs[n - 1].seq)
			in->imgs[n++] = in->imgs[i];
	in->nr_imgs = in->nr_seq_imgs = n;
	qsort(in->thrs, in->nr_thrs, sizeof(*in->thrs), thr_cmp);
	for (i = n = 0; i < in->nr_thrs; i++) {
		if (n && in->thrs[i].num == in->thrs[n - 1].num)
			n--;
		in->thrs[n++] = in->thrs[i];
	}
	in->nr_thrs = n;
	for (i = 0; i < in->nr_thrs; i++) {
		struct info_thr *t = &in->thrs[i];
		size_t lo = 0, hi = in->nr_seq_imgs;
		long row;

		while (lo < hi) {
			size_t mid = (lo + hi) / 2;

			if (in->imgs[mid].seq < t->proc_seq)
				lo = mid + 1;
			else
				hi = mid;
		}
		if (lo < in->nr_seq_imgs && in->imgs[lo].seq == t->proc_seq)
			row = lo;
		else if ((row = pid_row(in, t->pid, t->comm)) < 0)
			return row;
		t->img = row;
		in->imgs[row].threads++;
	}
	return 0;
}

/* The decoder's walk of the file hands every block over: the processes and threads kept. */
static int info_block(void *ctx, uint32_t type, const void *p, uint32_t len)
{
	struct info *in = ctx;

	if (type == RF_PROC)
		return add_proc(in, p, len);
	if (type == RF_THREAD)
		return add_thread(in, p, len);
	return 0;
}

/* ---- the events --------------------------------------------------------- */

/* The row of an event's thread: its image, else its pid's. */
static long event_row(struct info *in, const struct dec_thread *thr)
{
	size_t lo = 0, hi = in->nr_thrs;
	long row;

	if (thr == in->last_thr)
		return in->last_img;
	while (lo < hi) {
		size_t mid = (lo + hi) / 2;

		if (in->thrs[mid].num < thr->num)
			lo = mid + 1;
		else
			hi = mid;
	}
	if (lo < in->nr_thrs && in->thrs[lo].num == thr->num)
		row = in->thrs[lo].img;
	else if ((row = pid_row(in, thr->pid, thr->comm)) < 0)
		return row;
	in->last_thr = thr;
	in->last_img = row;
	return row;
}

static inline size_t fn_hash(const struct info *in, uint64_t img, uint64_t ip)
{
	return ((ip ^ (img << 48)) * 0x9e3779b97f4a7c15ULL >> 20) & (in->set_cap - 1);
}

/* Add (@img, @ip) to the set of functions with events: 1 when it is new. */
static int fn_add(struct info *in, uint64_t img, uint64_t ip)
{
	size_t i;

	if (2 * (in->set_nr + 1) > in->set_cap) {
		size_t cap = in->set_cap ? 2 * in->set_cap : 1024, k;
		struct info_fn *old = in->set, *n = calloc(cap, sizeof(*n));

		if (!n)
			return -ENOMEM;
		in->set = n;
		in->set_cap = cap;
		for (k = 0; old && k < cap / 2; k++) {
			if (!old[k].ip)
				continue;
			for (i = fn_hash(in, old[k].img, old[k].ip); n[i].ip; i = (i + 1) & (cap - 1))
				;
			n[i] = old[k];
		}
		free(old);
	}
	for (i = fn_hash(in, img, ip); in->set[i].ip; i = (i + 1) & (in->set_cap - 1))
		if (in->set[i].ip == ip && in->set[i].img == img)
			return 0;
	in->set[i].img = img;
	in->set[i].ip = ip;
	in->set_nr++;
	return 1;
}

static int count_event(void *ctx, const struct dec_event *ev)
{
	struct info *in = ctx;
	long row = event_row(in, ev->thr);
	int ret;

	if (row < 0)
		return row;
	if (!in->decoded++ || ev->ts < in->first_ts)
		in->first_ts = ev->ts;
	if (ev->ts > in->last_ts)
		in->last_ts = ev->ts;
	in->imgs[row].events++;
	/* an exit whose entry was lost names no function */
	if (!ev->ip)
		return 0;
	ret = fn_add(in, row, ev->ip);
	if (ret < 0)
		return ret;
	in->funcs += ret;
	in->imgs[row].funcs += ret;
	return 0;
}

/* ---- output ------------------------------------------------------------- */

/* A string from the file on a terminal: its control characters as '?'. */
static void put_text(const char *s)
{
	for (; *s; s++)
		putchar((unsigned char)*s < 0x20 || *s == 0x7f ? '?' : *s);
}

/* An argument as a shell would take it back. */
static void put_arg(const char *s)
{
	const char *p;

	for (p = s; *p; p++)
		if (!strchr("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ"
			    "0123456789_-+=/.,:@%^", *p))
			break;
	if (*s && !*p) {
		put_text(s);
		return;
	}
	putchar('\'');
	for (p = s; *p; p++) {
		if (*p == '\'')
			fputs("'\\''", stdout);
		else
			putchar((unsigned char)*p < 0x20 || *p == 0x7f ? '?' : *p);
	}
	putchar('\'');
}

/*
 * A JSON string.  The bytes are the file's: invalid UTF-8 becomes U+FFFD,
 * so that any JSON parser reads the output.
 */
static void put_json(const char *s)
{
	const unsigned char *p = (const unsigned char *)s;

	putchar('"');
	while (*p) {
		unsigned char c = *p;
		int need = c < 0x80 ? 0 : (c & 0xe0) == 0xc0 ? 1 : (c & 0xf0) == 0xe0 ? 2 :
			   (c & 0xf8) == 0xf0 ? 3 : -1;
		int k;

		if (!need) {
			if (c == '"' || c == '\\')
				printf("\\%c", c);
			else if (c < 0x20 || c == 0x7f)
				printf("\\u%04x", c);
			else
				putchar(c);
			p++;
			continue;
		}
		for (k = 1; need > 0 && k <= need; k++)
			if ((p[k] & 0xc0) != 0x80)
				need = -1;
		if (need < 0) {
			fputs("\\ufffd", stdout);
			p++;
			continue;
		}
		fwrite(p, 1, need + 1, stdout);
		p += need + 1;
	}
	putchar('"');
}

/* @ns since the Epoch as local time: "Tue 2024-03-05 14:02:03 CET", or ISO 8601. */
static void wall_time(char *buf, size_t size, uint64_t ns, bool iso)
{
	time_t t = ns / 1000000000ULL;
	char zone[8];
	struct tm tm;
	size_t n;

	if (!localtime_r(&t, &tm)) {
		snprintf(buf, size, "?");
		return;
	}
	if (!iso) {
		strftime(buf, size, "%a %Y-%m-%d %H:%M:%S %Z", &tm);
		return;
	}
	n = strftime(buf, size, "%Y-%m-%dT%H:%M:%S", &tm);
	/* ISO 8601's offset has a colon: +01:00, not strftime's +0100 */
	if (!strftime(zone, sizeof(zone), "%z", &tm) || strlen(zone) != 5)
		snprintf(zone, sizeof(zone), "+0000");
	snprintf(buf + n, size - n, ".%06u%.3s:%s", (unsigned int)(ns % 1000000000ULL / 1000),
		 zone, zone + 3);
}

static const char *end_word(const struct rf_end *end)
{
	if (!end)
		return "cut";
	switch (end->status) {
	case RF_END_OK: return "finished";
	case RF_END_WRITE_ERROR: return "write-error";
	case RF_END_STOPPED: return "stopped";
	default: return "unknown";
	}
}

static void print_text(const char *path, struct info *in, struct dec *d)
{
	const struct rec_info *ri = dec_info(d);
	const struct rf_end *end = dec_end(d);
	char when[128], iso[64];
	const char *a;
	uint32_t i;
	size_t k;

	printf("file:       ");
	put_text(path);
	printf(" (%llu bytes)\n", (unsigned long long)in->size);
	printf("command:    ");
	if (!ri) {
		printf("unknown");
	} else {
		if (ri->pid)
			printf("pid %u (attached)%s", ri->pid, ri->argc ? ": " : "");
		for (i = 0, a = ri->argv; i < ri->argc; i++, a += strlen(a) + 1) {
			if (i)
				putchar(' ');
			put_arg(a);
		}
		if (ri->argv_cut)
			printf(" ...");
	}
	printf("\nprocesses:  %zu\n", in->nr_imgs);
	for (k = 0; k < in->nr_imgs; k++) {
		const struct info_img *m = &in->imgs[k];

		printf("  pid %u: ", m->pid);
		if (m->seq && m->prog[0]) {
			put_text(m->prog);
		} else {
			/* no objects announced: the thread's name is what there is */
			putchar('(');
			put_text(m->prog[0] ? m->prog : "unknown");
			putchar(')');
		}
		printf(", %u thread%s, %llu event%s, %llu function%s\n", m->threads,
		       m->threads == 1 ? "" : "s", (unsigned long long)m->events,
		       m->events == 1 ? "" : "s", (unsigned long long)m->funcs,
		       m->funcs == 1 ? "" : "s");
	}
	printf("threads:    %zu\n", in->nr_thrs);
	if (ri) {
		wall_time(when, sizeof(when), ri->real_ns, false);
		wall_time(iso, sizeof(iso), ri->real_ns, true);
		printf("started:    %s, %s\n", when, iso);
	} else {
		printf("started:    unknown\n");
	}
	if (in->decoded)
		printf("duration:   %.6f s (first to last event)\n",
		       (in->last_ts - in->first_ts) / 1e9);
	else
		printf("duration:   unknown (no events)\n");
	if (end) {
		printf("events:     %llu", (unsigned long long)end->events);
		if (in->decoded != end->events)
			printf(" (%llu in the file)", (unsigned long long)in->decoded);
		printf("\nlost:       %llu\nnmissed:    %llu\nwaits:      %llu\n",
		       (unsigned long long)end->lost, (unsigned long long)end->nmissed,
		       (unsigned long long)end->waits);
	} else {
		printf("events:     %llu in the file\n", (unsigned long long)in->decoded);
		printf("lost:       unknown\nnmissed:    unknown\nwaits:      unknown\n");
	}
	printf("ended:      ");
	if (!end)
		printf("not finished: the recording ends early (the recorder was killed, or the "
		       "disk filled)\n");
	else if (end->status == RF_END_OK)
		printf("finished\n");
	else if (end->status == RF_END_WRITE_ERROR)
		printf("stopped early by a write error (%s)\n", strerror(end->err));
	else if (end->status == RF_END_STOPPED)
		printf("stopped by a signal to fhook\n");
	else
		printf("unknown (status %u)\n", end->status);
	if (end && in->truncated)
		printf("            cut after its summary: blocks that followed it are lost\n");
	printf("functions:  %llu\n", (unsigned long long)in->funcs);
	if (dec_bad_records(d))
		printf("skipped:    %llu (blocks or records that did not parse)\n",
		       (unsigned long long)dec_bad_records(d));
	printf("fhook:      ");
	put_text(ri && ri->version[0] ? ri->version : "unknown");
	printf("\nhost:       ");
	put_text(ri && ri->host[0] ? ri->host : "unknown");
	printf("\nkernel:     ");
	put_text(ri && ri->release[0] ? ri->release : "unknown");
	if (ri && ri->machine[0]) {
		putchar(' ');
		put_text(ri->machine);
	}
	printf("\ncpu:        ");
	put_text(ri && ri->cpu[0] ? ri->cpu : "unknown");
	putchar('\n');
}

/* A string of RF_INFO, or null */
static void json_field(const char *name, const struct rec_info *ri, const char *s)
{
	printf(", \"%s\": ", name);
	if (ri && *s)
		put_json(s);
	else
		fputs("null", stdout);
}

static void print_json(const char *path, struct info *in, struct dec *d)
{
	const struct rec_info *ri = dec_info(d);
	const struct rf_end *end = dec_end(d);
	char iso[64];
	const char *a;
	uint32_t i;
	size_t k;

	printf("{\"file\": ");
	put_json(path);
	printf(", \"size\": %llu, \"command\": ", (unsigned long long)in->size);
	if (ri) {
		putchar('[');
		for (i = 0, a = ri->argv; i < ri->argc; i++, a += strlen(a) + 1) {
			if (i)
				fputs(", ", stdout);
			put_json(a);
		}
		printf("], \"command_cut\": %s", ri->argv_cut ? "true" : "false");
	} else {
		printf("null, \"command_cut\": null");
	}
	if (ri && ri->pid)
		printf(", \"attached_pid\": %u", ri->pid);
	else
		printf(", \"attached_pid\": %s", ri ? "0" : "null");
	printf(", \"processes\": [");
	for (k = 0; k < in->nr_imgs; k++) {
		const struct info_img *m = &in->imgs[k];

		printf("%s{\"pid\": %u, \"program\": ", k ? ", " : "", m->pid);
		if (!m->seq)
			fputs("null, \"comm\": ", stdout);
		put_json(m->prog);
		printf(", \"threads\": %u, \"events\": %llu, \"functions\": %llu}", m->threads,
		       (unsigned long long)m->events, (unsigned long long)m->funcs);
	}
	printf("], \"threads\": %zu", in->nr_thrs);
	if (ri) {
		wall_time(iso, sizeof(iso), ri->real_ns, true);
		printf(", \"start\": \"%s\", \"start_ns\": %llu, \"start_mono_ns\": %llu", iso,
		       (unsigned long long)ri->real_ns, (unsigned long long)ri->mono_ns);
	} else {
		printf(", \"start\": null, \"start_ns\": null, \"start_mono_ns\": null");
	}
	if (in->decoded)
		printf(", \"first_event_mono_ns\": %llu, \"last_event_mono_ns\": %llu, "
		       "\"duration_ns\": %llu", (unsigned long long)in->first_ts,
		       (unsigned long long)in->last_ts,
		       (unsigned long long)(in->last_ts - in->first_ts));
	else
		printf(", \"first_event_mono_ns\": null, \"last_event_mono_ns\": null, "
		       "\"duration_ns\": null");
	if (end)
		printf(", \"events\": %llu, \"lost\": %llu, \"nmissed\": %llu, \"waits\": %llu",
		       (unsigned long long)end->events, (unsigned long long)end->lost,
		       (unsigned long long)end->nmissed, (unsigned long long)end->waits);
	else
		printf(", \"events\": null, \"lost\": null, \"nmissed\": null, \"waits\": null");
	printf(", \"events_in_file\": %llu, \"end\": \"%s\"", (unsigned long long)in->decoded,
	       end_word(end));
	if (end)
		printf(", \"end_status\": %u, \"end_errno\": %u", end->status, end->err);
	else
		printf(", \"end_status\": null, \"end_errno\": null");
	printf(", \"truncated\": %s, \"skipped\": %llu, \"functions\": %llu",
	       in->truncated ? "true" : "false", (unsigned long long)dec_bad_records(d),
	       (unsigned long long)in->funcs);
	json_field("version", ri, ri ? ri->version : "");
	json_field("host", ri, ri ? ri->host : "");
	json_field("kernel", ri, ri ? ri->release : "");
	json_field("machine", ri, ri ? ri->machine : "");
	json_field("cpu", ri, ri ? ri->cpu : "");
	printf("}\n");
}

int cmd_info(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "json", no_argument, NULL, 'j' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	const char *path = "fhook.rec";
	struct info in = { 0 };
	bool json = false;
	struct dec *d;
	int c, ret;

	optind = 1;
	while ((c = getopt_long(argc, argv, "h", opts, NULL)) != -1) {
		switch (c) {
		case 'j':
			json = true;
			break;
		case 'h':
			info_usage(stdout);
			return 0;
		default:
			info_usage(stderr);
			return 2;
		}
	}
	if (optind < argc)
		path = argv[optind++];
	if (optind < argc) {
		info_usage(stderr);
		return 2;
	}
	d = cli_open_recording_with("info", path, info_block, &in);
	if (!d)
		return 1;
	in.size = dec_file_size(d);
	in.truncated = dec_truncated(d);
	ret = assign_threads(&in);
	if (!ret)
		ret = dec_flush(d, count_event, &in);
	if (ret) {
		fprintf(stderr, "fhook: info: %s: %s\n", path, strerror(-ret));
		goto out;
	}
	if (json)
		print_json(path, &in, d);
	else
		print_text(path, &in, d);
	if (fflush(stdout) || ferror(stdout)) {
		fprintf(stderr, "fhook: info: writing the output: %s\n", strerror(errno));
		ret = -EIO;
	}
out:
	free(in.imgs);
	free(in.thrs);
	free(in.set);
	dec_free(d);
	return ret ? 1 : 0;
}
