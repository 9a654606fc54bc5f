// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * The in-process side of `fhook trace`: read the compiled events from the
 * shared memory the command created (FHOOK_EV_SHM names its fd), register
 * one fprobe per event, and on every hit copy the fetched bytes into this
 * thread's ring.  Nothing is decoded or formatted here.
 *
 * The handlers allocate nothing and take no lock: a thread's first event
 * claims a ring with one atomic increment; memory is read with
 * process_vm_readv() so that a bad pointer in a fetch argument costs a
 * "(fault)" rather than a crash.
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <errno.h>
#include <link.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <sys/uio.h>
#include <time.h>
#include <unistd.h>
#include <pthread.h>

#include <fhook/fprobe.h>
#include <fhook/kallsyms.h>
#include <fhook/events.h>

#include "ring.h"

struct rec_arg {
	int type;
	unsigned int count;
	int nops;
	struct fhook_fetch_insn code[FHOOK_EV_FETCH_INSN_MAX];
};

struct rec_event {
	uint32_t id;
	bool unresolved;
	int nr_maxactive;
	bool is_return;
	int nr_args;
	struct rec_arg *args;
	int nr_entry;
	int entry_args[FHOOK_EV_MAX_ENTRY_ARGS];
	char *symbol;
};

/*
 * One fprobe per distinct SYM: every event on the same function(s) shares
 * it, so an entry and a return event on one function cost one hook, not a
 * site shared by two ops (which would go through the list function).
 */
struct rec_probe {
	struct fprobe fp;
	const char *symbol;
	int nr_entry, nr_ret;
	struct rec_event **entry;	/* entry events */
	struct rec_event **ret;		/* return events */
	size_t *ret_off;		/* where each return event's saved args go */
};

struct rec_range {
	unsigned long start, end;
};

static struct rec_probe *rec_probes;
static int rec_nr_probes;

static struct ev_shm *rec_shm;
static struct rec_event *rec_events;
static int rec_nr_events;
static struct rec_range *rec_callers;
static int rec_nr_callers;
static int rec_disabled;
static __thread struct ev_ring *rec_ring;
static __thread int rec_no_ring;
static __thread uint32_t rec_no_ring_gen;	/* rings_freed when none was free */
static uint64_t rec_proc_seq;			/* this image's ev_proc */
static pthread_key_t rec_ring_key;
static bool rec_have_key;

static int safe_read(void *dst, unsigned long src, size_t len)
{
	struct iovec l = { dst, len }, r = { (void *)src, len };

	return process_vm_readv(getpid(), &l, 1, &r, 1, 0) == (ssize_t)len ? 0 : -EFAULT;
}

/* Copy a NUL-terminated string of at most EV_STR_MAX - 1 bytes; -1 on a fault. */
static int safe_strcpy(char *dst, unsigned long src)
{
	size_t n = 0;

	while (n < EV_STR_MAX - 1) {
		size_t chunk = 4096 - ((src + n) & 4095), i;

		if (chunk > EV_STR_MAX - 1 - n)
			chunk = EV_STR_MAX - 1 - n;
		if (safe_read(dst + n, src + n, chunk))
			return n ? (int)n : -1;
		for (i = 0; i < chunk; i++)
			if (!dst[n + i])
				return n + i;
		n += chunk;
	}
	dst[n] = 0;
	return n;
}

/*
 * A free ring for this thread.  When none is free, the thread retries only
 * after the command has freed one (rings_freed moved), not on every event.
 */
static struct ev_ring *get_ring(void)
{
	struct ev_ring *r = rec_ring;
	uint32_t freed, idx, hw;

