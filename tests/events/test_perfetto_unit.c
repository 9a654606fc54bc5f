// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * The Perfetto writer (lib/events/perfetto.c) fed synthetic decoded
 * events, without a recording or the decoder: tests/events/test_perfetto.sh
 * builds it and checks the files it writes with protoc.
 *
 *   test_perfetto_unit golden FILE     a small trace covering every case,
 *                                      compared with expected/perfetto.txt
 *   test_perfetto_unit bulk FILE N     N events of 50 functions (interning);
 *                                      prints the peak RSS (memory bound)
 *   test_perfetto_unit fuzz FILE N     N events of random definitions and
 *                                      bytes: must not crash, must decode
 *   test_perfetto_unit errors          error paths; prints PASS/FAIL lines
 *   test_perfetto_unit                 what needs no protoc: the error paths,
 *                                      the size bound, random input (as
 *                                      tests/run.sh runs it after make)
 */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <unistd.h>

#include <fhook/internal/events.h>

#include "perfetto.h"

#ifdef PF_LOCAL_TYPES
/* lib/recorder/types.c is not in this tree: the two helpers, as parse.c has them. */
unsigned int fhook_ev_type_size(int type)
{
	static const unsigned char size[FHOOK_EVT_NR] = {
		1, 2, 4, 8, 1, 2, 4, 8, 1, 2, 4, 8, 1, 8, 4, 4, 4,
	};

	return type >= 0 && type < FHOOK_EVT_NR ? size[type] : 0;
}

bool fhook_ev_type_is_string(int type)
{
	return type == FHOOK_EVT_STRING || type == FHOOK_EVT_USTRING || type == FHOOK_EVT_SYMSTR;
}
#endif

/* ---- the name callback ---- */

struct fn {
	uint64_t ip;
	const char *name;
};

static const struct fn golden_fns[] = {
	{ 0x1000, "main" }, { 0x2000, "work" }, { 0x3000, "log_it" }, { 0x4000, "helper" },
	{ 0 },
};

static const char *name_of(void *ctx, const struct dec_event *ev)
{
	static char buf[32];
	const struct fn *f;

	for (f = ctx; f->name; f++)
		if (f->ip == ev->ip)
			return f->name;
	snprintf(buf, sizeof(buf), "0x%" PRIx64, ev->ip);
	return buf;
}

/* ---- argument bytes, laid out as record_fetch.c writes them ---- */

struct argbuf {
	unsigned char b[16384];
	size_t len;
};

static void ab_pad(struct argbuf *ab)
{
	while (ab->len & 7)
		ab->b[ab->len++] = 0;
}

/* @n: bytes with the NUL; 0: a fault */
static void ab_str(struct argbuf *ab, const void *s, uint32_t n)
{
	memcpy(ab->b + ab->len, &n, 4);
	memcpy(ab->b + ab->len + 4, s, n);
	ab->len += 4 + n;
	ab_pad(ab);
}

static void ab_vals(struct argbuf *ab, const void *v, size_t size, unsigned int n, int fault)
{
	memcpy(ab->b + ab->len, v, size * n);
	ab->len += size * n;
	ab->b[ab->len++] = fault;
	ab_pad(ab);
}

static int check(int ret, const char *what)
{
	if (ret) {
		fprintf(stderr, "%s: %s\n", what, strerror(-ret));
		exit(1);
	}
	return 0;
}

static int open_out(const char *path)
{
	int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0644);

	if (fd < 0) {
		perror(path);
		exit(1);
	}
	return fd;
}

#define ARG(n, t, c)	{ .name = (char *)(n), .type = (t), .count = (c) }
#define DEF(g, e, s, ret, slice, a)					\
	{ .group = (char *)(g), .event = (char *)(e), .symbol = (char *)(s),	\
	  .is_return = (ret), .is_slice = (slice),			\
	  .nr_args = sizeof(a) / sizeof((a)[0]), .args = (a) }

