// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * The command's side of `fhook trace`: create the shared memory, write the
 * compiled events into it, drain the rings while the program runs, and
 * decode, symbolize and print the records in text (the kernel's trace
 * format), JSON lines or Chrome trace-event JSON.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <pthread.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include <fhook/events.h>

#include "ev.h"
#include "ring.h"

enum { FMT_TEXT, FMT_JSON, FMT_CHROME };

#define KSYM_LEN	640

/* What the command keeps of a process image once its mailbox is freed. */
struct trace_obj {
	uint64_t base;
	const char *path;		/* interned: t->paths */
};

struct trace_proc {
	uint32_t pid;
	uint32_t nr_objs;
	struct trace_obj objs[];
};

/* A thread as its records print: its ring is reused, this is not. */
struct trace_thread {
	struct trace_thread *next;	/* t->threads, for freeing */
	const struct trace_proc *proc;	/* NULL: print addresses */
	uint64_t seq;
	uint32_t pid, tid;
	char comm[16];
};

/* How often the command looks for rings whose thread is gone. */
#define TRACE_REAP_NS		(10 * 1000 * 1000)
/* Process images the command can hold (a hostile seq is not an allocation size). */
#define TRACE_MAX_SEQ		(1U << 24)

struct fhook_trace {
	struct ev_shm *shm;
	int fd;
	struct fhook_event *evs;
	int nr_evs;
	bool *is_slice;		/* Chrome: the event pairs up with an entry/exit */
	struct fhook_event_prog *prog;
	struct ev_file **extra;	/* files of other programs the children ran */
	int nr_extra;
	int fmt;
	FILE *out;
	bool first;
	uint64_t events;
	uint64_t t0;
	/* records copied out of the rings, waiting to be printed */
	pthread_mutex_t q_lock;
	pthread_cond_t q_cond;
	struct trace_batch *q_head, **q_tail;
	size_t q_bytes;
	uint64_t q_overflow;		/* records left in the rings: queue full */
	struct trace_batch *spare;	/* printed batches to reuse, under q_lock */
	int nr_spare;
	/*
	 * Processes and threads, owned by the drain thread; the printer sees
	 * a trace_thread (and its trace_proc) only through a queued batch.
	 */
	struct trace_proc **procs;	/* by seq */
	uint32_t procs_cap;
	char **paths;
	int nr_paths;
	struct trace_thread *ring_thr[EV_MAX_RINGS];
	bool ring_dead[EV_MAX_RINGS];
	struct trace_thread *threads;
	uint64_t lost_freed;		/* lost counts of rings since freed */
	uint64_t reap_ns;
};

/*
 * One drain's worth of records, copied out of the rings so that their
 * space goes back to the producers at once, before the slow part
 * (symbolizing and formatting) begins.
 */
struct trace_batch {
	struct trace_batch *next;
	size_t np;
	struct pending *pend;
	unsigned char *data;
	size_t bytes;
	size_t cap;			/* of data; pend holds cap / sizeof(ev_rec) + 1 */
};

/*
 * Printed batches are kept for the next drains: a fresh multi-megabyte
 * buffer per drain costs a page fault per page, and on a virtual machine
 * those faults made the copy slower than the producers.
 */
#define TRACE_SPARE_BATCHES	4
#define TRACE_SPARE_MAX		(64UL << 20)

/* Past this much copied but unprinted data, records wait in the rings. */
#define TRACE_QUEUE_MAX		(512UL << 20)

