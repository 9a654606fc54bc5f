// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * The command's side of a recording (lib/events/session.h): create the
 * memory shared with the traced processes, write the compiled events into
 * it, and move the rings' bytes to the sink while the program runs.  The
 * drain decodes nothing: a ring's new bytes become one RF_DATA block,
 * written straight from the shared memory.
 */
#define _GNU_SOURCE
#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <gelf.h>
#include <libelf.h>
#include <limits.h>
#include <linux/futex.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include <fhook/internal/events.h>

#include "recorder/clock.h"
#include "recorder/evdesc.h"
#include "ev.h"
#include "recinfo.h"
#include "recorder/ring.h"
#include "session.h"

/* How often the command looks for rings whose thread is gone. */
#define SES_REAP_NS		(10 * 1000 * 1000)

struct ses_ring {
	struct ev_ring *map;	/* mapped when first claimed: fhook's address space is what is used */
	uint32_t thread;	/* the recording's thread number; 0: not announced */
	bool dead;		/* its thread is gone: free it after this round */
	bool damaged;		/* its producer wrote what no correct one can: read no more */
	uint32_t pid, tid;
	/*
	 * Where the command read to, and how much: the copy in the ring's
	 * header is for the producer; the traced program can write it, so
	 * it is never read back.
	 */
	uint64_t tail, moved;
};

/*
 * Everything about the memory that the traced programs can write is read
 * from here, the command's own copy made when it laid the memory out: a
 * program that rewrites its header can neither crash the command nor
 * choose where it reads or writes.
 */
struct ses_layout {
	uint64_t ring_size, stride, rings_off;
};

struct ev_session {
	struct ev_shm *shm;
	struct ses_layout l;
	struct ev_proc *procs;
	int fd;
	struct ev_sink *sink;
	const struct ev_session_opts *o;
	struct ses_ring rings[EV_MAX_RINGS];
	uint32_t next_thread;
	uint64_t reap_ns;
	uint32_t seen_wake;
	/* counts of rings since freed */
	uint64_t events_freed, lost_freed, waits_freed;
	uint8_t *seq_written;	/* bitmap of process images written out */
	uint64_t seq_cap;	/* bits */
	char **paths;		/* files whose symbols are written */
	int nr_paths;
	struct rf_clock clock;
	bool clock_written;	/* an RF_CLOCK with a rate is in the recording */
	int err;		/* the sink's first error */
	uint32_t nr_seen;	/* the most rings ever claimed, as far as the command saw */
	uint32_t dumps;		/* a flight recorder's dumps so far */
	uint64_t dumped;	/* and the bytes of records they wrote */
};

/* Ring @i, mapped on first use; NULL if it cannot be. */
static struct ev_ring *ring(struct ev_session *s, uint32_t i)
{
	struct ses_ring *sr = &s->rings[i];
	void *m;

	if (sr->map)
		return sr->map;
	m = mmap(NULL, s->l.stride, PROT_READ | PROT_WRITE, MAP_SHARED, s->fd,
		 s->l.rings_off + (off_t)i * s->l.stride);
	if (m == MAP_FAILED)
		return NULL;
	sr->map = m;
	return m;
}

static long futex(uint32_t *uaddr, int op, uint32_t val, const struct timespec *ts)
{
	return syscall(SYS_futex, uaddr, op, val, ts, NULL, 0);
}

static uint64_t now_ns(void)
{
	return ev_clock_mono_ns();
}

int ev_write_block(struct ev_sink *sink, uint32_t type, const void *a, uint32_t alen,
		   const void *b, uint32_t blen)
{
	static const char zero[8];
	struct rf_block h = { .type = type, .len = alen + blen };
	struct iovec iov[4] = {
		{ &h, sizeof(h) }, { (void *)a, alen }, { (void *)b, blen },
		{ (void *)zero, rf_align(h.len) - h.len },
	};

	return sink->write(sink, iov, 4);
}

/* ---- descriptions ------------------------------------------------------ */

/*
 * A kprobe event's place: the file and link-time address the command
 * found SYM at (aliases included, which the process's kallsyms keeps one
 * of), or none, to look SYM up in the process (a library it loads later).
 */
static int desc_kprobe(const struct ev_session_opts *o, const struct fhook_event *ev,
		       struct ev_desc_event *e)
{
	const struct ev_sym *s = NULL;
	char rp[PATH_MAX];
	int file = 0;

	e->kprobe = true;
	e->offset = ev->offset;
	if (ev->module && !(e->module = strdup(ev->module)))
		return -ENOMEM;
	/* a C++ name by the symbol the parser found for it */
	if (o->prog && !isdigit((unsigned char)ev->symbol[0]))
		s = ev_prog_find_in(o->prog, ev->module, ev->nr_targets == 1 ? ev->targets[0] :
				    ev->symbol, true, &file);
	if (s && realpath(o->prog->files[file].path, rp)) {
		e->link_addr = s->addr;
		if (!(e->path = strdup(rp)))
			return -ENOMEM;
	}
	return 0;
}

/* A fetch instruction as the process runs it: a symbol by its file and link-time address. */
static int desc_insn(const struct ev_session_opts *o, const struct fhook_fetch_insn *in,
		     struct fhook_fetch_insn *out)
{
	*out = *in;
	out->data = NULL;
	if (in->op == FHOOK_FOP_SYMBOL && o->prog && in->data) {
		/* the process adds the file's load base */
		const struct ev_sym *s;
		char name[512], rp[PATH_MAX];
		size_t nl = strcspn(in->data, "+-");
		int file = 0;
		long off = 0;

		snprintf(name, sizeof(name), "%.*s", (int)nl, in->data);
		if (in->data[nl])
			off = strtol(in->data + nl, NULL, 0);
		s = ev_prog_find(o->prog, name, false, &file);
		if (s && realpath(o->prog->files[file].path, rp)) {
			out->param = (long)(s->addr + off);
			return (out->data = strdup(rp)) ? 0 : -ENOMEM;
		}
	}
	if (in->data && !(out->data = strdup(in->data)))
		return -ENOMEM;
	return 0;
}

static int desc_event(const struct ev_session_opts *o, const struct fhook_event *ev,
		      struct ev_desc_event *e)
{
	int j, k, r;

