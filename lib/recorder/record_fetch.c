// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * The recorder's events with fetched arguments: each argument's fetch
 * program (lib/events/parse.c compiled it) run on the registers and the
 * memory of the hit, its values staged with a fault flag and copied into
 * the thread's ring as one record; and the @SYM addresses those programs
 * name, resolved where this process loaded their files.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <link.h>
#include <stdlib.h>
#include <string.h>
#include <sys/uio.h>
#include <unistd.h>

#include "record.h"
#include "record_trigger.h"

/*
 * Where process_vm_readv() is not there (qemu-user; a kernel built without
 * CONFIG_CROSS_MEMORY_ATTACH): /proc/self/mem, which refuses an unmapped
 * address as it does.  Opened at the first such read, and again in a
 * forked child (a descriptor reads the memory of the process that opened
 * it); two threads that open it at once keep one, and close the other.
 */
static int mem_fd1;		/* the descriptor + 1: zero-filled, no page of .data */
static pid_t mem_fd_pid;
static bool no_vm_readv;

static int mem_read(void *dst, unsigned long src, size_t len, pid_t pid)
{
	int fd1 = __atomic_load_n(&mem_fd1, __ATOMIC_ACQUIRE);

	if (!fd1 || __atomic_load_n(&mem_fd_pid, __ATOMIC_ACQUIRE) != pid) {
		int nfd = open("/proc/self/mem", O_RDONLY | O_CLOEXEC);

		if (nfd < 0)
			return -EFAULT;
		if (__atomic_compare_exchange_n(&mem_fd1, &fd1, nfd + 1, false, __ATOMIC_ACQ_REL,
						__ATOMIC_ACQUIRE)) {
			/* the parent's descriptor in a child: its number is the child's */
			if (fd1)
				close(fd1 - 1);
			fd1 = nfd + 1;
			__atomic_store_n(&mem_fd_pid, pid, __ATOMIC_RELEASE);
		} else {
			close(nfd);
		}
	}
	return pread(fd1 - 1, dst, len, (off_t)src) == (ssize_t)len ? 0 : -EFAULT;
}