static struct dec_arg no_args[0];
static struct dec_arg main_exit_args[] = { ARG("ret", FHOOK_EVT_S32, 0) };
static struct dec_arg work_args[] = {
	ARG("n", FHOOK_EVT_U32, 0), ARG("tag", FHOOK_EVT_STRING, 0),
};
static struct dec_arg log_args[] = {
	ARG("msg", FHOOK_EVT_STRING, 0),
	ARG("count", FHOOK_EVT_S64, 0),
	ARG("arr", FHOOK_EVT_U16, 3),
	ARG("bad", FHOOK_EVT_U64, 0),
	ARG("sym", FHOOK_EVT_SYMBOL, 0),
	ARG("hex", FHOOK_EVT_X32, 0),
	ARG("c", FHOOK_EVT_CHAR, 0),
	ARG("nul", FHOOK_EVT_USTRING, 0),
	ARG("raw", FHOOK_EVT_STRING, 0),
	ARG("long", FHOOK_EVT_STRING, 0),
	ARG("where", FHOOK_EVT_SYMSTR, 0),
	ARG("neg", FHOOK_EVT_S8, 0),
	ARG("arrfault", FHOOK_EVT_X8, 2),
};
static struct dec_arg ret_args[] = { ARG("rv", FHOOK_EVT_X64, 0) };
static struct dec_arg trunc_args[] = {
	ARG("a", FHOOK_EVT_U64, 0), ARG("b", FHOOK_EVT_STRING, 0), ARG("c", FHOOK_EVT_U8, 0),
};

static struct dec_event_def d_main_entry =
	DEF("fprobes", "main__entry", "main", false, true, no_args);
static struct dec_event_def d_main_exit =
	DEF("fprobes", "main__exit", "main", true, true, main_exit_args);
static struct dec_event_def d_work_entry =
	DEF("fprobes", "work__entry", "work", false, true, work_args);
static struct dec_event_def d_work_exit =
	DEF("fprobes", "work__exit", "work", true, true, no_args);
static struct dec_event_def d_log = DEF("app", "log", "log_it", false, false, log_args);
static struct dec_event_def d_ret = DEF("app", "probe_ret", "*", true, false, ret_args);
static struct dec_event_def d_trunc = DEF("app", "trunc", "log_it", false, false, trunc_args);