	if (r)
		return r;
	freed = __atomic_load_n(&rec_shm->rings_freed, __ATOMIC_ACQUIRE);
	if (rec_no_ring && freed == rec_no_ring_gen)
		return NULL;
	for (idx = 0; idx < EV_MAX_RINGS; idx++) {
		r = &rec_shm->rings[idx];
		if (ev_slot_claim(&r->state))
			break;
	}
	if (idx == EV_MAX_RINGS) {
		rec_no_ring = 1;
		rec_no_ring_gen = freed;
		return NULL;
	}
	rec_no_ring = 0;
	hw = __atomic_load_n(&rec_shm->nr_rings, __ATOMIC_RELAXED);
	while (hw < idx + 1 &&
	       !__atomic_compare_exchange_n(&rec_shm->nr_rings, &hw, idx + 1, false,
					    __ATOMIC_RELEASE, __ATOMIC_RELAXED))
		;
	r->pid = getpid();
	r->tid = syscall(SYS_gettid);
	r->proc_seq = rec_proc_seq;
	prctl(PR_GET_NAME, r->comm);
	__atomic_store_n(&r->state, EV_SLOT_READY, __ATOMIC_RELEASE);
	rec_ring = r;
	/* the key was made first thing in the process: a slot of the static block */
	if (rec_have_key)
		pthread_setspecific(rec_ring_key, r);
	return r;
}

/*
 * This thread will not write @r again (a later record claims a new ring):
 * the command may free it as soon as it has copied it.
 */
static void retire_ring(void *arg)
{
	struct ev_ring *r = arg;

	if (!r || r != rec_ring)
		return;
	rec_ring = NULL;
	__atomic_store_n(&r->exited, 1, __ATOMIC_RELEASE);
}

static unsigned long fetch_arg(struct ftrace_regs *fregs, unsigned int n)
{
	unsigned long v = 0;

	if (n < 6)
		return ftrace_regs_get_argument(fregs, n);
	/* the 7th argument on sits above the return address */
	safe_read(&v, ftrace_regs_get_stack_pointer(fregs) + 8 * (n - 5), sizeof(v));
	return v;
}

/*
 * Run one argument's fetch program.  Returns the bytes written at @out,
 * -1 if nothing fits.
 */
static int run_fetch(struct rec_arg *a, struct ftrace_regs *fregs, unsigned long *entry,
		     struct ev_ring *ring, unsigned char *out, size_t room)
{
	unsigned long val = 0, addr = 0;
	unsigned int size = fhook_ev_type_size(a->type), i, n;
	bool is_addr = false, fault = false;
	int k, last = a->nops - 1;
	struct fhook_fetch_insn *bf = NULL;

	if (last >= 0 && a->code[last].op == FHOOK_FOP_MOD_BF) {
		bf = &a->code[last];
		last--;
	}
	for (k = 0; k <= last && !fault; k++) {
		struct fhook_fetch_insn *in = &a->code[k];

		switch (in->op) {
		case FHOOK_FOP_ARG: val = fetch_arg(fregs, in->param); break;
		case FHOOK_FOP_EDATA: val = entry ? entry[in->param] : 0; break;
		case FHOOK_FOP_RETVAL: val = ftrace_regs_get_return_value(fregs); break;
		case FHOOK_FOP_STACKP: val = ftrace_regs_get_stack_pointer(fregs); break;
		case FHOOK_FOP_STACK:
			fault = safe_read(&val, ftrace_regs_get_stack_pointer(fregs) + 8 * in->param,
					  sizeof(val));
			break;
		case FHOOK_FOP_IMM: val = in->param; break;
		case FHOOK_FOP_ADD: val += in->param; break;
		case FHOOK_FOP_DEREF:
		case FHOOK_FOP_UDEREF:
			if (k == last) {
				/* the store reads at the final address */
				addr = val + in->param;
				is_addr = true;
			} else {
				fault = safe_read(&val, val + in->param, sizeof(val));
			}
			break;
		default:
			break;
		}
	}
	if (fhook_ev_type_is_string(a->type)) {
		/* u32: length (0 = fault), then the bytes and a NUL */
		char *s = (char *)out + 4;
		int len;
		uint32_t l;

		if (room < 4 + EV_STR_MAX)
			return -1;
		if (a->code[0].op == FHOOK_FOP_COMM) {
			len = strlen(ring->comm);
			memcpy(s, ring->comm, len + 1);
		} else if (a->code[0].op == FHOOK_FOP_DATA) {
			len = strlen(a->code[0].data);
			if (len > EV_STR_MAX - 1)
				len = EV_STR_MAX - 1;
			memcpy(s, a->code[0].data, len);
			s[len] = 0;
		} else if (a->type == FHOOK_EVT_SYMSTR) {
			/* the address; the command turns it into "sym+0xoff/0xsize" */
			len = fault ? -1 : 8;
			if (!fault) {
				if (is_addr)
					fault = safe_read(&val, addr, 8);
				memcpy(s, &val, 8);
				if (fault)
					len = -1;
			}
		} else {
			len = fault ? -1 : safe_strcpy(s, is_addr ? addr : val);
		}
		l = len < 0 ? 0 : (uint32_t)len + 1;
		memcpy(out, &l, 4);
		return (4 + l + 7) & ~7;
	}
	n = a->count ? a->count : 1;
	if (room < (size_t)size * n + 8)
		return -1;
	memset(out, 0, size * n + 1);
	for (i = 0; i < n; i++) {
		unsigned long v = val;

		if (is_addr && !fault)
			fault = safe_read(&v, addr + i * size, size);
		if (bf) {
			unsigned int bits = bf->basesize * 8;

			v = (v << (64 - bits + bf->lshift)) >> (64 - bits + bf->rshift);
		}
		memcpy(out + i * size, &v, size);
	}
	/* one flag byte after the values: the fetch faulted */
	out[size * n] = fault;
	return (size * n + 1 + 7) & ~7;
}