	e->is_return = ev->is_return;
	e->nr_entry = ev->nr_entry_args;
	memcpy(e->entry_args, ev->entry_args, sizeof(e->entry_args));
	e->nr_maxactive = (int)ev->maxactive;
	e->group = strdup(ev->group);
	e->event = strdup(ev->event);
	e->symbol = strdup(ev->symbol);
	e->args = calloc(ev->nr_args ? ev->nr_args : 1, sizeof(*e->args));
	if (!e->group || !e->event || !e->symbol || !e->args)
		return -ENOMEM;
	if (ev->kprobe && (r = desc_kprobe(o, ev, e)))
		return r;
	/* (a kprobe's C++ name goes by its place: the process has no T lines to match) */
	if (!ev->kprobe && ev->nr_targets) {
		e->targets = calloc(ev->nr_targets, sizeof(*e->targets));
		if (!e->targets)
			return -ENOMEM;
		for (; e->nr_targets < ev->nr_targets; e->nr_targets++)
			if (!(e->targets[e->nr_targets] = strdup(ev->targets[e->nr_targets])))
				return -ENOMEM;
	}
	for (j = 0; j < ev->nr_args; j++, e->nr_args++) {
		const struct fhook_event_arg *a = &ev->args[j];
		struct ev_desc_arg *da = &e->args[j];

		da->type = a->type;
		da->count = a->count;
		if (!(da->name = strdup(a->name)))
			return -ENOMEM;
		while (da->nops < FHOOK_EV_FETCH_INSN_MAX && a->code[da->nops].op != FHOOK_FOP_END)
			da->nops++;
		for (k = 0; k < da->nops; k++)
			if ((r = desc_insn(o, &a->code[k], &da->code[k])))
				return r;
	}
	return 0;
}

/*
 * The events as the traced processes run them and readers read them, in
 * the one form both take (lib/recorder/evdesc.h): *@text malloc'd.
 */
static int desc_text(const struct ev_session_opts *o, char **text, size_t *len)
{
	struct ev_desc d = { 0 };
	FILE *m;
	int i, r = -ENOMEM;

	*text = NULL;
	*len = 0;
	d.evs = calloc(o->nr_evs ? o->nr_evs : 1, sizeof(*d.evs));
	if (!d.evs)
		return -ENOMEM;
	for (i = 0; i < o->nr_evs; i++, d.nr_evs++) {
		d.evs[i].id = (unsigned int)i;
		if ((r = desc_event(o, &o->evs[i], &d.evs[i]))) {
			d.nr_evs++;
			goto out;
		}
	}
	/* (borrowed: taken back before the free) */
	if (o->nr_trigger_filter && o->trigger_event >= 0 && o->trigger_event < o->nr_evs) {
		d.evs[o->trigger_event].filter = (struct ev_filter_tok *)o->trigger_filter;
		d.evs[o->trigger_event].nr_filter = o->nr_trigger_filter;
	}
	d.callers = o->callers;
	d.nr_callers = o->nr_callers;
	m = open_memstream(text, len);
	r = -ENOMEM;
	if (m) {
		r = ev_desc_write(m, &d);
		if (fclose(m) && !r)
			r = -ENOMEM;
	}
	d.callers = NULL;
	d.nr_callers = 0;
out:
	if (o->nr_trigger_filter && o->trigger_event >= 0 && o->trigger_event < d.nr_evs) {
		d.evs[o->trigger_event].filter = NULL;
		d.evs[o->trigger_event].nr_filter = 0;
	}
	ev_desc_free(&d);
	if (r) {
		free(*text);
		*text = NULL;
	}
	return r;
}

/* ---- the clock --------------------------------------------------------- */

static bool read_line(const char *path, char *buf, size_t size)
{
	FILE *f = fopen(path, "re");
	bool ok;

	if (!f)
		return false;
	ok = fgets(buf, (int)size, f) != NULL;
	fclose(f);
	return ok;
}

/* Does /proc/cpuinfo's first "flags" line name every flag of @want? */
static bool cpu_has_flags(const char *const *want, int n)
{
	char line[4096];
	bool found = false;
	FILE *f = fopen("/proc/cpuinfo", "re");
	int i;

	if (!f)
		return false;
	while (fgets(line, sizeof(line), f))
		if (!strncmp(line, "flags", 5)) {
			found = true;
			break;
		}
	fclose(f);
	if (!found || !strchr(line, '\n'))
		return false;
	for (i = 0; i < n; i++) {
		size_t len = strlen(want[i]);
		const char *p = line;

		while ((p = strstr(p, want[i])) &&
		       !(p[-1] == ' ' && (p[len] == ' ' || p[len] == '\n')))
			p += len;
		if (!p)
			return false;
	}
	return true;
}

/*
 * The arch's counter (EV_CLOCK_TSC: x86-64's TSC, aarch64's generic timer)
 * when the kernel itself keeps time with it: its clocksource is the
 * counter's (FHOOK_ARCH_COUNTER_CLOCKSOURCE: "tsc", invariant and
 * synchronized across cpus as far as the kernel could tell;
 * "arch_sys_counter"), or "kvm-clock" on a cpu whose TSC is invariant
 * (kvm-clock is the TSC scaled by the host's parameters, and the guest's
 * vDSO reads the TSC for it; no "flags" line of /proc/cpuinfo says so
 * elsewhere).  Else CLOCK_MONOTONIC.  Either way the reader maps the
 * counter to CLOCK_MONOTONIC through pairs taken at both ends.
 */
static int best_clock(void)
{
	static const char *const invariant[] = { "constant_tsc", "nonstop_tsc" };
	char cs[64];

	if (!read_line("/sys/devices/system/clocksource/clocksource0/current_clocksource", cs,
		       sizeof(cs)))
		return EV_CLOCK_MONO;
	if (!strcmp(cs, FHOOK_ARCH_COUNTER_CLOCKSOURCE "\n"))
		return EV_CLOCK_TSC;
	if (!strcmp(cs, "kvm-clock\n") && cpu_has_flags(invariant, 2))
		return EV_CLOCK_TSC;
	return EV_CLOCK_MONO;
}

/* One (tsc, mono) pair, read as close together as the machine allows. */
static void clock_pair(uint64_t *tsc, uint64_t *mono)
{
	uint64_t best = UINT64_MAX;
	int i;

	for (i = 0; i < 5; i++) {
		uint64_t t0 = ev_clock_tsc(), m = ev_clock_mono_ns(), t1 = ev_clock_tsc();

		if (t1 - t0 < best) {
			best = t1 - t0;
			*tsc = t0 + (t1 - t0) / 2;
			*mono = m;
		}
	}
}