static void desc_printf(struct ev_shm *shm, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

static void desc_printf(struct ev_shm *shm, const char *fmt, ...)
{
	va_list ap;
	int w;

	va_start(ap, fmt);
	w = vsnprintf(shm->desc + shm->desc_len, EV_DESC_SIZE - shm->desc_len, fmt, ap);
	va_end(ap);
	if (w > 0 && shm->desc_len + w < EV_DESC_SIZE)
		shm->desc_len += w;
}

static void desc_write(struct fhook_trace *t, char **callers, int nr_callers)
{
	struct ev_shm *shm = t->shm;
	int i, j, k;

	for (i = 0; i < t->nr_evs; i++) {
		struct fhook_event *ev = &t->evs[i];

		desc_printf(shm, "E %d %d %d %d ", i, ev->is_return, ev->nr_args, ev->nr_entry_args);
		for (j = 0; j < ev->nr_entry_args; j++)
			desc_printf(shm, "%d ", ev->entry_args[j]);
		desc_printf(shm, "%u %s\n", ev->maxactive, ev->symbol);
		for (j = 0; j < ev->nr_args; j++) {
			struct fhook_event_arg *a = &ev->args[j];
			int n = 0;

			while (n < FHOOK_EV_FETCH_INSN_MAX && a->code[n].op != FHOOK_FOP_END)
				n++;
			desc_printf(shm, "A %d %u %d", a->type, a->count, n);
			for (k = 0; k < n; k++) {
				struct fhook_fetch_insn *in = &a->code[k];
				const unsigned char *d = (const unsigned char *)in->data;

				long param = in->param;
				static char rp[4096];

				if (in->op == FHOOK_FOP_SYMBOL && t->prog) {
					/* the file and link-time address; the process adds its base */
					const struct ev_sym *s;
					char name[512];
					size_t nl = strcspn(in->data, "+-");
					int file = 0;
					long off = 0;

					snprintf(name, sizeof(name), "%.*s", (int)nl, in->data);
					if (in->data[nl])
						off = strtol(in->data + nl, NULL, 0);
					s = ev_prog_find(t->prog, name, false, &file);
					if (s && realpath(t->prog->files[file].path, rp)) {
						param = s->addr + off;
						d = (const unsigned char *)rp;
					}
				}
				desc_printf(shm, " %d %ld %u %u %u ", in->op, param, in->lshift,
					    in->rshift, in->basesize);
				if (!d || !*d)
					desc_printf(shm, "-");
				for (; d && *d; d++)
					desc_printf(shm, "%02x", *d);
			}
			desc_printf(shm, "\n");
		}
	}
	for (i = 0; i < nr_callers; i++)
		desc_printf(shm, "C %s\n", callers[i]);
}

struct fhook_trace *fhook_trace_new(struct fhook_event *evs, int nr_evs,
				    struct fhook_event_prog *prog, char **callers,
				    int nr_callers, bool follow, const char *format, FILE *out)
{
	struct fhook_trace *t = calloc(1, sizeof(*t));
	char num[16];
	int i, j;

	if (!t)
		return NULL;
	t->fd = memfd_create("fhook-trace", 0);
	if (t->fd < 0 || ftruncate(t->fd, ev_shm_size()))
		goto fail;
	t->shm = mmap(NULL, ev_shm_size(), PROT_READ | PROT_WRITE, MAP_SHARED, t->fd, 0);
	if (t->shm == MAP_FAILED)
		goto fail;
	t->shm->magic = EV_SHM_MAGIC;
	t->shm->size = ev_shm_size();
	t->shm->follow = follow;
	t->evs = evs;
	t->nr_evs = nr_evs;
	t->prog = prog;
	t->out = out;
	t->first = true;
	pthread_mutex_init(&t->q_lock, NULL);
	pthread_cond_init(&t->q_cond, NULL);
	t->q_tail = &t->q_head;
	t->fmt = !strcmp(format, "json") ? FMT_JSON : !strcmp(format, "chrome") ? FMT_CHROME
										 : FMT_TEXT;
	/* an entry event and a return event on the same function make a slice */
	t->is_slice = calloc(nr_evs ? nr_evs : 1, sizeof(bool));
	for (i = 0; i < nr_evs; i++) {
		bool first = true, other = false;

		/* only the first entry and the first exit event of a function pair up */
		for (j = 0; j < nr_evs; j++) {
			if (strcmp(evs[i].symbol, evs[j].symbol))
				continue;
			if (j < i && evs[i].is_return == evs[j].is_return)
				first = false;
			if (evs[i].is_return != evs[j].is_return)
				other = true;
		}
		t->is_slice[i] = first && other;
	}
	desc_write(t, callers, nr_callers);
	snprintf(num, sizeof(num), "%d", t->fd);
	setenv("FHOOK_EV_SHM", num, 1);
	if (t->fmt == FMT_CHROME)
		fprintf(out, "{\"traceEvents\":[\n");
	return t;
fail:
	if (t->fd >= 0)
		close(t->fd);
	free(t);
	return NULL;
}

static struct ev_file *file_for(struct fhook_trace *t, const char *path)
{
	struct fhook_event_prog *p;
	int i;

	for (i = 0; i < t->prog->nr_files; i++)
		if (!strcmp(t->prog->files[i].path, path))
			return &t->prog->files[i];
	for (i = 0; i < t->nr_extra; i++)
		if (!strcmp(t->extra[i]->path, path))
			return t->extra[i];
	/* a program a child ran: read its symbols once */
	p = fhook_event_prog_open(path, NULL, 0);
	t->extra = realloc(t->extra, (t->nr_extra + 1) * sizeof(*t->extra));
	if (!p) {
		struct ev_file *f = calloc(1, sizeof(*f));

		f->path = strdup(path);
		f->fd = -1;
		t->extra[t->nr_extra++] = f;
		return f;
	}
	t->extra[t->nr_extra++] = &p->files[0];
	return &p->files[0];
}

/* "name+0xoff/0xsize", "name" (no_off), or "0xaddr" */
static void symbolize(struct fhook_trace *t, const struct trace_proc *p, uint64_t addr,
		      bool no_off, char *buf, size_t size)
{
	uint32_t i;

	if (p) {
		const struct ev_sym *best = NULL;
		uint64_t best_base = 0;

		for (i = 0; i < p->nr_objs; i++) {
			const struct ev_sym *s;

			if (p->objs[i].base > addr || (best && p->objs[i].base < best_base))
				continue;
			s = ev_file_sym_at(file_for(t, p->objs[i].path), addr - p->objs[i].base);
			if (s) {
				best = s;
				best_base = p->objs[i].base;
			}
		}
		if (best) {
			if (no_off)
				snprintf(buf, size, "%s", best->name);
			else
				snprintf(buf, size, "%s+0x%lx/0x%lx", best->name,
					 (unsigned long)(addr - best_base - best->addr), best->size);
			return;
		}
	}
	snprintf(buf, size, "0x%lx", (unsigned long)addr);
}

static void json_str(FILE *f, const char *s)
{
	fputc('"', f);
	for (; *s; s++) {
		unsigned char ch = *s;

		if (ch == '"' || ch == '\\')
			fprintf(f, "\\%c", ch);
		else if (ch < 0x20)
			fprintf(f, "\\u%04x", ch);
		else
			fputc(ch, f);
	}
	fputc('"', f);
}

/* One value as the kernel prints it; *quoted says whether JSON needs quotes. */
static void format_value(struct fhook_trace *t, const struct trace_proc *proc, int type,
			 const unsigned char *p, char *buf, size_t size, bool *numeric)
{
	uint64_t v = 0;

	memcpy(&v, p, fhook_ev_type_size(type));
	*numeric = true;
	switch (type) {
	case FHOOK_EVT_U8: case FHOOK_EVT_U16: case FHOOK_EVT_U32: case FHOOK_EVT_U64:
		snprintf(buf, size, "%llu", (unsigned long long)v);
		break;
	case FHOOK_EVT_S8: snprintf(buf, size, "%d", (int8_t)v); break;
	case FHOOK_EVT_S16: snprintf(buf, size, "%d", (int16_t)v); break;
	case FHOOK_EVT_S32: snprintf(buf, size, "%d", (int32_t)v); break;
	case FHOOK_EVT_S64: snprintf(buf, size, "%lld", (long long)v); break;
	case FHOOK_EVT_CHAR:
		*numeric = false;
		snprintf(buf, size, "'%c'", (char)v);
		break;
	case FHOOK_EVT_SYMBOL:
		*numeric = false;
		symbolize(t, proc, v, false, buf, size);
		break;
	default:
		*numeric = false;
		snprintf(buf, size, "0x%llx", (unsigned long long)v);
		break;
	}
}

/* Decode the arguments of @rec into "name=value" pairs. */
static void print_args(struct fhook_trace *t, const struct trace_thread *thr,
		       struct fhook_event *ev, const struct ev_rec *rec)
{
	const unsigned char *p = (const unsigned char *)(rec + 1);
	const unsigned char *end = (const unsigned char *)rec + rec->len;
	FILE *f = t->out;
	int i;
	unsigned int k;

	for (i = 0; i < ev->nr_args && p < end; i++) {
		struct fhook_event_arg *a = &ev->args[i];
		char val[1024];
		bool numeric;

		if (t->fmt == FMT_TEXT)
			fprintf(f, " %s=", a->name);
		else
			fprintf(f, "%s\"%s\":", i ? "," : "", a->name);
		if (fhook_ev_type_is_string(a->type)) {
			uint32_t len;
			const char *s = (const char *)p + 4;

			/* the record comes from the traced program: trust no length */
			if (end - p < 4)
				break;
			memcpy(&len, p, 4);
			if (len > (size_t)(end - p) - 4) {
				fputs(t->fmt == FMT_TEXT ? "(bad)" : "null", f);
				break;
			}
			if (!len) {
				snprintf(val, sizeof(val), "(fault)");
			} else if (a->type == FHOOK_EVT_SYMSTR) {
				uint64_t addr = 0;

				if (len >= 8)
					memcpy(&addr, s, 8);
				symbolize(t, thr->proc, addr, false, val, sizeof(val));
			} else {
				snprintf(val, sizeof(val), "%.*s", (int)strnlen(s, len), s);
			}
			if (t->fmt == FMT_TEXT) {
				if (len)
					fprintf(f, "\"%s\"", val);
				else
					fputs(val, f);
			} else {
				json_str(f, val);
			}
			p += (4 + len + 7) & ~7U;
			continue;
		}
		{
			unsigned int size = fhook_ev_type_size(a->type), n = a->count ? a->count : 1;
			bool fault;

			if ((size_t)(end - p) < (size_t)size * n + 1) {
				fputs(t->fmt == FMT_TEXT ? "(bad)" : "null", f);
				break;
			}
			fault = p[size * n];

			if (fault) {
				if (t->fmt == FMT_TEXT)
					fputs("(fault)", f);
				else
					fputs("null", f);
			} else {
				if (a->count)
					fputs(t->fmt == FMT_TEXT ? "{" : "[", f);
				for (k = 0; k < n; k++) {
					format_value(t, thr->proc, a->type, p + k * size, val,
						     sizeof(val), &numeric);
					if (k)
						fputc(',', f);
					if (t->fmt == FMT_TEXT || numeric)
						fputs(val, f);
					else
						json_str(f, val);
				}
				if (a->count)
					fputs(t->fmt == FMT_TEXT ? "}" : "]", f);
			}
			p += (size * n + 1 + 7) & ~7U;
		}
	}
}

static void print_rec(struct fhook_trace *t, const struct trace_thread *thr,
		      const struct ev_rec *rec)
{
	struct fhook_event *ev;
	char func[KSYM_LEN], where[2 * KSYM_LEN + 8], fname[KSYM_LEN];
	FILE *f = t->out;
	unsigned long sec, usec;

	if (rec->id >= (uint32_t)t->nr_evs)
		return;
	ev = &t->evs[rec->id];
	t->events++;
	symbolize(t, thr->proc, rec->ip, true, fname, sizeof(fname));
	if (ev->is_return) {
		char caller[KSYM_LEN];

		symbolize(t, thr->proc, rec->ret_ip, false, caller, sizeof(caller));
		snprintf(where, sizeof(where), "%s <- %s", caller, fname);
	} else {
		symbolize(t, thr->proc, rec->ip, false, func, sizeof(func));
		snprintf(where, sizeof(where), "%s", func);
	}
	sec = rec->ts / 1000000000ULL;
	usec = (rec->ts % 1000000000ULL) / 1000;
	switch (t->fmt) {
	case FMT_TEXT:
		fprintf(f, "%16s-%-7u [%03u] %5lu.%06lu: %s: (%s)", thr->comm, thr->tid, rec->cpu,
			sec, usec, ev->event, where);
		print_args(t, thr, ev, rec);
		fputc('\n', f);
		break;
	case FMT_JSON:
		fprintf(f, "{\"comm\":");
		json_str(f, thr->comm);
		fprintf(f, ",\"pid\":%u,\"tid\":%u,\"cpu\":%u,\"ts\":%lu.%06lu,\"group\":\"%s\","
			"\"event\":\"%s\",\"type\":\"%s\",\"func\":", thr->pid, thr->tid, rec->cpu,
			sec, usec, ev->group, ev->event, ev->is_return ? "exit" : "entry");
		json_str(f, fname);
		fprintf(f, ",\"at\":");
		json_str(f, where);
		fprintf(f, ",\"args\":{");
		print_args(t, thr, ev, rec);
		fprintf(f, "}}\n");
		break;
	default:
		fprintf(f, "%s{\"name\":", t->first ? "" : ",\n");
		json_str(f, fname);
		fprintf(f, ",\"cat\":\"%s/%s\",\"ph\":\"%s\",", ev->group, ev->event,
			!t->is_slice[rec->id] ? "i" : ev->is_return ? "E" : "B");
		if (!t->is_slice[rec->id])
			fprintf(f, "\"s\":\"t\",");
		fprintf(f, "\"ts\":%lu.%03lu,\"pid\":%u,\"tid\":%u,\"args\":{",
			(unsigned long)(rec->ts / 1000), (unsigned long)(rec->ts % 1000),
			thr->pid, thr->tid);
		print_args(t, thr, ev, rec);
		fprintf(f, "}}");
		t->first = false;
		break;
	}
}

struct pending {
	const struct trace_thread *thr;
	const struct ev_rec *rec;
};

static int pending_cmp(const void *a, const void *b)
{
	const struct pending *x = a, *y = b;

	if (x->rec->ts != y->rec->ts)
		return x->rec->ts < y->rec->ts ? -1 : 1;
	if (x->thr != y->thr)
		return x->thr < y->thr ? -1 : 1;
	/* one ring: its order (records of one drain never wrap past each other) */
	return x->rec < y->rec ? -1 : x->rec > y->rec;
}

static const char *intern_path(struct fhook_trace *t, const char *path)
{
	char **np;
	int i;

	for (i = 0; i < t->nr_paths; i++)
		if (!strcmp(t->paths[i], path))
			return t->paths[i];
	np = realloc(t->paths, (t->nr_paths + 1) * sizeof(*np));
	if (!np)
		return NULL;
	t->paths = np;
	if (!(np[t->nr_paths] = strdup(path)))
		return NULL;
	return np[t->nr_paths++];
}

/*
 * Copy the process images announced since the last call out of their
 * mailboxes and free them.  A new image of a pid (an exec) means the
 * threads of the pid's older images are gone: their rings can go.
 */
static void import_procs(struct fhook_trace *t)
{
	uint32_t i, j, k, n;

	for (i = 0; i < EV_MAX_PROCS; i++) {
		struct ev_proc *p = &t->shm->procs[i];
		struct trace_proc *tp;
		uint64_t seq, top;

		if (__atomic_load_n(&p->state, __ATOMIC_ACQUIRE) != EV_SLOT_READY)
			continue;
		top = __atomic_load_n(&t->shm->proc_seq, __ATOMIC_RELAXED);
		seq = p->seq;
		n = p->nr_objs < EV_MAX_OBJS ? p->nr_objs : EV_MAX_OBJS;
		if (!seq || seq > top || seq >= TRACE_MAX_SEQ)
			goto free_slot;
		if (seq >= t->procs_cap) {
			uint32_t cap = t->procs_cap ? t->procs_cap : 256;
			struct trace_proc **np;

			while (cap <= seq)
				cap *= 2;
			np = realloc(t->procs, cap * sizeof(*np));
			if (!np)
				goto free_slot;
			memset(np + t->procs_cap, 0, (cap - t->procs_cap) * sizeof(*np));
			t->procs = np;
			t->procs_cap = cap;
		}
		if (t->procs[seq])
			goto free_slot;
		tp = malloc(sizeof(*tp) + n * sizeof(tp->objs[0]));
		if (!tp)
			goto free_slot;
		tp->pid = p->pid;
		tp->nr_objs = 0;
		for (j = 0; j < n; j++) {
			char path[sizeof(p->objs[j].path)];

			/* written by the traced program: bounded, whatever it holds */
			memcpy(path, p->objs[j].path, sizeof(path));
			path[sizeof(path) - 1] = 0;
			tp->objs[tp->nr_objs].base = p->objs[j].base;
			tp->objs[tp->nr_objs].path = intern_path(t, path);
			if (tp->objs[tp->nr_objs].path)
				tp->nr_objs++;
		}
		t->procs[seq] = tp;
		for (k = 0; k < EV_MAX_RINGS; k++) {
			struct trace_thread *thr = t->ring_thr[k];

			if (thr && thr->pid == tp->pid && thr->seq && thr->seq < seq)
				t->ring_dead[k] = true;
		}
free_slot:
		__atomic_store_n(&p->state, EV_SLOT_FREE, __ATOMIC_RELEASE);
	}
}

static const struct trace_proc *proc_by_seq(struct fhook_trace *t, uint64_t seq)
{
	return seq && seq < t->procs_cap ? t->procs[seq] : NULL;
}

/* The thread ring @i belongs to, met the first time its records are read. */
static struct trace_thread *ring_thread(struct fhook_trace *t, uint32_t i)
{
	struct ev_ring *r = &t->shm->rings[i];
	struct trace_thread *thr = t->ring_thr[i];

	if (thr)
		return thr;
	thr = calloc(1, sizeof(*thr));
	if (!thr)
		return NULL;
	thr->pid = r->pid;
	thr->tid = r->tid;
	memcpy(thr->comm, r->comm, sizeof(thr->comm));
	thr->comm[sizeof(thr->comm) - 1] = 0;
	thr->seq = r->proc_seq;
	thr->proc = proc_by_seq(t, thr->seq);
	if (!thr->proc && thr->seq) {
		/* announced after this drain's first look at the mailboxes */
		import_procs(t);
		thr->proc = proc_by_seq(t, thr->seq);
	}
	thr->next = t->threads;
	t->threads = thr;
	t->ring_thr[i] = thr;
	return thr;
}

static bool thread_gone(const struct trace_thread *thr)
{
	return syscall(SYS_tgkill, (pid_t)thr->pid, (pid_t)thr->tid, 0) < 0 && errno == ESRCH;
}

/*
 * Rings whose thread is gone and whose records are copied go back to the
 * producers.  Only the drain thread frees, so a ring is never freed under
 * a copy; a producer claims it with a compare-and-swap and finds it empty.
 */
static void free_dead_rings(struct fhook_trace *t, uint32_t nr)
{
	uint32_t i;

	for (i = 0; i < nr; i++) {
		struct ev_ring *r = &t->shm->rings[i];

		if (!t->ring_dead[i])
			continue;
		t->ring_dead[i] = false;
		t->ring_thr[i] = NULL;
		t->lost_freed += __atomic_load_n(&r->lost, __ATOMIC_RELAXED);
		r->head = r->tail = r->lost = 0;
		r->proc_seq = 0;
		r->exited = 0;
		r->pid = r->tid = 0;
		memset(r->comm, 0, sizeof(r->comm));
		__atomic_store_n(&r->state, EV_SLOT_FREE, __ATOMIC_RELEASE);
		__atomic_add_fetch(&t->shm->rings_freed, 1, __ATOMIC_RELEASE);
	}
}

static void batch_free(struct trace_batch *b)
{
	free(b->pend);
	free(b->data);
	free(b);
}

/* A batch for @total bytes of records: a spare one if it is large enough. */
static struct trace_batch *batch_get(struct fhook_trace *t, size_t total)
{
	struct trace_batch *b, **pp;

	pthread_mutex_lock(&t->q_lock);
	for (pp = &t->spare; (b = *pp); pp = &b->next)
		if (b->cap >= total)
			break;
	if (!b && (b = t->spare))	/* too small: grow the first */
		pp = &t->spare;
	if (b) {
		*pp = b->next;
		t->nr_spare--;
	}
	pthread_mutex_unlock(&t->q_lock);
	if (b && b->cap < total) {
		batch_free(b);
		b = NULL;
	}
	if (!b) {
		size_t cap = total < (1UL << 20) ? (1UL << 20) : total;

		b = calloc(1, sizeof(*b));
		if (!b)
			return NULL;
		b->data = malloc(cap);
		b->pend = malloc((cap / sizeof(struct ev_rec) + 1) * sizeof(*b->pend));
		if (!b->data || !b->pend) {
			batch_free(b);
			return NULL;
		}
		b->cap = cap;
	}
	b->next = NULL;
	b->np = 0;
	b->bytes = 0;
	return b;
}

static void batch_put(struct fhook_trace *t, struct trace_batch *b)
{
	if (b->cap <= TRACE_SPARE_MAX) {
		pthread_mutex_lock(&t->q_lock);
		if (t->nr_spare < TRACE_SPARE_BATCHES) {
			b->next = t->spare;
			t->spare = b;
			t->nr_spare++;
			b = NULL;
		}
		pthread_mutex_unlock(&t->q_lock);
	}
	if (b)
		batch_free(b);
}

/*
 * fhook_trace_drain - copy every complete record out of the rings
 *
 * The copies are queued for fhook_trace_print(); the rings' space is given
 * back before this returns, so producers lose records only if a ring fills
 * between two drains.  Rings of threads that are gone are freed once their
 * last records are copied.  Returns the number of records copied.
 */
int fhook_trace_drain(struct fhook_trace *t)
{
	uint32_t nr = __atomic_load_n(&t->shm->nr_rings, __ATOMIC_ACQUIRE), i;
	uint64_t heads[EV_MAX_RINGS];	/* one snapshot: the copy is sized from it */
	size_t total = 0, off = 0, np = 0;
	struct trace_batch *b;
	struct timespec now;
	bool reap;

	if (nr > EV_MAX_RINGS)
		nr = EV_MAX_RINGS;
	pthread_mutex_lock(&t->q_lock);
	if (t->q_bytes > TRACE_QUEUE_MAX) {
		t->q_overflow++;
		pthread_mutex_unlock(&t->q_lock);
		return 0;
	}
	pthread_mutex_unlock(&t->q_lock);
	import_procs(t);
	clock_gettime(CLOCK_MONOTONIC, &now);
	reap = (uint64_t)now.tv_sec * 1000000000ULL + now.tv_nsec - t->reap_ns >= TRACE_REAP_NS;
	if (reap)
		t->reap_ns = (uint64_t)now.tv_sec * 1000000000ULL + now.tv_nsec;
	/* only this thread moves a ring's tail, so r->tail is ours to read */
	for (i = 0; i < nr; i++) {
		struct ev_ring *r = &t->shm->rings[i];
		struct trace_thread *thr;

		heads[i] = r->tail;
		if (__atomic_load_n(&r->state, __ATOMIC_ACQUIRE) != EV_SLOT_READY)
			continue;
		thr = ring_thread(t, i);
		if (!thr)
			continue;
		/* gone before its head is read: this copy is its last */
		if (!t->ring_dead[i] && (__atomic_load_n(&r->exited, __ATOMIC_ACQUIRE) ||
					 (reap && thread_gone(thr))))
			t->ring_dead[i] = true;
		heads[i] = __atomic_load_n(&r->head, __ATOMIC_ACQUIRE);
		/* a head no correct producer can write: read no more than the ring */
		if (heads[i] < r->tail)
			heads[i] = r->tail;
		else if (heads[i] - r->tail > EV_RING_SIZE)
			heads[i] = r->tail + EV_RING_SIZE;
		total += heads[i] - r->tail;
	}
	if (!total)
		goto out;
	b = batch_get(t, total);
	if (!b)
		return -ENOMEM;
	for (i = 0; i < nr; i++) {
		struct ev_ring *r = &t->shm->rings[i];
		uint64_t tail = r->tail;

		while (tail < heads[i]) {
			const struct ev_rec *rec = (const void *)(r->data + tail % EV_RING_SIZE);
			uint32_t len = rec->len;

			/*
			 * The ring is written by the traced program, which may be
			 * buggy: a record must be whole and inside what was
			 * published, else the rest of this ring is not trusted.
			 */
			if (len < 8 || len % 8 || len > EV_RING_SIZE || tail + len > heads[i] ||
			    (rec->id != EV_REC_PAD && len < sizeof(struct ev_rec)))
				break;
			if (rec->id != EV_REC_PAD) {
				memcpy(b->data + off, rec, len);
				b->pend[np].thr = t->ring_thr[i];
				b->pend[np++].rec = (const void *)(b->data + off);
				off += len;
			}
			tail += len;
		}
		/* the copy is ours: the producers may reuse the space now */
		__atomic_store_n(&r->tail, tail, __ATOMIC_RELEASE);
	}
	b->np = np;
	b->bytes = off;
	pthread_mutex_lock(&t->q_lock);
	*t->q_tail = b;
	t->q_tail = &b->next;
	t->q_bytes += off;
	pthread_cond_signal(&t->q_cond);
	pthread_mutex_unlock(&t->q_lock);
out:
	free_dead_rings(t, nr);
	return (int)np;
}

static struct trace_batch *dequeue(struct fhook_trace *t, bool wait)
{
	struct trace_batch *b;

	pthread_mutex_lock(&t->q_lock);
	if (wait && !t->q_head) {
		struct timespec ts;

		clock_gettime(CLOCK_REALTIME, &ts);
		ts.tv_nsec += 20 * 1000 * 1000;
		if (ts.tv_nsec >= 1000000000) {
			ts.tv_sec++;
			ts.tv_nsec -= 1000000000;
		}
		pthread_cond_timedwait(&t->q_cond, &t->q_lock, &ts);
	}
	b = t->q_head;
	if (b) {
		t->q_head = b->next;
		if (!t->q_head)
			t->q_tail = &t->q_head;
		t->q_bytes -= b->bytes;
	}
	pthread_mutex_unlock(&t->q_lock);
	return b;
}

/*
 * fhook_trace_print - symbolize and print the queued records, each drain's
 * batch in time order.  With @wait, waits a little for a batch when none
 * is queued.  Returns the number of records printed.
 */
int fhook_trace_print(struct fhook_trace *t, bool wait)
{
	struct trace_batch *b;
	int n = 0;

	while ((b = dequeue(t, wait && !n))) {
		size_t k;

		qsort(b->pend, b->np, sizeof(*b->pend), pending_cmp);
		for (k = 0; k < b->np; k++)
			print_rec(t, b->pend[k].thr, b->pend[k].rec);
		n += (int)b->np;
		batch_put(t, b);
	}
	if (n)
		fflush(t->out);
	return n;
}

static uint64_t trace_lost(struct fhook_trace *t)
{
	uint64_t lost = 0;
	uint32_t nr, i;

	nr = t->shm->nr_rings > EV_MAX_RINGS ? EV_MAX_RINGS : t->shm->nr_rings;
	for (i = 0; i < nr; i++)
		if (__atomic_load_n(&t->shm->rings[i].state, __ATOMIC_ACQUIRE) == EV_SLOT_READY)
			lost += __atomic_load_n(&t->shm->rings[i].lost, __ATOMIC_RELAXED);
	return lost + t->lost_freed + __atomic_load_n(&t->shm->lost_no_ring, __ATOMIC_RELAXED);
}

void fhook_trace_status(struct fhook_trace *t, FILE *tty)
{
	fprintf(tty, "\rfhook: trace: %llu events, %llu nmissed, %llu lost\033[K",
		(unsigned long long)t->events,
		(unsigned long long)__atomic_load_n(&t->shm->nmissed, __ATOMIC_RELAXED),
		(unsigned long long)trace_lost(t));
	fflush(tty);
}

void fhook_trace_finish(struct fhook_trace *t, FILE *summary)
{
	uint64_t lost;

	fhook_trace_drain(t);
	fhook_trace_print(t, false);
	lost = trace_lost(t);
	if (t->fmt == FMT_CHROME)
		fprintf(t->out, "\n],\"displayTimeUnit\":\"ns\"}\n");
	fflush(t->out);
	if (summary)
		fprintf(summary, "fhook: trace: %llu events, %llu nmissed, %llu lost\n",
			(unsigned long long)t->events, (unsigned long long)t->shm->nmissed,
			(unsigned long long)lost);
}

void *fhook_trace_shm(struct fhook_trace *t)
{
	return t->shm;
}

void fhook_trace_free(struct fhook_trace *t)
{
	struct trace_batch *b;

	int i;

	if (!t)
		return;
	while ((b = t->q_head)) {
		t->q_head = b->next;
		batch_free(b);
	}
	while ((b = t->spare)) {
		t->spare = b->next;
		batch_free(b);
	}
	munmap(t->shm, ev_shm_size());
	close(t->fd);
	unsetenv("FHOOK_EV_SHM");
	for (i = 0; i < t->nr_extra; i++) {
		struct ev_file *f = t->extra[i];

		if (f->dw)
			dwarf_end(f->dw);
		if (f->fd >= 0)
			close(f->fd);
		free(f->syms);
		free(f->names);
		free(f->path);
	}
	free(t->extra);
	while (t->threads) {
		struct trace_thread *thr = t->threads;

		t->threads = thr->next;
		free(thr);
	}
	for (i = 0; i < (int)t->procs_cap; i++)
		free(t->procs[i]);
	free(t->procs);
	for (i = 0; i < t->nr_paths; i++)
		free(t->paths[i]);
	free(t->paths);
	free(t->is_slice);
	free(t);
}