static int safe_read(void *dst, unsigned long src, size_t len)
{
	struct iovec l = { dst, len }, r = { (void *)src, len };
	pid_t pid = getpid();

	int saved = errno, ret;

	if (!__atomic_load_n(&no_vm_readv, __ATOMIC_RELAXED)) {
		if (process_vm_readv(pid, &l, 1, &r, 1, 0) == (ssize_t)len)
			return 0;
		ret = errno;
		errno = saved;	/* the traced code's */
		if (ret != ENOSYS)
			return -EFAULT;
		__atomic_store_n(&no_vm_readv, true, __ATOMIC_RELAXED);
	}
	ret = mem_read(dst, src, len, pid);
	errno = saved;
	return ret;
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

unsigned long fhook_rec_fetch_arg(struct ftrace_regs *fregs, unsigned int n)
{
	unsigned long v = 0;

	if (n >= FHOOK_EV_ARG_XMM) {
		/* the low eight bytes of a vector register: a double, or a float in four */
		if (n - FHOOK_EV_ARG_XMM < 8)
			memcpy(&v, ftrace_regs_get_vector(fregs, n - FHOOK_EV_ARG_XMM), sizeof(v));
		return v;
	}
	if (n < FHOOK_NR_REG_ARGS)
		return ftrace_regs_get_argument(fregs, n);
	/* the arguments past the registers sit on the stack */
	safe_read(&v, (unsigned long)(regs_stack_args(&fregs->regs) + (n - FHOOK_NR_REG_ARGS)),
		  sizeof(v));
	return v;
}

/* An argument that could not be fetched, in run_fetch()'s layout. */
static int fault_arg(struct ev_desc_arg *a, unsigned char *out, size_t room)
{
	unsigned int n = a->count ? a->count : 1, size = fhook_ev_type_size(a->type);
	size_t len = fhook_ev_type_is_string(a->type) ? 8 : (size * n + 1 + 7) & ~7UL;

	if (room < len)
		return -1;
	memset(out, 0, len);
	if (!fhook_ev_type_is_string(a->type))
		out[size * n] = 1;
	return (int)len;
}

/* An operation that reads no memory but the registers' and the entry's: true, *@val its value. */
static inline bool fetch_direct(const struct fhook_fetch_insn *in, struct ftrace_regs *fregs,
				unsigned long *entry, unsigned long *val)
{
	switch (in->op) {
	case FHOOK_FOP_ARG: *val = fhook_rec_fetch_arg(fregs, in->param); return true;
	case FHOOK_FOP_EDATA: *val = entry ? entry[in->param] : 0; return true;
	case FHOOK_FOP_RETVAL:
		if (in->param == 1)
			memcpy(val, ftrace_regs_get_vector(fregs, 0), sizeof(*val));
		else
			*val = ftrace_regs_get_return_value(fregs);
		return true;
	case FHOOK_FOP_STACKP: *val = ftrace_regs_get_stack_pointer(fregs); return true;
	case FHOOK_FOP_REG: *val = ((unsigned long *)&fregs->regs)[in->param]; return true;
	case FHOOK_FOP_IMM: *val = in->param; return true;
	case FHOOK_FOP_ADD: *val += in->param; return true;
	case FHOOK_FOP_NOP: return true;
	default: return false;
	}
}

/*
 * Can @e's arguments be written straight into the ring (each of a fixed
 * size, read with no memory access that may fault)?  Then their bytes are
 * known now, as run_fetch() lays them out: the value, a fault flag byte,
 * the rest to 8 bytes.  A filter reads the staged record: not then.
 */
void fhook_rec_fast_prepare(struct ev_desc_event *e)
{
	const char *env;
	unsigned long val = 0;
	unsigned int len = 0;
	int i, k;

	e->fast_len = 0;
	/* FHOOK_REC_FAST=0: every event staged (the tests compare the two ways) */
	if (e->nr_filter || e->nr_args <= 0 ||
	    ((env = secure_getenv("FHOOK_REC_FAST")) && !strcmp(env, "0")))
		return;
	for (i = 0; i < e->nr_args; i++) {
		struct ev_desc_arg *a = &e->args[i];
		unsigned int size = fhook_ev_type_size(a->type);

		if (fhook_ev_type_is_string(a->type) || a->count || !size || size > 8 || !a->nops)
			return;
		for (k = 0; k < a->nops; k++) {
			const struct fhook_fetch_insn *in = &a->code[k];

			/* (asked of the kinds alone: no registers to read yet) */
			if (in->op == FHOOK_FOP_ARG || in->op == FHOOK_FOP_EDATA ||
			    in->op == FHOOK_FOP_RETVAL || in->op == FHOOK_FOP_STACKP ||
			    in->op == FHOOK_FOP_REG)
				continue;
			if (!fetch_direct(in, NULL, NULL, &val))
				return;
		}
		a->fast_size = size;
		len += (size + 1 + 7) & ~7U;
	}
	/* (as staged: the address and the values within a record's payload) */
	if (8 + len <= EV_REC_MAX)
		e->fast_len = len;
}

/*
 * Run one argument's fetch program.  Returns the bytes written at @out,
 * -1 if nothing fits.
 */
static int run_fetch(struct ev_desc_arg *a, struct ftrace_regs *fregs, unsigned long *entry,
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
		case FHOOK_FOP_STACK:
			fault = safe_read(&val, ftrace_regs_get_stack_pointer(fregs) + 8 * in->param,
					  sizeof(val));
			break;
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
			fetch_direct(in, fregs, entry, &val);
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

/*
 * fhook_rec_record() of an event whose arguments fhook_rec_fast_prepare()
 * passed: the record's length known, each value written where it goes in
 * the ring, no staging.
 */
static void record_fast(struct rec_thread *t, struct ev_desc_event *e, unsigned long ip,
			uint64_t w1, struct ftrace_regs *fregs, unsigned long *entry)
{
	uint32_t len = 8 + (ip ? 8 : 0) + e->fast_len;
	uint64_t *p, *q;
	int i, k;

	p = fhook_rec_begin_event(t, e->id | EV_ID_EXT, w1, len);
	if (!p)
		return;
	q = p + 2;
	*q++ = (uint64_t)(len + 16) | (ip ? (uint64_t)EV_W2_IP << 32 : 0);
	if (ip)
		*q++ = ip;
	for (i = 0; i < e->nr_args; i++) {
		const struct ev_desc_arg *a = &e->args[i];
		unsigned long v = 0;

		for (k = 0; k < a->nops; k++)
			fetch_direct(&a->code[k], fregs, entry, &v);
		/* the value's bytes, then its fault flag (0) and the padding (0) */
		if (a->fast_size < 8)
			v &= (1UL << (a->fast_size * 8)) - 1;
		*q++ = v;
		if (a->fast_size == 8)
			*q++ = 0;
	}
	commit(t, len + 16);
	rec_limit_after(t);
}

/*
 * An event with fetched arguments, or an exit without an entry event to
 * pair with (@ip set): built in a staging buffer, then copied.
 */
void fhook_rec_record(struct ev_desc_event *e, unsigned long ip, uint64_t w1,
		      struct ftrace_regs *fregs, unsigned long *entry)
{
	unsigned char buf[8 + 8 + EV_REC_MAX + 8 + EV_STR_MAX] __attribute__((aligned(8)));
	uint16_t offs[FHOOK_EV_MAX_TRACE_ARGS];
	struct rec_thread *t;
	size_t len = 8;
	uint64_t *p, flags = 0;
	int i, w;

	if (__atomic_load_n(&rec_disabled, __ATOMIC_RELAXED) || !(t = rec_thread()))
		return;
	if (e->fast_len && fregs) {
		record_fast(t, e, ip, w1, fregs, entry);
		return;
	}
	if (ip) {
		memcpy(buf + len, &ip, 8);
		len += 8;
		flags |= EV_W2_IP;
	}
	for (i = 0; i < e->nr_args; i++) {
		offs[i] = (uint16_t)len;
		/* an exit the unwinder caused has no registers: its values are faults */
		w = fregs ? run_fetch(&e->args[i], fregs, entry, t->ring, buf + len,
				      8 + EV_REC_MAX - len)
			  : fault_arg(&e->args[i], buf + len, 8 + EV_REC_MAX - len);
		if (w < 0) {
			/* larger than a record may be: counted as lost */
			fhook_rec_drop(t);
			return;
		}
		len += w;
	}
	*(uint64_t *)buf = (uint64_t)(len + 16) | flags << 32;
	p = fhook_rec_begin_event(t, e->id | EV_ID_EXT, w1, (uint32_t)len);
	if (!p)
		return;
	memcpy(p + 2, buf, len);
	commit(t, (uint32_t)len + 16);
	rec_limit_after(t);
	/* the flight recorder's event trigger, decided once the record is in the ring */
	if (e->nr_filter && !__atomic_load_n(&fhook_rec_shm->trigger_off, __ATOMIC_RELAXED) &&
	    fhook_rec_filter_match(e, buf, offs))
		fhook_rec_trigger_fire(fhook_rec_shm, 0);
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
int fhook_rec_resolve_symbols(struct ev_desc_event *e)
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