static void clock_calibrate(struct ev_session *s)
{
	if (s->clock.kind != EV_CLOCK_TSC)
		return;
	clock_pair(&s->clock.tsc1, &s->clock.mono1);
	if (s->clock.tsc1 - s->clock.tsc0 < 1000000) {
		/* too close to the first pair for a good rate: wait a little */
		struct timespec ts = { 0, 20 * 1000 * 1000 };

		nanosleep(&ts, NULL);
		clock_pair(&s->clock.tsc1, &s->clock.mono1);
	}
}

/* The clock with its rate as of now: a later block replaces an earlier one. */
static int clock_write(struct ev_session *s)
{
	int ret;

	clock_calibrate(s);
	ret = ev_write_block(s->sink, RF_CLOCK, &s->clock, sizeof(s->clock), NULL, 0);
	if (!ret)
		s->clock_written = true;
	return ret;
}

/*
 * The first rate goes into the recording just before the first records
 * that need it, not when the session is made: by then the two readings
 * are usually far enough apart, and a program started or attached to is
 * not held up while they become so (a live reader formats nothing
 * before it).
 */
static int clock_first(struct ev_session *s)
{
	return s->clock_written ? 0 : clock_write(s);
}

/* ---- processes and symbols --------------------------------------------- */

/* The GNU build-id of @elf, or 0 bytes. */
static size_t build_id(Elf *elf, unsigned char *out, size_t max)
{
	Elf_Scn *scn = NULL;
	GElf_Shdr sh;

	while ((scn = elf_nextscn(elf, scn))) {
		Elf_Data *d;
		GElf_Nhdr nh;
		size_t off = 0, noff, doff;

		if (!gelf_getshdr(scn, &sh) || sh.sh_type != SHT_NOTE || !(d = elf_getdata(scn, NULL)))
			continue;
		while ((off = gelf_getnote(d, off, &nh, &noff, &doff)) > 0) {
			if (nh.n_type == NT_GNU_BUILD_ID && nh.n_namesz == 4 &&
			    !memcmp((char *)d->d_buf + noff, "GNU", 4)) {
				size_t n = nh.n_descsz < max ? nh.n_descsz : max;

				memcpy(out, (char *)d->d_buf + doff, n);
				return n;
			}
		}
	}
	return 0;
}

static size_t file_build_id(const char *path, unsigned char *out, size_t max)
{
	size_t n = 0;
	Elf *elf;
	int fd;

	elf_version(EV_CURRENT);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return 0;
	elf = elf_begin(fd, ELF_C_READ, NULL);
	if (elf) {
		n = build_id(elf, out, max);
		elf_end(elf);
	}
	close(fd);
	return n;
}

/* The function symbols of one file, as an RF_SYMS block. */
static int write_syms(struct ev_session *s, struct ev_file *f, const char *path)
{
	struct rf_syms h = { 0 };
	struct rf_sym *syms;
	unsigned char bid[64];
	size_t i, nlen = 0, bl;
	char *names;
	int ret;

	bl = file_build_id(path, bid, sizeof(bid));
	ev_file_load(f);
	syms = calloc(f->nr_syms ? f->nr_syms : 1, sizeof(*syms));
	for (i = 0; i < f->nr_syms; i++)
		if (f->syms[i].func)
			nlen += strlen(f->syms[i].name) + 1;
	names = malloc(nlen + 1);
	if (!syms || !names) {
		free(syms);
		free(names);
		return -ENOMEM;
	}
	nlen = 0;
	for (i = 0; i < f->nr_syms; i++) {
		const struct ev_sym *e = &f->syms[i];
		size_t l;

		if (!e->func)
			continue;
		syms[h.nr_syms].addr = e->addr;
		syms[h.nr_syms].size = e->size > UINT32_MAX ? UINT32_MAX : (uint32_t)e->size;
		syms[h.nr_syms].name = (uint32_t)nlen;
		l = strlen(e->name) + 1;
		memcpy(names + nlen, e->name, l);
		nlen += l;
		h.nr_syms++;
	}
	h.path_len = strlen(path);
	h.build_id_len = bl;
	h.names_len = nlen;
	{
		struct rf_block b = { RF_SYMS, sizeof(h) + h.nr_syms * sizeof(*syms) + h.path_len +
					       h.build_id_len + h.names_len };
		static const char zero[8];
		struct iovec iov[] = {
			{ &b, sizeof(b) }, { &h, sizeof(h) },
			{ syms, h.nr_syms * sizeof(*syms) }, { (void *)path, h.path_len },
			{ bid, bl }, { names, nlen }, { (void *)zero, rf_align(b.len) - b.len },
		};

		ret = s->sink->write(s->sink, iov, 7);
	}
	free(syms);
	free(names);
	return ret;
}

/* Write the symbols of @path once per recording. */
static int need_syms(struct ev_session *s, const char *path)
{
	struct fhook_event_prog *p;
	char **np;
	int i, ret = 0;

	for (i = 0; i < s->nr_paths; i++)
		if (!strcmp(s->paths[i], path))
			return 0;
	np = realloc(s->paths, (s->nr_paths + 1) * sizeof(*np));
	if (!np || !(np[s->nr_paths] = strdup(path)))
		return -ENOMEM;
	s->paths = np;
	s->nr_paths++;
	if (s->o->prog) {
		for (i = 0; i < s->o->prog->nr_files; i++) {
			char rp[PATH_MAX];

			if (!strcmp(s->o->prog->files[i].path, path) ||
			    (realpath(s->o->prog->files[i].path, rp) && !strcmp(rp, path)))
				return write_syms(s, &s->o->prog->files[i], path);
		}
	}
	p = fhook_event_prog_open(path, NULL, 0);
	if (!p)
		return 0;	/* not a file we can read: addresses stay numbers */
	ret = write_syms(s, &p->files[0], path);
	fhook_event_prog_close(p);
	return ret;
}

static void mark_written(struct ev_session *s, uint64_t seq)
{
	if (seq >= s->seq_cap) {
		uint64_t cap = s->seq_cap ? s->seq_cap : 4096;
		uint8_t *nb;

		while (cap <= seq)
			cap *= 2;
		nb = realloc(s->seq_written, cap / 8);
		if (!nb)
			return;
		memset(nb + s->seq_cap / 8, 0, (cap - s->seq_cap) / 8);
		s->seq_written = nb;
		s->seq_cap = cap;
	}
	s->seq_written[seq / 8] |= 1 << (seq % 8);
}