static void golden(const char *path)
{
	struct dec_thread a = { .num = 0, .pid = 100, .tid = 100, .comm = "demo" };
	struct dec_thread b = { .num = 1, .pid = 100, .tid = 101, .comm = "worker" };
	struct dec_event ev;
	struct argbuf ab;
	char longs[256];
	uint32_t u32;
	int32_t s32;
	int64_t s64;
	uint64_t u64;
	uint16_t arr[3] = { 1, 2, 65535 };
	uint8_t x8[2] = { 0xaa, 0xbb };
	int8_t s8 = -5;
	int fd = open_out(path);
	struct pf_writer *w = pf_new(fd, name_of, (void *)golden_fns);

	if (!w) {
		perror("pf_new");
		exit(1);
	}
#define EMIT(t, thr_, def_, ip_, buf_, len_) do {				\
		memset(&ev, 0, sizeof(ev));					\
		ev.ts = (t); ev.thr = (thr_); ev.def = (def_); ev.ip = (ip_);	\
		ev.args = (buf_); ev.args_len = (len_);				\
	} while (0)

	/* main() begins on the main thread */
	EMIT(1000, &a, &d_main_entry, 0x1000, NULL, 0);
	check(pf_event(w, &ev), "main entry");

	/* work(7, "job") on the worker */
	ab.len = 0;
	u32 = 7;
	ab_vals(&ab, &u32, 4, 1, 0);
	ab_str(&ab, "job", 4);
	EMIT(1100, &b, &d_work_entry, 0x2000, ab.b, ab.len);
	check(pf_event(w, &ev), "work entry b");

	/* work(8, "nested") inside main() */
	ab.len = 0;
	u32 = 8;
	ab_vals(&ab, &u32, 4, 1, 0);
	ab_str(&ab, "nested", 7);
	EMIT(1200, &a, &d_work_entry, 0x2000, ab.b, ab.len);
	ev.depth = 1;
	check(pf_event(w, &ev), "work entry a");

	/* an instant with every kind of argument */
	ab.len = 0;
	ab_str(&ab, "hello, world", 13);
	s64 = -1234567890123LL;
	ab_vals(&ab, &s64, 8, 1, 0);
	ab_vals(&ab, arr, 2, 3, 0);
	u64 = 42;
	ab_vals(&ab, &u64, 8, 1, 1);			/* bad: a fault */
	u64 = 0x4010;
	ab_vals(&ab, &u64, 8, 1, 0);			/* sym */
	u32 = 0xc0ffee;
	ab_vals(&ab, &u32, 4, 1, 0);			/* hex */
	ab_vals(&ab, "Z", 1, 1, 0);			/* c */
	ab_str(&ab, "", 0);				/* nul: a fault */
	ab_str(&ab, "ok\xff\xc3(\xe2\x82\xac\xed\xa0\x80!", 13);	/* raw */
	memset(longs, 'L', 255);
	longs[255] = 0;
	ab_str(&ab, longs, 256);			/* long: 255 characters */
	u64 = 0x4000;
	ab_str(&ab, &u64, 8);				/* where: symstr */
	ab_vals(&ab, &s8, 1, 1, 0);			/* neg */
	ab_vals(&ab, x8, 1, 2, 1);			/* arrfault */
	EMIT(1300, &a, &d_log, 0x3000, ab.b, ab.len);
	ev.depth = 2;
	check(pf_event(w, &ev), "log");

	EMIT(1400, &a, &d_work_exit, 0x2000, NULL, 0);
	ev.ret_ip = 0x1010;
	ev.depth = 1;
	check(pf_event(w, &ev), "work exit a");

	/* a return event that is not a slice, of an unknown function */
	ab.len = 0;
	u64 = 0xdeadbeef;
	ab_vals(&ab, &u64, 8, 1, 0);
	EMIT(1450, &b, &d_ret, 0x9999, ab.b, ab.len);
	ev.ret_ip = 0x2020;
	check(pf_event(w, &ev), "probe_ret");

	/* work() left by an exception */
	EMIT(1500, &b, &d_work_exit, 0x2000, NULL, 0);
	ev.unwound = true;
	check(pf_event(w, &ev), "work exit b");

	/* the worker renamed itself; arguments cut short inside the string */
	strcpy(b.comm, "worker2");
	ab.len = 0;
	u64 = 5;
	ab_vals(&ab, &u64, 8, 1, 0);
	ab_str(&ab, "truncated here", 15);
	ab_vals(&ab, "\1", 1, 1, 0);
	EMIT(1550, &b, &d_trunc, 0x3000, ab.b, 16 + 4 + 6);
	check(pf_event(w, &ev), "trunc");

	/* an exit whose entry was lost: an instant, not the end of main() */
	EMIT(1580, &a, &d_work_exit, 0, NULL, 0);
	check(pf_event(w, &ev), "lost entry");

	ab.len = 0;
	s32 = -1;
	ab_vals(&ab, &s32, 4, 1, 0);
	EMIT(1600, &a, &d_main_exit, 0x1000, ab.b, ab.len);
	ev.ret_ip = 0x77;
	check(pf_event(w, &ev), "main exit");

	check(pf_finish(w), "pf_finish");
	close(fd);
}