static void record(struct rec_event *e, unsigned long ip, unsigned long ret_ip,
		   struct ftrace_regs *fregs, unsigned long *entry)
{
	unsigned char buf[sizeof(struct ev_rec) + EV_REC_MAX + 8 + EV_STR_MAX] __attribute__((aligned(8)));
	struct ev_rec *rec = (struct ev_rec *)buf;
	struct ev_ring *ring;
	struct timespec ts;
	size_t len = sizeof(*rec);
	uint64_t head, tail, pos, room;
	int i, w;

	if (__atomic_load_n(&rec_disabled, __ATOMIC_RELAXED))
		return;
	ring = get_ring();
	if (!ring) {
		__atomic_fetch_add(&rec_shm->lost_no_ring, 1, __ATOMIC_RELAXED);
		return;
	}
	for (i = 0; i < e->nr_args; i++) {
		w = run_fetch(&e->args[i], fregs, entry, ring, buf + len,
			      sizeof(struct ev_rec) + EV_REC_MAX - len);
		if (w < 0) {
			/* larger than a record may be: counted as lost */
			ring->lost++;
			return;
		}
		len += w;
	}
	clock_gettime(CLOCK_MONOTONIC, &ts);
	rec->len = len;
	rec->id = e->id;
	rec->ts = ts.tv_sec * 1000000000ULL + ts.tv_nsec;
	rec->ip = ip;
	rec->ret_ip = ret_ip;
	rec->cpu = sched_getcpu();
	rec->pad = 0;

	head = ring->head;
	tail = __atomic_load_n(&ring->tail, __ATOMIC_ACQUIRE);
	pos = head % EV_RING_SIZE;
	room = EV_RING_SIZE - pos;
	/* records never wrap: a filler takes the ring's tail end */
	if (room < len) {
		if (head + room + len - tail > EV_RING_SIZE) {
			__atomic_store_n(&ring->lost, ring->lost + 1, __ATOMIC_RELAXED);
			return;
		}
		((struct ev_rec *)(ring->data + pos))->len = room;
		((struct ev_rec *)(ring->data + pos))->id = EV_REC_PAD;
		head += room;
		pos = 0;
	} else if (head + len - tail > EV_RING_SIZE) {
		__atomic_store_n(&ring->lost, ring->lost + 1, __ATOMIC_RELAXED);
		return;
	}
	memcpy(ring->data + pos, buf, len);
	__atomic_store_n(&ring->head, head + len, __ATOMIC_RELEASE);
}

static bool caller_ok(unsigned long parent_ip)
{
	int i;

	if (!rec_nr_callers)
		return true;
	parent_ip = rethook_find_ret_addr(parent_ip);
	for (i = 0; i < rec_nr_callers; i++)
		if (parent_ip >= rec_callers[i].start && parent_ip < rec_callers[i].end)
			return true;
	return false;
}