static bool written(struct ev_session *s, uint64_t seq)
{
	return seq < s->seq_cap && (s->seq_written[seq / 8] & (1 << (seq % 8)));
}

/*
 * Copy the process images announced since the last call out of their
 * mailboxes into the recording, and free the mailboxes.  A new image of a
 * pid (an exec) means the threads of the pid's older images are gone.
 */
static int import_procs(struct ev_session *s)
{
	struct ev_proc *procs = s->procs;
	uint32_t i, j, k;
	int ret = 0;

	for (i = 0; i < EV_MAX_PROCS && !ret; i++) {
		struct ev_proc *p = &procs[i];
		struct {
			struct rf_proc h;
			struct rf_obj objs[EV_MAX_OBJS];
		} rp;
		uint64_t top;

		if (__atomic_load_n(&p->state, __ATOMIC_ACQUIRE) != EV_SLOT_READY)
			continue;
		top = __atomic_load_n(&s->shm->proc_seq, __ATOMIC_RELAXED);
		memset(&rp, 0, sizeof(rp));
		rp.h.seq = p->seq;
		rp.h.pid = p->pid;
		rp.h.nr_objs = p->nr_objs < EV_MAX_OBJS ? p->nr_objs : EV_MAX_OBJS;
		/* written by the traced program: bounded, whatever it holds */
		memcpy(rp.objs, p->objs, rp.h.nr_objs * sizeof(rp.objs[0]));
		__atomic_store_n(&p->state, EV_SLOT_FREE, __ATOMIC_RELEASE);
		if (!rp.h.seq || rp.h.seq > top)
			continue;
		for (j = 0; j < rp.h.nr_objs && !ret; j++) {
			rp.objs[j].path[sizeof(rp.objs[j].path) - 1] = 0;
			if (rp.objs[j].path[0] == '/')
				ret = need_syms(s, rp.objs[j].path);
		}
		if (!ret)
			ret = ev_write_block(s->sink, RF_PROC, &rp.h, sizeof(rp.h), rp.objs,
					     rp.h.nr_objs * sizeof(rp.objs[0]));
		if (!ret)
			mark_written(s, rp.h.seq);
		for (k = 0; k < s->nr_seen; k++) {
			struct ses_ring *sr = &s->rings[k];

			if (sr->thread && sr->pid == rp.h.pid && sr->map &&
			    sr->map->proc_seq < rp.h.seq)
				sr->dead = true;
		}
	}
	return ret;
}

/* ---- the session ------------------------------------------------------- */

static void session_stop(struct ev_session *s, uint32_t why);

static int sink_err(struct ev_session *s, int ret)
{
	if (ret && !s->err) {
		s->err = ret;
		session_stop(s, EV_STOP_ERROR);
	}
	return ret;
}

/* A kprobe event among @o's? */
static bool has_kprobes(const struct ev_session_opts *o)
{
	int i;

	for (i = 0; i < o->nr_evs; i++)
		if (o->evs[i].kprobe)
			return true;
	return false;
}

/* What the recording is (RF_INFO): once, before anything a reader times. */
static int info_write(struct ev_sink *sink, const struct ev_session_opts *o)
{
	struct rec_info *info = malloc(sizeof(*info));
	uint32_t len;
	void *buf;
	int ret;

	if (!info)
		return -ENOMEM;
	rec_info_collect(info, o->argv, o->pid);
	ret = rec_info_encode(info, &buf, &len);
	free(info);
	if (ret)
		return ret;
	ret = ev_write_block(sink, RF_INFO, buf, len, NULL, 0);
	free(buf);
	return ret;
}

/*
 * Size the memory and seal it against shrinking: every process that holds
 * it (the traced ones, or the attached process that made it) could
 * otherwise truncate it under the command's mappings, and the command's
 * next read of a ring would be a SIGBUS.  Memory that cannot be sealed
 * (not a memfd, or one made without MFD_ALLOW_SEALING) is refused.
 */
static int ses_seal(int fd, uint64_t size)
{
	struct stat st;
	int seals;

	if (fstat(fd, &st))
		return -errno;
	if (!S_ISREG(st.st_mode))
		return -EBADF;
	if ((uint64_t)st.st_size < size && ftruncate(fd, size))
		return -errno;
	if (fcntl(fd, F_ADD_SEALS, F_SEAL_SHRINK) && errno != EPERM)
		return errno == EINVAL ? -EBADF : -errno;
	seals = fcntl(fd, F_GET_SEALS);
	if (seals < 0 || !(seals & F_SEAL_SHRINK))
		return -EBADF;
	/* a truncation that came first, between the two calls above */
	if (fstat(fd, &st))
		return -errno;
	if ((uint64_t)st.st_size < size)
		return -EBADF;
	return 0;
}

int ev_session_new(const struct ev_session_opts *o, struct ev_sink *sink,
		   struct ev_session **out)
{
	struct ev_session *s = calloc(1, sizeof(*s));
	char *desc = NULL;
	size_t desc_len = 0;
	struct rf_header fh = { .version = RF_VERSION, .hdr_size = sizeof(fh) };
	uint64_t ring_size = o->ring_size ? o->ring_size : EV_RING_DEFAULT;
	uint64_t procs_off, desc_off, rings_off, size;
	struct iovec iov;
	struct stat st;
	char num[64];
	int ret = -ENOMEM;