/* N events on two threads: entries and exits of 50 functions, one argument each. */
static void bulk(const char *path, long n)
{
	static struct dec_arg in_args[] = { ARG("x", FHOOK_EVT_U64, 0) };
	static struct dec_arg out_args[] = { ARG("ret", FHOOK_EVT_S64, 0) };
	struct dec_event_def d_in = DEF("fprobes", "bulk__entry", "bulk_*", false, true, in_args);
	struct dec_event_def d_out = DEF("fprobes", "bulk__exit", "bulk_*", true, true, out_args);
	struct dec_thread thr[2] = {
		{ .num = 0, .pid = 4242, .tid = 4242, .comm = "bulk" },
		{ .num = 1, .pid = 4242, .tid = 4243, .comm = "bulk-worker" },
	};
	struct fn fns[51];
	char names[50][48];
	struct dec_event ev;
	struct argbuf ab;
	struct rusage ru;
	int fd = open_out(path);
	struct pf_writer *w;
	long i;
	int k;

	for (k = 0; k < 50; k++) {
		snprintf(names[k], sizeof(names[k]), "bulk_function_with_a_long_name_%02d", k);
		fns[k] = (struct fn){ 0x10000 + 0x100 * k, names[k] };
	}
	fns[50] = (struct fn){ 0 };
	w = pf_new(fd, name_of, fns);
	if (!w) {
		perror("pf_new");
		exit(1);
	}
	for (i = 0; i < n; i++) {
		uint64_t v = (uint64_t)i * 7;

		memset(&ev, 0, sizeof(ev));
		ev.ts = 1000000000ull + (uint64_t)i * 150;
		ev.thr = &thr[(i / 2) & 1];
		ev.def = i & 1 ? &d_out : &d_in;
		ev.ip = fns[(i / 2) % 50].ip;
		ab.len = 0;
		ab_vals(&ab, &v, 8, 1, 0);
		ev.args = ab.b;
		ev.args_len = ab.len;
		check(pf_event(w, &ev), "bulk event");
	}
	check(pf_finish(w), "pf_finish");
	close(fd);
	if (!getrusage(RUSAGE_SELF, &ru))
		printf("maxrss_kb %ld\n", ru.ru_maxrss);
}

/* Random definitions and bytes: whatever a broken recording may hold. */
static void fuzz(const char *path, long n)
{
	static const char *grp[] = { "g", "grp\xff", "\xe2\x82", "" };
	struct dec_arg args[24];
	struct dec_event_def def = { .group = (char *)"fz", .event = (char *)"ev", .args = args };
	struct dec_thread thr[3] = {
		{ .num = 0, .pid = 1, .tid = 1, .comm = "f\xc3" },
		{ .num = 1, .pid = 1, .tid = 2 },
		{ .num = 7, .pid = 0xffffffff, .tid = 0x80000000u },
	};
	struct fn fns[] = { { 1, "a\xc0\xafz" }, { 0 } };
	unsigned char bytes[600];
	struct dec_event ev;
	int fd = open_out(path);
	struct pf_writer *w = pf_new(fd, name_of, fns);
	long i;
	int k;

	if (!w) {
		perror("pf_new");
		exit(1);
	}
	srand(1);
	for (i = 0; i < n; i++) {
		size_t len = rand() % sizeof(bytes);

		def.nr_args = rand() % 25;
		def.is_slice = rand() & 1;
		def.is_return = rand() & 1;
		def.group = (char *)grp[rand() % 4];
		for (k = 0; k < def.nr_args; k++) {
			args[k].name = (char *)(k & 1 ? "arg" : "\xff\xfe");
			args[k].type = rand() % (FHOOK_EVT_NR + 2) - 1;
			args[k].count = rand() % 5 ? 0 : rand() % 70;
		}
		for (k = 0; k < (int)len; k++)
			bytes[k] = rand() % 3 ? rand() % 8 : rand();
		/* plausible string lengths now and then */
		if (len >= 4 && rand() % 2) {
			uint32_t l = rand() % (len - 3);

			memcpy(bytes, &l, 4);
		}
		thr[0].comm[2] = rand();
		memset(&ev, 0, sizeof(ev));
		ev.ts = i;
		ev.thr = rand() % 10 ? &thr[rand() % 3] : NULL;
		ev.def = &def;
		ev.ip = rand() % 3;
		ev.unwound = rand() & 1;
		ev.args = rand() % 20 ? bytes : NULL;
		ev.args_len = len;
		check(pf_event(w, &ev), "fuzz event");
	}
	check(pf_finish(w), "pf_finish");
	close(fd);
}