static int rec_entry(struct fprobe *fp, unsigned long entry_ip, unsigned long ret_ip,
		     struct ftrace_regs *fregs, void *entry_data)
{
	struct rec_probe *p = (struct rec_probe *)fp;
	int i, k;

	if (!caller_ok(ret_ip))
		return 1;	/* and no exit event either */
	/*
	 * In the kernel each event is its own fprobe, and ftrace calls the
	 * newest ops first: entry events print newest first.  Their return
	 * hooks stack the other way, so return events print oldest first.
	 */
	for (i = p->nr_entry - 1; i >= 0; i--)
		record(p->entry[i], entry_ip, ret_ip, fregs, NULL);
	for (i = 0; i < p->nr_ret; i++) {
		struct rec_event *e = p->ret[i];
		unsigned long *saved = (unsigned long *)((char *)entry_data + p->ret_off[i]);

		for (k = 0; k < e->nr_entry; k++)
			saved[k] = fetch_arg(fregs, e->entry_args[k]);
	}
	return 0;
}

static void rec_exit(struct fprobe *fp, unsigned long entry_ip, unsigned long ret_ip,
		     struct ftrace_regs *fregs, void *entry_data)
{
	struct rec_probe *p = (struct rec_probe *)fp;
	int i;

	for (i = 0; i < p->nr_ret; i++)
		record(p->ret[i], entry_ip, ret_ip, fregs,
		       (unsigned long *)((char *)entry_data + p->ret_off[i]));
}

/* Group the events by SYM, one probe each. */
static int build_probes(void)
{
	int i, j;

	rec_probes = calloc(rec_nr_events ? rec_nr_events : 1, sizeof(*rec_probes));
	if (!rec_probes)
		return -ENOMEM;
	for (i = 0; i < rec_nr_events; i++) {
		struct rec_event *e = &rec_events[i];
		struct rec_probe *p = NULL;

		if (e->unresolved)
			continue;
		for (j = 0; j < rec_nr_probes; j++)
			if (!strcmp(rec_probes[j].symbol, e->symbol))
				p = &rec_probes[j];
		if (!p) {
			p = &rec_probes[rec_nr_probes++];
			p->symbol = e->symbol;
			p->entry = calloc(rec_nr_events, sizeof(*p->entry));
			p->ret = calloc(rec_nr_events, sizeof(*p->ret));
			p->ret_off = calloc(rec_nr_events, sizeof(*p->ret_off));
			if (!p->entry || !p->ret || !p->ret_off)
				return -ENOMEM;
		}
		if (e->nr_maxactive > p->fp.nr_maxactive)
			p->fp.nr_maxactive = e->nr_maxactive;
		if (e->is_return) {
			p->ret_off[p->nr_ret] = p->fp.entry_data_size;
			p->ret[p->nr_ret++] = e;
			p->fp.entry_data_size += e->nr_entry * sizeof(unsigned long);
		} else {
			p->entry[p->nr_entry++] = e;
		}
	}
	return 0;
}

static int hexval(int c)
{
	return c <= '9' ? c - '0' : (c | 0x20) - 'a' + 10;
}