	if (!s)
		return -ENOMEM;
	s->fd = -1;
	s->o = o;
	s->sink = sink;
	s->next_thread = 1;
	if (ring_size < EV_RING_MIN || ring_size > EV_RING_MAX || (ring_size & (ring_size - 1))) {
		ret = -EINVAL;
		goto fail;
	}
	ret = desc_text(o, &desc, &desc_len);
	if (ret)
		goto fail;
	ret = -ENOMEM;
	procs_off = (sizeof(struct ev_shm) + EV_PAGE - 1) & ~(EV_PAGE - 1);
	desc_off = procs_off + EV_MAX_PROCS * sizeof(struct ev_proc);
	rings_off = (desc_off + desc_len + EV_PAGE - 1) & ~(EV_PAGE - 1);
	size = rings_off + EV_MAX_RINGS * ev_ring_stride(ring_size);
	s->fd = o->use_fd ? o->fd : memfd_create("fhook-trace", MFD_ALLOW_SEALING);
	if (s->fd < 0) {
		ret = -errno;
		goto fail;
	}
	ret = ses_seal(s->fd, size);
	if (ret)
		goto fail;
	s->l.ring_size = ring_size;
	s->l.stride = ev_ring_stride(ring_size);
	s->l.rings_off = rings_off;
	/* the rings are mapped one by one as threads claim them */
	s->shm = mmap(NULL, rings_off, PROT_READ | PROT_WRITE, MAP_SHARED, s->fd, 0);
	if (s->shm == MAP_FAILED) {
		s->shm = NULL;
		ret = -errno;
		goto fail;
	}
	s->procs = (struct ev_proc *)((char *)s->shm + procs_off);
	s->shm->size = size;
	s->shm->ring_size = ring_size;
	s->shm->procs_off = procs_off;
	s->shm->desc_off = desc_off;
	s->shm->rings_off = rings_off;
	s->shm->desc_len = desc_len;
	memcpy((char *)s->shm + desc_off, desc, desc_len);
	s->shm->desc_kprobes = has_kprobes(o);
	s->shm->follow = o->follow;
	s->shm->lossy = o->lossy;
	s->shm->flight = o->flight;
	if (o->trigger_func) {
		snprintf(s->shm->trigger_func, sizeof(s->shm->trigger_func), "%s", o->trigger_func);
		s->shm->trigger_ns = o->trigger_ns;
	}
	snprintf(s->shm->cmd, sizeof(s->shm->cmd), "%s", o->cmd ? o->cmd : "record");
	s->shm->tracer_pid = getpid();
	s->shm->tracer_start = fhook_proc_start(getpid());
	s->clock.kind = o->clock >= 0 ? o->clock : best_clock();
	if (s->clock.kind == EV_CLOCK_TSC) {
		clock_pair(&s->clock.tsc0, &s->clock.mono0);
		/* the TSC as it is: the trampolines that write records subtract nothing */
		s->clock.base = 0;
	} else {
		s->clock.base = s->clock.mono0 = now_ns();
	}
	s->shm->clock = s->clock.kind;
	s->shm->clock_base = s->clock.base;
	__atomic_store_n(&s->shm->magic, EV_SHM_MAGIC, __ATOMIC_RELEASE);

	memcpy(fh.magic, RF_MAGIC, 8);
	iov.iov_base = &fh;
	iov.iov_len = sizeof(fh);
	ret = sink->write(sink, &iov, 1);
	if (!ret)
		ret = ev_write_block(sink, RF_EVENTS, desc, desc_len, NULL, 0);
	if (!ret)
		ret = info_write(sink, o);
	if (ret)
		goto fail;
	free(desc);
	if (!o->use_fd) {
		/* the descriptor, which file it must be, and where to reopen it (record_shm.c) */
		if (fstat(s->fd, &st)) {
			ret = -errno;
			goto fail;
		}
		snprintf(num, sizeof(num), "%d:%llu:%d", s->fd, (unsigned long long)st.st_ino,
			 (int)getpid());
		setenv("FHOOK_EV_SHM", num, 1);
	}
	*out = s;
	return 0;
fail:
	free(desc);
	ev_session_free(s);
	return ret;
}

static bool thread_gone(const struct ses_ring *sr)
{
	return syscall(SYS_tgkill, (pid_t)sr->pid, (pid_t)sr->tid, 0) < 0 && errno == ESRCH;
}

/* Announce the thread of ring @i: its first bytes follow. */
static int announce(struct ev_session *s, uint32_t i)
{
	struct ev_ring *r = ring(s, i);
	struct ses_ring *sr = &s->rings[i];
	struct rf_thread t = { 0 };
	int ret;

	/* its process registered before it claimed the ring: write that first */
	if (r->proc_seq && !written(s, r->proc_seq) && (ret = import_procs(s)))
		return ret;
	sr->thread = s->next_thread++;
	sr->pid = r->pid;
	sr->tid = r->tid;
	t.thread = sr->thread;
	t.pid = r->pid;
	t.tid = r->tid;
	t.proc_seq = r->proc_seq;
	memcpy(t.comm, r->comm, sizeof(t.comm));
	t.comm[sizeof(t.comm) - 1] = 0;
	return ev_write_block(s->sink, RF_THREAD, &t, sizeof(t), NULL, 0);
}

static void printable(char *s);

/*
 * Rings [0, n) may be in use.  The count in the header only grows in a
 * correct program; a lower one read later is a program's scribble, and the
 * rings past it are still drained.
 */
static uint32_t rings_in_use(struct ev_session *s)
{
	uint32_t nr = __atomic_load_n(&s->shm->nr_rings, __ATOMIC_ACQUIRE);

	if (nr > EV_MAX_RINGS)
		nr = EV_MAX_RINGS;
	if (nr > s->nr_seen)
		s->nr_seen = nr;
	return s->nr_seen;
}

/*
 * Ring @i holds a thread's bytes.  Once the command has announced its
 * thread, only the command frees it: what the header's state word says
 * after that (the program can write it) no longer matters.
 */
static bool ring_live(struct ev_session *s, uint32_t i)
{
	return s->rings[i].thread ||
	       __atomic_load_n(&s->shm->ring_state[i], __ATOMIC_ACQUIRE) == EV_SLOT_READY;
}

/*
 * Ring @i's producer wrote what no correct producer can (its program
 * scribbled over the memory it shares with us, or a bug): say so once,
 * naming the process, and read nothing more of that ring.
 */
static void ring_damaged(struct ev_session *s, uint32_t i, const char *what)
{
	struct ses_ring *sr = &s->rings[i];
	char comm[16];

	if (sr->damaged)
		return;
	sr->damaged = true;
	memcpy(comm, sr->map->comm, sizeof(comm));
	comm[sizeof(comm) - 1] = 0;
	printable(comm);
	fprintf(stderr, "fhook: %s: process %u (%s) damaged the memory it shares with fhook "
		"(%s); the rest of thread %u's events are dropped, and its counts are not "
		"trusted\n", s->o->cmd ? s->o->cmd : "record", sr->pid, comm, what, sr->tid);
}

/*
 * A ring's counters, as far as they can be believed: its producer writes
 * them, so they are bounded by what the command moved (an event record is
 * 16 bytes at least, and at most a ring's worth is not moved yet).
 */