static int fails;

static void result(bool ok, const char *name, const char *why)
{
	if (ok) {
		printf("PASS %s\n", name);
	} else {
		printf("FAIL %s: %s\n", name, why);
		fails++;
	}
}

static void errors(void)
{
	struct dec_thread t = { .num = 0, .pid = 1, .tid = 1, .comm = "x" };
	struct dec_event ev = { .ts = 1, .thr = &t, .def = &d_main_entry, .ip = 0x1000 };
	struct pf_writer *w;
	int ret, fds[2];
	long i;

	errno = 0;
	w = pf_new(1, NULL, NULL);
	result(!w && errno == EINVAL, "unit_new_needs_name_fn", "pf_new(NULL name_of) succeeded");

	/* a bad fd: the error comes at the flush, from pf_finish */
	w = pf_new(-1, name_of, (void *)golden_fns);
	ret = pf_event(w, &ev);
	result(ret == 0, "unit_event_buffered", "pf_event wrote at once");
	ret = pf_finish(w);
	result(ret == -EBADF, "unit_finish_write_error", "pf_finish did not return -EBADF");

	/* a pipe nobody reads: EPIPE once 1 MiB is buffered, then it sticks */
	if (pipe(fds) == 0) {
		close(fds[0]);
		signal(SIGPIPE, SIG_IGN);
		w = pf_new(fds[1], name_of, (void *)golden_fns);
		for (i = 0, ret = 0; i < 1000000 && !ret; i++) {
			ev.ts = i;
			ret = pf_event(w, &ev);
		}
		result(ret == -EPIPE, "unit_event_write_error", "no -EPIPE from pf_event");
		result(pf_event(w, &ev) == -EPIPE, "unit_error_sticks", "a later event succeeded");
		result(pf_finish(w) == -EPIPE, "unit_finish_after_error", "pf_finish forgot the error");
		close(fds[1]);
	}

	ev.def = NULL;
	w = pf_new(-1, name_of, (void *)golden_fns);
	result(pf_event(w, &ev) == -EINVAL, "unit_event_without_def", "accepted");
	pf_finish(w);
}

/* The checks that need no protoc, for tests/run.sh. */
static void selftest(void)
{
	char path[] = "/tmp/fhook-perfetto-XXXXXX";
	struct stat st;
	long n = 200000;
	int fd = mkstemp(path);

	errors();
	if (fd < 0) {
		result(false, "unit_interning", "no temporary file");
	} else {
		close(fd);
		bulk(path, n);
		if (stat(path, &st))
			result(false, "unit_interning", "the trace vanished");
		else
			result(st.st_size < n * 32, "unit_interning", "over 32 bytes an event");
		unlink(path);
	}
	fuzz("/dev/null", 20000);
	result(true, "unit_fuzz", "");
}

int main(int argc, char **argv)
{
	if (argc == 1) {
		selftest();
		return fails != 0;
	} else if (argc >= 3 && !strcmp(argv[1], "golden")) {
		golden(argv[2]);
	} else if (argc >= 4 && !strcmp(argv[1], "bulk")) {
		bulk(argv[2], atol(argv[3]));
	} else if (argc >= 4 && !strcmp(argv[1], "fuzz")) {
		fuzz(argv[2], atol(argv[3]));
	} else if (argc >= 2 && !strcmp(argv[1], "errors")) {
		errors();
		return fails != 0;
	} else {
		fprintf(stderr, "usage: %s golden FILE | bulk FILE N | fuzz FILE N | errors\n",
			argv[0]);
		return 2;
	}
	return 0;
}