/* The descriptions the command wrote (lib/events/trace.c, ev_desc_write()). */
static int parse_desc(const char *d)
{
	const char *line = d;
	struct rec_event *e = NULL;
	struct rec_arg *a;

	while (*line) {
		const char *nl = strchr(line, '\n');
		char *l = strndup(line, nl ? (size_t)(nl - line) : strlen(line));
		int n, pos, i;

		if (!l)
			return -ENOMEM;
		if (l[0] == 'E') {
			unsigned int id, ret, nargs, nentry;
			char sym[1024];

			rec_events = realloc(rec_events, (rec_nr_events + 1) * sizeof(*rec_events));
			e = &rec_events[rec_nr_events++];
			memset(e, 0, sizeof(*e));
			if (sscanf(l, "E %u %u %u %u %n", &id, &ret, &nargs, &nentry, &pos) != 4)
				goto bad;
			e->id = id;
			e->is_return = ret;
			e->nr_entry = nentry;
			for (i = 0; i < (int)nentry && i < FHOOK_EV_MAX_ENTRY_ARGS; i++) {
				if (sscanf(l + pos, "%d %n", &e->entry_args[i], &n) != 1)
					goto bad;
				pos += n;
			}
			if (sscanf(l + pos, "%u %1023s", &e->nr_maxactive, sym) != 2)
				goto bad;
			e->symbol = strdup(sym);
			e->args = calloc(nargs ? nargs : 1, sizeof(*e->args));
		} else if (l[0] == 'A' && e) {
			a = &e->args[e->nr_args++];
			if (sscanf(l, "A %d %u %d %n", &a->type, &a->count, &a->nops, &pos) != 3 ||
			    a->nops > FHOOK_EV_FETCH_INSN_MAX)
				goto bad;
			for (i = 0; i < a->nops; i++) {
				struct fhook_fetch_insn *in = &a->code[i];
				unsigned int lsh, rsh, bs;
				char data[2 * 4096 + 2];

				if (sscanf(l + pos, "%d %ld %u %u %u %8193s %n", &in->op, &in->param,
					   &lsh, &rsh, &bs, data, &n) != 6)
					goto bad;
				pos += n;
				in->lshift = lsh;
				in->rshift = rsh;
				in->basesize = bs;
				if (strcmp(data, "-")) {
					size_t k, dl = strlen(data) / 2;

					in->data = malloc(dl + 1);
					for (k = 0; k < dl; k++)
						in->data[k] = hexval(data[2 * k]) << 4 | hexval(data[2 * k + 1]);
					in->data[dl] = 0;
				}
			}
		} else if (l[0] == 'C') {
			unsigned long addr = kallsyms_lookup_name(l + 2), size = 0, off;

			if (!addr || !kallsyms_lookup_size_offset(addr, &size, &off)) {
				fprintf(stderr, "fhook: trace: no caller '%s' in this process\n", l + 2);
			} else {
				rec_callers = realloc(rec_callers, (rec_nr_callers + 1) * sizeof(*rec_callers));
				rec_callers[rec_nr_callers].start = addr;
				rec_callers[rec_nr_callers++].end = addr + size;
			}
		}
		free(l);
		line = nl ? nl + 1 : line + strlen(line);
		continue;
bad:
		free(l);
		return -EINVAL;
	}
	return 0;
}

struct base_arg {
	const char *path;
	unsigned long base;
	bool found;
};

static int base_cb(struct dl_phdr_info *info, size_t size, void *arg)
{
	struct base_arg *b = arg;
	char exe[256];
	const char *name = info->dlpi_name;

	if (!name || !*name) {
		ssize_t n = readlink("/proc/self/exe", exe, sizeof(exe) - 1);

		exe[n > 0 ? n : 0] = 0;
		name = exe;
	}
	if (strcmp(name, b->path))
		return 0;
	b->base = info->dlpi_addr;
	b->found = true;
	return 1;
}

/*
 * @SYM[+-off] comes as the file that defines it and its link-time address
 * (the command read the symbol tables): add where that file is loaded.
 */
static int resolve_symbols(struct rec_event *e)
{
	int i, k;

	for (i = 0; i < e->nr_args; i++) {
		for (k = 0; k < e->args[i].nops; k++) {
			struct fhook_fetch_insn *in = &e->args[i].code[k];
			struct base_arg b = { .path = in->data };

			if (in->op != FHOOK_FOP_SYMBOL)
				continue;
			if (!in->data || in->data[0] != '/')
				return -ENOENT;
			dl_iterate_phdr(base_cb, &b);
			if (!b.found)
				return -ENOENT;
			in->op = FHOOK_FOP_NOP;
			in[1].op = FHOOK_FOP_IMM;
			in[1].param = b.base + in->param;
		}
	}
	return 0;
}

static int obj_cb(struct dl_phdr_info *info, size_t size, void *arg)
{
	struct ev_proc *p = arg;
	struct ev_obj *o;

	if (p->nr_objs >= EV_MAX_OBJS)
		return 1;
	o = &p->objs[p->nr_objs];
	o->base = info->dlpi_addr;
	if (!p->nr_objs) {
		ssize_t n = readlink("/proc/self/exe", o->path, sizeof(o->path) - 1);

		o->path[n > 0 ? n : 0] = 0;
	} else if (info->dlpi_name && info->dlpi_name[0] == '/') {
		snprintf(o->path, sizeof(o->path), "%s", info->dlpi_name);
	} else {
		return 0;
	}
	p->nr_objs++;
	return 0;
}