static void ring_counts(struct ev_session *s, uint32_t i, struct rf_end *c)
{
	struct ses_ring *sr = &s->rings[i];
	struct ev_ring *r = ring(s, i);
	uint64_t bound = (sr->moved + s->l.ring_size) / 16;

	c->events = c->lost = c->waits = 0;
	if (!r)
		return;
	c->events = ev_ring_events(r);
	/* a flight recorder's producers overwrite: they write more than is read */
	if (!sr->damaged && !s->o->flight && c->events > bound)
		ring_damaged(s, i, "its event count exceeds the bytes it wrote");
	if (sr->damaged) {
		c->events = sr->moved / 16 < c->events ? sr->moved / 16 : c->events;
		return;
	}
	c->lost = __atomic_load_n(&r->lost, __ATOMIC_RELAXED);
	c->waits = __atomic_load_n(&r->waits, __ATOMIC_RELAXED);
}

/*
 * Rings whose thread is gone and whose bytes are written go back to the
 * producers.  Only the drain frees, so a ring is never freed under a
 * copy; a producer claims it with a compare-and-swap and finds it empty.
 */
static void free_ring(struct ev_session *s, uint32_t i)
{
	struct ev_ring *r = ring(s, i);
	struct rf_end c = { 0 };

	ring_counts(s, i, &c);
	s->events_freed += c.events;
	s->lost_freed += c.lost;
	s->waits_freed += c.waits;
	memset(&s->rings[i], 0, sizeof(s->rings[i]));
	s->rings[i].map = r;	/* kept for the ring's next thread */
	r->head = r->tail = r->lost = r->events = r->events_head = r->waits = 0;
	r->waiting = r->kicked = 0;
	r->proc_seq = 0;
	r->exited = 0;
	r->pid = r->tid = 0;
	memset(r->comm, 0, sizeof(r->comm));
	__atomic_store_n(&s->shm->ring_state[i], EV_SLOT_FREE, __ATOMIC_RELEASE);
	__atomic_add_fetch(&s->shm->rings_freed, 1, __ATOMIC_RELEASE);
}

long ev_session_drain(struct ev_session *s, int wait_ms)
{
	uint32_t nr, i;
	long moved = 0;
	uint64_t now;
	bool reap;
	int ret;

	if (wait_ms > 0) {
		uint32_t w = __atomic_load_n(&s->shm->wake, __ATOMIC_ACQUIRE);

		if (w == s->seen_wake) {
			struct timespec ts = { wait_ms / 1000, (wait_ms % 1000) * 1000000L };

			futex(&s->shm->wake, FUTEX_WAIT, w, &ts);
		}
	}
	s->seen_wake = __atomic_load_n(&s->shm->wake, __ATOMIC_ACQUIRE);
	__atomic_add_fetch(&s->shm->heartbeat, 1, __ATOMIC_RELAXED);
	if (s->err)
		return s->err;
	ret = import_procs(s);
	if (ret)
		return sink_err(s, ret);
	now = now_ns();
	reap = now - s->reap_ns >= SES_REAP_NS;
	if (reap)
		s->reap_ns = now;
	nr = rings_in_use(s);
	for (i = 0; i < nr; i++) {
		struct ses_ring *sr = &s->rings[i];
		uint64_t head, tail, size = s->l.ring_size;
		struct ev_ring *r;

		if (!ring_live(s, i) ||
		    !(r = ring(s, i)))
			continue;
		tail = sr->tail;
		if (!sr->thread && (ret = announce(s, i)))
			return sink_err(s, ret);
		/* gone before its head is read: this copy is its last */
		if (!sr->dead && (__atomic_load_n(&r->exited, __ATOMIC_ACQUIRE) ||
				  (reap && thread_gone(sr))))
			sr->dead = true;
		if (s->o->flight)
			continue;	/* read at a dump; its thread's ring is kept till the end */
		head = __atomic_load_n(&r->head, __ATOMIC_ACQUIRE);
		if (!sr->damaged && (head < tail || head - tail > size))
			ring_damaged(s, i, head < tail ? "its head went backwards" :
				     "its head ran more than a ring ahead");
		if (sr->damaged) {
			/* its bytes are dropped; its thread is not kept waiting for room */
			__atomic_store_n(&r->tail, head, __ATOMIC_SEQ_CST);
			tail = head;
		}
		if (head > tail) {
			uint64_t pos = tail & (size - 1), n1 = head - tail, n2 = 0;
			struct rf_data dh = { .thread = sr->thread };
			struct rf_block b;
			static const char zero[8];

			/*
			 * A thread announces the objects a dlopen() brought
			 * before it writes an event from them: with its head
			 * read, its announcements are visible, and they go
			 * into the recording first (a live reader symbolizes
			 * in file order).
			 */
			ret = import_procs(s);
			if (!ret)
				ret = clock_first(s);
			if (ret)
				return sink_err(s, ret);
			if (pos + n1 > size) {
				n2 = pos + n1 - size;
				n1 = size - pos;
			}
			b.type = RF_DATA;
			b.len = sizeof(dh) + n1 + n2;
			{
				struct iovec iov[] = {
					{ &b, sizeof(b) }, { &dh, sizeof(dh) },
					{ ev_ring_data(r) + pos, n1 }, { ev_ring_data(r), n2 },
					{ (void *)zero, rf_align(b.len) - b.len },
				};

				ret = s->sink->write(s->sink, iov, 5);
			}
			if (ret)
				return sink_err(s, ret);
			moved += head - tail;
			sr->moved += head - tail;
			sr->tail = head;
			/* pairs with the producer's store of waiting, then load of tail */
			__atomic_store_n(&r->tail, head, __ATOMIC_SEQ_CST);
		}
		if (__atomic_load_n(&r->waiting, __ATOMIC_SEQ_CST)) {
			__atomic_store_n(&r->waiting, 0, __ATOMIC_RELAXED);
			__atomic_add_fetch(&r->space_seq, 1, __ATOMIC_RELEASE);
			futex(&r->space_seq, FUTEX_WAKE, INT_MAX, NULL);
		}
		__atomic_store_n(&r->kicked, 0, __ATOMIC_RELAXED);
		if (sr->dead && __atomic_load_n(&r->head, __ATOMIC_ACQUIRE) == head)
			free_ring(s, i);
	}
	/* (also when nothing came: a sink that keeps bytes back writes them in time) */
	if (s->sink->round && (ret = s->sink->round(s->sink)))
		return sink_err(s, ret);
	return moved;
}

static void session_stop(struct ev_session *s, uint32_t why)
{
	uint32_t i, nr;

	__atomic_store_n(&s->shm->stopped, why, __ATOMIC_RELEASE);
	nr = rings_in_use(s);
	for (i = 0; i < nr && i < EV_MAX_RINGS; i++) {
		struct ev_ring *r;

		if (!ring_live(s, i) ||
		    !(r = ring(s, i)))
			continue;
		__atomic_add_fetch(&r->space_seq, 1, __ATOMIC_RELEASE);
		futex(&r->space_seq, FUTEX_WAKE, INT_MAX, NULL);
	}
}

void ev_session_stop(struct ev_session *s)
{
	session_stop(s, EV_STOP_END);
}

uint32_t ev_session_trigger_fired(struct ev_session *s, uint64_t *took_ns)
{
	uint32_t n;

	/* firings after this look kick again */
	__atomic_store_n(&s->shm->trigger_kicked, 0, __ATOMIC_SEQ_CST);
	n = __atomic_load_n(&s->shm->trigger_fired, __ATOMIC_SEQ_CST);

	*took_ns = __atomic_load_n(&s->shm->trigger_took_ns, __ATOMIC_RELAXED);
	return n;
}

void ev_session_trigger_off(struct ev_session *s)
{
	__atomic_store_n(&s->shm->trigger_off, 1, __ATOMIC_RELAXED);
}

void ev_session_counts(struct ev_session *s, struct rf_end *out)
{
	uint32_t nr = rings_in_use(s), i;

	memset(out, 0, sizeof(*out));
	out->events = s->events_freed;
	out->lost = s->lost_freed + __atomic_load_n(&s->shm->lost_no_ring, __ATOMIC_RELAXED);
	out->waits = s->waits_freed;
	for (i = 0; i < nr && i < EV_MAX_RINGS; i++) {
		struct rf_end c;

		if (!ring_live(s, i))
			continue;
		ring_counts(s, i, &c);
		out->events += c.events;
		out->lost += c.lost;
		out->waits += c.waits;
	}
	out->nmissed = __atomic_load_n(&s->shm->nmissed, __ATOMIC_RELAXED);
}

/*
 * Event records in [tail, head) of ring @i: what a failed write left
 * unwritten.  Only their headers are read, and no further than they parse.
 */
static uint64_t unwritten_events(struct ev_session *s, uint32_t i)
{
	struct ev_ring *r = ring(s, i);
	uint64_t size = s->l.ring_size, tail, head, n = 0;
	const unsigned char *data;

	if (!r || s->rings[i].damaged)
		return 0;
	tail = s->rings[i].tail;
	head = __atomic_load_n(&r->head, __ATOMIC_ACQUIRE);
	data = ev_ring_data(r);

	if (head < tail || head - tail > size)
		return 0;
	while (tail < head) {
		bool event;
		uint64_t len = ev_rec_len(data, tail & (size - 1), size, &event);

		n += event;
		if (!len)
			break;
		tail += len;
	}
	return n;
}

/*
 * Copy what ring @i holds past the last dump into @buf (a ring's size at
 * most), then keep only what its producer had not overwritten meanwhile:
 * it publishes its new tail before it writes over anything behind it.
 * Returns the bytes kept.
 */
static uint64_t dump_copy(struct ev_session *s, uint32_t i, unsigned char *buf)
{
	struct ses_ring *sr = &s->rings[i];
	struct ev_ring *r = sr->map;
	uint64_t size = s->l.ring_size, head, tail, start, n, pos, n1;

	head = __atomic_load_n(&r->head, __ATOMIC_ACQUIRE);
	tail = __atomic_load_n(&r->tail, __ATOMIC_ACQUIRE);
	start = tail > sr->tail ? tail : sr->tail;
	if (head < start || head - start > size)
		return 0;	/* not what a producer writes: nothing to trust */
	n = head - start;
	pos = start & (size - 1);
	n1 = pos + n > size ? size - pos : n;
	memcpy(buf, ev_ring_data(r) + pos, n1);
	memcpy(buf + n1, ev_ring_data(r), n - n1);
	__atomic_thread_fence(__ATOMIC_SEQ_CST);
	tail = __atomic_load_n(&r->tail, __ATOMIC_ACQUIRE);
	sr->tail = head;
	if (tail > start) {
		if (tail >= head)
			return 0;
		memmove(buf, buf + (tail - start), head - tail);
		n = head - tail;
	}
	return n;
}

/*
 * The full time of a thread's first kept record, for an EV_ID_TIME record
 * before it: its low 48 bits are in the record, the rest is now's (it was
 * written less than 2^47 ticks ago).
 */
static uint64_t dump_time(struct ev_session *s, const unsigned char *p, uint64_t n)
{
	uint64_t now = ev_clock_read(s->clock.kind) - s->clock.base, w0, at = 0;

	while (at + 16 <= n) {
		uint32_t id;

		memcpy(&w0, p + at, 8);
		id = ev_w0_id(w0);
		if (id == EV_ID_PAD) {
			if ((w0 & EV_TS_MASK) < 8)
				break;
			at += w0 & EV_TS_MASK;
			continue;
		}
		if (id >= EV_ID_SPECIAL)
			break;
		return now - ((now - (w0 & EV_TS_MASK)) & EV_TS_MASK);
	}
	return now;
}

long ev_session_dump(struct ev_session *s)
{
	unsigned char *buf;
	uint32_t i, nr;
	long moved = 0;
	int ret = 0;

	if (!s->o->flight || s->err)
		return s->err;
	/* announce what started since the last round first */
	ev_session_drain(s, 0);
	buf = malloc(s->l.ring_size);
	if (!buf)
		return -ENOMEM;
	nr = rings_in_use(s);
	for (i = 0; i < nr && !ret; i++) {
		struct ses_ring *sr = &s->rings[i];
		uint64_t n, tw[2];

		if (!sr->thread || sr->damaged || !sr->map)
			continue;
		n = dump_copy(s, i, buf);
		if (!n)
			continue;
		tw[1] = dump_time(s, buf, n);
		tw[0] = ev_w0(tw[1], EV_ID_TIME);
		{
			struct rf_data dh = { .thread = sr->thread };
			struct rf_block b = { RF_DATA, sizeof(dh) + sizeof(tw) + n };
			static const char zero[8];
			struct iovec iov[] = {
				{ &b, sizeof(b) }, { &dh, sizeof(dh) }, { tw, sizeof(tw) },
				{ buf, n }, { (void *)zero, rf_align(b.len) - b.len },
			};

			ret = clock_first(s);
			if (!ret)
				ret = s->sink->write(s->sink, iov, 5);
		}
		sr->moved += n;
		moved += n;
	}
	free(buf);
	if (!ret && moved && s->sink->round)
		ret = s->sink->round(s->sink);
	if (ret)
		return sink_err(s, ret);
	s->dumps++;
	s->dumped += moved;
	return moved;
}