/*
 * The command symbolizes with these: which file is mapped where.  A free
 * mailbox is waited for (the command empties them every millisecond), but
 * not for long: without one, this process's addresses print as numbers.
 */
static void register_process(void)
{
	struct ev_proc *p = NULL;
	int tries, i;

	rec_proc_seq = 0;
	for (tries = 0; tries < 200 && !p; tries++) {
		for (i = 0; i < EV_MAX_PROCS; i++) {
			p = &rec_shm->procs[i];
			if (ev_slot_claim(&p->state))
				break;
			p = NULL;
		}
		if (!p)
			usleep(1000);
	}
	if (!p)
		return;
	p->pid = getpid();
	p->nr_objs = 0;
	dl_iterate_phdr(obj_cb, p);
	p->seq = __atomic_add_fetch(&rec_shm->proc_seq, 1, __ATOMIC_RELAXED);
	rec_proc_seq = p->seq;
	__atomic_store_n(&p->state, EV_SLOT_READY, __ATOMIC_RELEASE);
}

static void rec_atfork_child(void)
{
	if (!rec_shm)
		return;
	if (!rec_shm->follow) {
		__atomic_store_n(&rec_disabled, 1, __ATOMIC_RELAXED);
		return;
	}
	/* the child's thread is a new thread: its own ring, its own pid */
	rec_ring = NULL;
	rec_no_ring = 0;
	register_process();
}

__attribute__((constructor(210))) static void fhook_ev_preload(void)
{
	const char *v = getenv("FHOOK_EV_SHM");
	struct ev_shm *shm;
	int fd, i, ret;

	if (!v)
		return;
	fd = atoi(v);
	shm = mmap(NULL, ev_shm_size(), PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	if (shm == MAP_FAILED || shm->magic != EV_SHM_MAGIC) {
		fprintf(stderr, "fhook: trace: cannot map the trace buffer (FHOOK_EV_SHM=%s)\n", v);
		return;
	}
	rec_shm = shm;
	if (!shm->follow) {
		/* programs this one starts are not traced */
		unsetenv("FHOOK_EV_SHM");
		close(fd);
	}
	register_process();
	if (parse_desc(shm->desc)) {
		fprintf(stderr, "fhook: trace: bad event descriptions\n");
		return;
	}
	pthread_atfork(NULL, NULL, rec_atfork_child);
	rec_have_key = !pthread_key_create(&rec_ring_key, retire_ring);
	for (i = 0; i < rec_nr_events; i++) {
		struct rec_event *e = &rec_events[i];

		if (resolve_symbols(e)) {
			fprintf(stderr, "fhook: trace: a symbol of event %u is not in this process\n",
				e->id);
			e->unresolved = true;
		}
	}
	if (build_probes()) {
		fprintf(stderr, "fhook: trace: out of memory\n");
		return;
	}
	for (i = 0; i < rec_nr_probes; i++) {
		struct rec_probe *p = &rec_probes[i];

		p->fp.entry_handler = rec_entry;
		if (p->nr_ret)
			p->fp.exit_handler = rec_exit;
		ret = register_fprobe(&p->fp, p->symbol, NULL);
		/* a child that exec'd another program may not have the function */
		if (ret && ret != -ENOENT)
			fprintf(stderr, "fhook: trace: cannot probe %s: %s\n", p->symbol,
				strerror(-ret));
	}
}

__attribute__((destructor(210))) static void fhook_ev_preload_exit(void)
{
	unsigned long missed = 0;
	int i;

	if (!rec_shm)
		return;
	for (i = 0; i < rec_nr_probes; i++)
		missed += fprobe_nmissed(&rec_probes[i].fp);
	__atomic_fetch_add(&rec_shm->nmissed, missed, __ATOMIC_RELAXED);
	retire_ring(rec_ring);
}