void ev_session_dumps(struct ev_session *s, uint32_t *dumps, uint64_t *bytes)
{
	*dumps = s->dumps;
	*bytes = s->dumped;
}

/*
 * The event records in @len bytes of the stream a sink kept back after a
 * write error, from a unit's start at stream offset @at (0: the header).
 */
static uint64_t stream_events(const unsigned char *p, uint64_t len, uint64_t at)
{
	uint64_t off = at ? 0 : sizeof(struct rf_header), n = 0;

	while (off + sizeof(struct rf_block) <= len) {
		struct rf_block b;
		uint64_t pos, end;

		memcpy(&b, p + off, sizeof(b));
		off += sizeof(b);
		end = off + b.len;
		if (b.type == RF_DATA && end <= len) {
			for (pos = off + sizeof(struct rf_data); pos + 8 <= end; ) {
				bool event;
				uint64_t l = ev_rec_len(p, pos, end, &event);

				if (!l)
					break;
				n += event;
				pos += l;
			}
		}
		off += rf_align(b.len);
	}
	return n;
}

/* ... and a sink's count of them */
static uint64_t sink_unwritten_events(struct ev_sink *sink)
{
	unsigned char *bytes = NULL;
	uint64_t at = 0, n;
	long len;

	if (!sink->unwritten)
		return 0;
	len = sink->unwritten(sink, &bytes, &at);
	n = len > 0 ? stream_events(bytes, len, at) : 0;
	free(bytes);
	return n;
}

int ev_session_finish(struct ev_session *s, uint32_t status, int err, struct rf_end *out)
{
	struct rf_end end;
	int ret = 0;
	uint32_t i, nr;

	/* (a dump drains first) */
	if (!s->err && s->o->flight)
		ev_session_dump(s);
	else if (!s->err)
		ev_session_drain(s, 0);
	/* the counts are of what the output holds */
	if (!s->err && s->sink->flush)
		sink_err(s, s->sink->flush(s->sink));
	ev_session_counts(s, &end);
	if (s->err) {
		/* what the rings still hold never reached the output: lost, not recorded */
		nr = rings_in_use(s);
		for (i = 0; i < nr && i < EV_MAX_RINGS; i++) {
			uint64_t n;

			if (!ring_live(s, i))
				continue;
			n = unwritten_events(s, i);
			end.events -= n < end.events ? n : end.events;
			end.lost += n;
		}
	}
	if (s->err) {
		/* ... and neither did what the sink took but could not write */
		uint64_t n = sink_unwritten_events(s->sink);

		end.events -= n < end.events ? n : end.events;
		end.lost += n;
	}
	if (s->err) {
		status = RF_END_WRITE_ERROR;
		err = -s->err;
	}
	end.status = status;
	end.err = err;
	if (!s->err) {
		if (s->clock.kind == EV_CLOCK_TSC || !s->clock_written)
			ret = clock_write(s);
		if (!ret)
			ret = ev_write_block(s->sink, RF_END, &end, sizeof(end), NULL, 0);
		if (!ret && s->sink->round)
			ret = s->sink->round(s->sink);
		sink_err(s, ret);
	}
	if (out)
		*out = end;
	return s->err;
}

static void printable(char *s)
{
	for (; *s; s++)
		if ((unsigned char)*s < 0x20 || (unsigned char)*s >= 0x7f)
			*s = '?';
}

void ev_session_kprobe_counts(struct ev_session *s, int id, uint32_t *loaded, uint32_t *placed)
{
	bool in = id >= 0 && id < EV_MAX_KP_EVENTS;

	*loaded = in ? __atomic_load_n(&s->shm->kp_loaded[id], __ATOMIC_RELAXED) : 0;
	*placed = in ? __atomic_load_n(&s->shm->kp_placed[id], __ATOMIC_RELAXED) : 0;
}

char *ev_session_untraced(struct ev_session *s, const char *cmd)
{
	uint32_t nr = __atomic_load_n(&s->shm->nr_untraced, __ATOMIC_ACQUIRE), i;
	char *buf = NULL;
	size_t len = 0;
	FILE *f;

	if (!nr)
		return NULL;
	f = open_memstream(&buf, &len);
	if (!f)
		return NULL;
	fprintf(f, "fhook: %s: %u process%s ran untraced, or partly:\n", cmd, nr,
		nr == 1 ? "" : "es");
	for (i = 0; i < nr && i < EV_MAX_UNTRACED; i++) {
		struct ev_untraced u = s->shm->untraced[i];

		if (__atomic_load_n(&s->shm->untraced[i].state, __ATOMIC_ACQUIRE) != EV_SLOT_READY)
			continue;
		/* written by the traced process: printed as plain text only */
		u.comm[sizeof(u.comm) - 1] = 0;
		u.why[sizeof(u.why) - 1] = 0;
		printable(u.comm);
		printable(u.why);
		fprintf(f, "fhook: %s:   pid %u (%s): %s\n", cmd, u.pid, u.comm, u.why);
	}
	if (nr > EV_MAX_UNTRACED)
		fprintf(f, "fhook: %s:   and %u more\n", cmd, nr - EV_MAX_UNTRACED);
	fclose(f);
	return buf;
}

void ev_session_free(struct ev_session *s)
{
	int i;

	if (!s)
		return;
	for (i = 0; i < EV_MAX_RINGS; i++)
		if (s->rings[i].map)
			munmap(s->rings[i].map, s->l.stride);
	if (s->shm)
		munmap(s->shm, s->l.rings_off);
	if (s->fd >= 0)
		close(s->fd);
	unsetenv("FHOOK_EV_SHM");
	for (i = 0; i < s->nr_paths; i++)
		free(s->paths[i]);
	free(s->paths);
	free(s->seq_written);
	free(s);
}
