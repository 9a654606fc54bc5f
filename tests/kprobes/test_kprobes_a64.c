// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * kprobes on aarch64: a brk on each class of instruction of kp_a64.S, the
 * ones run out of line and the pc-relative ones simulated.  Each probed
 * function must return what it returns unprobed, the pre_handler must see
 * the probed address and the registers as they are there, and the
 * instructions a trap would break are refused with -EILSEQ.  Also:
 * post_handlers, handlers that change registers or the pc, kretprobes on
 * "bti c" and "paciasp" entries, probes placed and removed while another
 * thread runs through them, and long SVE vectors.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdbool.h>
#include <stdlib.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <fhook/kallsyms.h>
#include <fhook/kprobes.h>

#include "../check.h"

typedef unsigned long (*fn_t)(unsigned long);

#define DECL(f)	extern unsigned long f(unsigned long); extern char f##_at[]
DECL(kpa_adr); DECL(kpa_adrp); DECL(kpa_ldr_w); DECL(kpa_ldr_x); DECL(kpa_ldrsw);
DECL(kpa_ldr_s); DECL(kpa_ldr_d); DECL(kpa_ldr_q); DECL(kpa_prfm); DECL(kpa_b);
DECL(kpa_bl); DECL(kpa_bcond); DECL(kpa_cbz); DECL(kpa_cbnz_w); DECL(kpa_tbz);
DECL(kpa_tbnz); DECL(kpa_br); DECL(kpa_blr); DECL(kpa_add); DECL(kpa_svc); DECL(kpa_pac);
DECL(kpa_victim);
extern char kpa_add_bti[], kpa_add_ret[], kpa_near[], kpa_data[];
extern char kpa_excl_ldxr[], kpa_excl_add[], kpa_excl_stxr[], kpa_excl_after[];
extern unsigned long kpa_excl(unsigned long *counter);
extern uint32_t kpa_words[], kpa_words_refused[], kpa_words_end[];

static unsigned long hits, seen_pc, seen_x0, post_hits, post_pc, post_x0;

static int pre(struct kprobe *p, struct pt_regs *regs)
{
	(void)p;
	__atomic_add_fetch(&hits, 1, __ATOMIC_RELAXED);
	seen_pc = regs->pc;
	seen_x0 = regs->regs[0];
	return 0;
}

static void post(struct kprobe *p, struct pt_regs *regs, unsigned long flags)
{
	(void)p;
	(void)flags;
	post_hits++;
	post_pc = regs->pc;
	post_x0 = regs->regs[0];
}

struct insn_case {
	const char *name;
	char *at;
	fn_t fn;
	unsigned long in[3];
	int nr_in;
	bool x0_is_result;	/* at the probe, x0 holds the result already */
};

#define NR_IN(...)	((int)(sizeof((unsigned long[]){ __VA_ARGS__ }) / sizeof(unsigned long)))
#define C(n, f, ...)	{ n, (char *)f##_at, f, { __VA_ARGS__ }, NR_IN(__VA_ARGS__), false }

static const struct insn_case insn_cases[] = {
	{ "bti_c", kpa_add_bti, kpa_add, { 1, 100 }, 2, false },
	C("add", kpa_add, 1, 100),
	{ "ret", kpa_add_ret, kpa_add, { 1, 100 }, 2, true },
	C("adr", kpa_adr, 0),
	C("adrp", kpa_adrp, 0),
	C("ldr_w", kpa_ldr_w, 0),
	C("ldr_x", kpa_ldr_x, 0),
	C("ldrsw", kpa_ldrsw, 0),
	C("ldr_s", kpa_ldr_s, 0),
	C("ldr_d", kpa_ldr_d, 0),
	C("ldr_q", kpa_ldr_q, 0),
	C("prfm", kpa_prfm, 0),
	C("b", kpa_b, 0),
	C("bl", kpa_bl, 1, 32),
	C("b_cond", kpa_bcond, 3, 7, (unsigned long)-1),
	C("cbz", kpa_cbz, 0, 5),
	C("cbnz_w", kpa_cbnz_w, 0, 0x100000000UL, 0x100000001UL),
	C("tbz", kpa_tbz, 1UL << 33, 0),
	C("tbnz_w", kpa_tbnz, 8, 0x100000000UL),
	C("br", kpa_br, 0),
	C("blr", kpa_blr, 1, 2),
	C("paciasp", kpa_pac, 1, 2),
};

/* what the functions return unprobed, known without running them */
static void case_unprobed(void)
{
	CHECK_EQ(kpa_adr(0), (unsigned long)kpa_near, "adr_value");
	CHECK_EQ(kpa_adrp(0), (unsigned long)kpa_data, "adrp_value");
	CHECK_EQ(kpa_ldr_w(0), 0xdeadbeefUL, "ldr_w_value");
	CHECK_EQ(kpa_ldr_x(0), 0x0123456789abcdefUL, "ldr_x_value");
	CHECK_EQ(kpa_ldrsw(0), -5, "ldrsw_value");
	CHECK_EQ(kpa_ldr_s(0), 0x40490fdbUL, "ldr_s_value");
	CHECK_EQ(kpa_ldr_d(0), 0x400921fb54442d18UL, "ldr_d_value");
	CHECK_EQ(kpa_ldr_q(0), 0x1111222233334444UL ^ 0x0202020202020202UL, "ldr_q_value");
	CHECK_EQ(kpa_bcond(3), 200, "b_cond_taken");
	CHECK_EQ(kpa_bcond(7), 100, "b_cond_not_taken");
	CHECK_EQ(kpa_cbnz_w(0x100000000UL), 40, "cbnz_w_low_half");
	CHECK_EQ(kpa_tbz(1UL << 33), 60, "tbz_bit_set");
	CHECK_EQ(kpa_blr(1), 11, "blr_value");
}

/* each class probed: results as unprobed, one hit per call, the pc and x0 seen */
static void case_classes(void)
{
	size_t i;

	for (i = 0; i < sizeof(insn_cases) / sizeof(insn_cases[0]); i++) {
		const struct insn_case *c = &insn_cases[i];
		struct kprobe p = { .addr = (kprobe_opcode_t *)c->at, .pre_handler = pre };
		unsigned long want[3], got[3];
		char name[96];
		bool same = true, x0_ok = true;
		int k, ret;

		for (k = 0; k < c->nr_in; k++)
			want[k] = c->fn(c->in[k]);
		hits = 0;
		ret = register_kprobe(&p);
		snprintf(name, sizeof(name), "%s_register", c->name);
		CHECK_EQ(ret, 0, name);
		if (ret)
			continue;
		snprintf(name, sizeof(name), "%s_trap", c->name);
		CHECK_EQ(kprobe_method(&p, NULL, 0), KPROBE_METHOD_TRAP, name);
		for (k = 0; k < c->nr_in; k++) {
			seen_pc = seen_x0 = 0;
			got[k] = c->fn(c->in[k]);
			same &= got[k] == want[k];
			x0_ok &= seen_x0 == (c->x0_is_result ? want[k] : c->in[k]) &&
				 seen_pc == (unsigned long)c->at;
		}
		snprintf(name, sizeof(name), "%s_results", c->name);
		CHECK(same, name, "probed %#lx, unprobed %#lx (first input)", got[0], want[0]);
		snprintf(name, sizeof(name), "%s_hits", c->name);
		CHECK_EQ(hits, c->nr_in, name);
		snprintf(name, sizeof(name), "%s_regs_seen", c->name);
		CHECK(x0_ok, name, "pc %#lx (probe %p), x0 %#lx", seen_pc, (void *)c->at,
		      seen_x0);
		unregister_kprobe(&p);
		for (k = 0; k < c->nr_in; k++)
			same &= c->fn(c->in[k]) == want[k];
		snprintf(name, sizeof(name), "%s_after_unregister", c->name);
		CHECK(same && hits == (unsigned long)c->nr_in, name, "hits %lu", hits);
	}
}

/* a post_handler: after the copy's return brk, or after a simulation */
static void case_post(void)
{
	struct kprobe p = { .addr = (kprobe_opcode_t *)kpa_add_at, .pre_handler = pre,
			    .post_handler = post };
	struct kprobe q = { .addr = (kprobe_opcode_t *)kpa_b_at, .post_handler = post };
	struct kprobe r = { .addr = (kprobe_opcode_t *)kpa_bcond_at, .post_handler = post };

	hits = post_hits = 0;
	CHECK_EQ(register_kprobe(&p), 0, "post_register_xol");
	CHECK_EQ(kpa_add(4), 7, "post_xol_result");
	CHECK(hits == 1 && post_hits == 1, "post_xol_hits", "pre %lu post %lu", hits, post_hits);
	CHECK(post_pc == (unsigned long)kpa_add_ret && post_x0 == 7, "post_xol_regs",
	      "pc %#lx x0 %lu", post_pc, post_x0);
	unregister_kprobe(&p);

	post_hits = 0;
	CHECK_EQ(register_kprobe(&q), 0, "post_register_b");
	CHECK_EQ(kpa_b(0), 2, "post_b_result");
	CHECK(post_hits == 1 && post_pc == (unsigned long)kpa_b_at + 12, "post_b_regs",
	      "post %lu pc %#lx", post_hits, post_pc);
	unregister_kprobe(&q);

	post_hits = 0;
	CHECK_EQ(register_kprobe(&r), 0, "post_register_b_cond");
	CHECK(kpa_bcond(1) == 200 && kpa_bcond(9) == 100, "post_b_cond_results", "");
	CHECK(post_hits == 2 && post_pc == (unsigned long)kpa_bcond_at + 4, "post_b_cond_regs",
	      "post %lu pc %#lx", post_hits, post_pc);
	unregister_kprobe(&r);
	CHECK_EQ(kpa_add(4), 7, "post_after_unregister");
}

static int set_x0(struct kprobe *p, struct pt_regs *regs)
{
	(void)p;
	regs->regs[0] = 10;
	return 0;
}

static int return_now(struct kprobe *p, struct pt_regs *regs)
{
	(void)p;
	regs_return_now(regs, 77);
	return 1;
}

/* a pre_handler's changes take effect: a register, and the pc */
static void case_modify(void)
{
	struct kprobe p = { .addr = (kprobe_opcode_t *)kpa_add_at, .pre_handler = set_x0 };
	struct kprobe q = { .addr = (kprobe_opcode_t *)kpa_add_bti, .pre_handler = return_now };

	CHECK_EQ(register_kprobe(&p), 0, "modify_register");
	CHECK_EQ(kpa_add(1), 13, "modify_x0");
	unregister_kprobe(&p);
	CHECK_EQ(register_kprobe(&q), 0, "return_now_register");
	CHECK_EQ(kpa_add(1), 77, "return_now");
	unregister_kprobe(&q);
	CHECK_EQ(kpa_add(1), 4, "modify_after_unregister");
}

/* what a trap would break is refused, and the function still works */
static void case_refused(void)
{
	static const struct { const char *name; char *at; } bad[] = {
		{ "refuse_ldxr", kpa_excl_ldxr },
		{ "refuse_inside_exclusive", kpa_excl_add },
		{ "refuse_stxr", kpa_excl_stxr },
		{ "refuse_svc", kpa_svc_at },
		{ "refuse_unaligned", kpa_add_at + 2 },
	};
	struct kprobe ok = { .addr = (kprobe_opcode_t *)kpa_excl_after, .pre_handler = pre };
	unsigned long counter = 5;
	size_t i;

	for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		struct kprobe p = { .addr = (kprobe_opcode_t *)bad[i].at, .pre_handler = pre };

		CHECK_EQ(register_kprobe(&p), -EILSEQ, bad[i].name);
	}
	hits = 0;
	CHECK_EQ(register_kprobe(&ok), 0, "after_exclusive_register");
	CHECK(kpa_excl(&counter) == 6 && counter == 6 && hits == 1, "after_exclusive",
	      "counter %lu hits %lu", counter, hits);
	unregister_kprobe(&ok);
	CHECK_EQ(kpa_svc(0), (unsigned long)getpid(), "svc_unprobed");
}

/*
 * Another tool's breakpoint (a debugger's brk) or patch (a branch) where
 * a probe would go: refused with -EBUSY, not copied nor overwritten; the
 * file's word back, the probe is placed.
 */
static void case_foreign(void)
{
	static const struct { const char *name; uint32_t word; } other[] = {
		{ "foreign_brk", 0xd4200000u | (0x3e8u << 5) },	/* brk #1000 */
		{ "foreign_b", 0x14000002u },			/* b .+8 */
		{ "foreign_bl", 0x94000002u },			/* bl .+8 */
	};
	volatile uint32_t *at = (volatile uint32_t *)kpa_victim_at;
	struct kprobe p = { .addr = (kprobe_opcode_t *)kpa_victim_at, .pre_handler = pre };
	long page = sysconf(_SC_PAGESIZE);
	char *start = (char *)((uintptr_t)kpa_victim_at & ~(uintptr_t)(page - 1));
	uint32_t orig = *at;
	size_t i;

	if (mprotect(start, 2 * page, PROT_READ | PROT_WRITE | PROT_EXEC)) {
		CHECK(0, "foreign_mprotect", "%s", strerror(errno));
		return;
	}
	for (i = 0; i < sizeof(other) / sizeof(other[0]); i++) {
		*at = other[i].word;
		__builtin___clear_cache((char *)at, (char *)at + 4);
		CHECK_EQ(register_kprobe(&p), -EBUSY, other[i].name);
		CHECK(*at == other[i].word, "foreign_untouched", "%08x", *at);
	}
	*at = orig;
	__builtin___clear_cache((char *)at, (char *)at + 4);
	hits = 0;
	CHECK_EQ(register_kprobe(&p), 0, "foreign_gone_register");
	CHECK(kpa_victim(1) == 6 && hits == 1, "foreign_gone_hit", "hits %lu", hits);
	unregister_kprobe(&p);
	mprotect(start, 2 * page, PROT_READ | PROT_EXEC);
}

/* each word of kpa_words: accepted, or refused with -EILSEQ (none is run) */
static void case_decode(void)
{
	int accepted = 0, refused = 0, wrong = 0;
	uint32_t *w;

	for (w = kpa_words; w < kpa_words_end; w++) {
		struct kprobe p = { .addr = (kprobe_opcode_t *)w, .pre_handler = pre };
		int want = w < kpa_words_refused ? 0 : -EILSEQ, ret = register_kprobe(&p);

		if (ret != want) {
			printf("# word %#010x at +%ld: %d, expected %d\n", *w,
			       (long)(w - kpa_words) * 4, ret, want);
			wrong++;
		}
		if (!ret)
			unregister_kprobe(&p);
		accepted += !ret;
		refused += ret == -EILSEQ;
	}
	CHECK_EQ(wrong, 0, "decode_words");
	CHECK_EQ(accepted, kpa_words_refused - kpa_words, "decode_accepted");
	CHECK_EQ(refused, kpa_words_end - kpa_words_refused, "decode_refused");
}

/* compiled code without a site, for a probe on each of its instructions */
#define NOSITE __attribute__((patchable_function_entry(0, 0), noinline, noclone))

static const char *const sweep_names[] = { "alpha", "be", "gamma-delta" };
static volatile unsigned char sweep_tbl[16] = { 3, 1, 4, 1, 5, 9, 2, 6, 5, 3, 5, 8, 9, 7, 9, 3 };

NOSITE unsigned long sweep_mix(unsigned long x)
{
	unsigned long r, i;

	switch (x & 7) {
	case 0: r = x * 3; break;
	case 1: r = x ^ 0x55; break;
	case 2: r = sweep_tbl[x & 15]; break;
	case 3: r = x / 7; break;
	case 4: r = (unsigned long)((double)x * 1.5); break;
	case 5: r = (unsigned long)__builtin_popcountl(x); break;
	case 6: r = strlen(sweep_names[x % 3]); break;
	default: r = x << 3; break;
	}
	for (i = 0; i < (x & 15); i++)
		r += i * x;
	return r + (x > 100 ? 1 : 0);
}

NOSITE unsigned long sweep_float(unsigned long x)
{
	double d = (double)x;
	float f = (float)x * 0.25f;
	unsigned long r = 0;

	while (d > 1.0) {
		d = d / 3.0 + 0.125;
		r++;
	}
	return r * 1000 + (unsigned long)(f + (float)d);
}

static int cmp_ul(const void *a, const void *b)
{
	unsigned long x = *(const unsigned long *)a, y = *(const unsigned long *)b;

	return x < y ? -1 : x > y;
}

/* libc's qsort on numbers made from @x: a checksum of the order */
static unsigned long sweep_qsort(unsigned long x)
{
	unsigned long v[24], r = 0;
	size_t i;

	for (i = 0; i < 24; i++)
		v[i] = (x * 2654435761UL + i * 40503UL) % 1009;
	qsort(v, 24, sizeof(v[0]), cmp_ul);
	for (i = 0; i < 24; i++)
		r = r * 31 + v[i];
	return r;
}

/*
 * A probe on every instruction of compiled functions in turn (ours, and
 * libc's qsort_r, built by the distribution): each is accepted (nothing
 * there a trap breaks), and leaves the results as they are unprobed.
 */
static void case_sweep(void)
{
	static const struct { const char *name; void *at; fn_t fn; } fns[] = {
		{ "sweep_mix", (void *)sweep_mix, sweep_mix },
		{ "sweep_float", (void *)sweep_float, sweep_float },
		{ "libc_qsort_r", (void *)qsort_r, sweep_qsort },
	};
	static const unsigned long in[] = { 0, 1, 2, 3, 4, 5, 6, 7, 13, 22, 150, 1000, 77777 };
	size_t f, k;

	for (f = 0; f < sizeof(fns) / sizeof(fns[0]); f++) {
		unsigned long size = 0, off = 0, a, want[sizeof(in) / sizeof(in[0])];
		unsigned long start = (unsigned long)fns[f].at;
		int probed = 0, refused = 0, wrong = 0, unhit = 0;
		char name[64];

		if (!kallsyms_lookup_size_offset(start, &size, &off) || off || !size) {
			CHECK(0, fns[f].name, "no size");
			continue;
		}
		for (k = 0; k < sizeof(in) / sizeof(in[0]); k++)
			want[k] = fns[f].fn(in[k]);
		for (a = start; a < start + size; a += 4) {
			struct kprobe p = { .addr = (kprobe_opcode_t *)a, .pre_handler = pre };
			int ret = register_kprobe(&p);

			if (ret) {
				printf("# %s+%#lx (%#010x): %d\n", fns[f].name, a - start,
				       *(uint32_t *)a, ret);
				refused++;
				continue;
			}
			probed++;
			hits = 0;
			for (k = 0; k < sizeof(in) / sizeof(in[0]); k++)
				if (fns[f].fn(in[k]) != want[k]) {
					printf("# %s+%#lx: input %lu wrong\n", fns[f].name,
					       a - start, in[k]);
					wrong++;
				}
			/* padding after the return is never reached */
			unhit += !hits && *(uint32_t *)a != 0xd503201fu;
			unregister_kprobe(&p);
		}
		printf("# %s: %lu bytes, %d probed, %d never reached\n", fns[f].name, size, probed,
		       unhit);
		snprintf(name, sizeof(name), "%s_all_accepted", fns[f].name);
		CHECK_EQ(refused, 0, name);
		snprintf(name, sizeof(name), "%s_results", fns[f].name);
		CHECK_EQ(wrong, 0, name);
		for (k = 0; k < sizeof(in) / sizeof(in[0]); k++)
			wrong += fns[f].fn(in[k]) != want[k];
		snprintf(name, sizeof(name), "%s_after", fns[f].name);
		CHECK_EQ(wrong, 0, name);
	}
}

static unsigned long ret_hits, ret_value, entry_hits;

static int kret_entry(struct kretprobe_instance *ri, struct pt_regs *regs)
{
	(void)ri;
	(void)regs;
	entry_hits++;
	return 0;
}

static int kret_exit(struct kretprobe_instance *ri, struct pt_regs *regs)
{
	(void)ri;
	ret_hits++;
	ret_value = regs_return_value(regs);
	return 0;
}

/* kretprobes on functions whose entry is "bti c": a leaf, and one with a call */
static void case_kretprobe(void)
{
	struct kretprobe rp = { .kp.symbol_name = "kpa_add", .handler = kret_exit,
				.entry_handler = kret_entry };
	struct kretprobe rq = { .kp.symbol_name = "kpa_bl", .handler = kret_exit };
	int ret;

	ret_hits = entry_hits = 0;
	ret = register_kretprobe(&rp);
	CHECK_EQ(ret, 0, "kretprobe_register_leaf");
	if (!ret) {
		CHECK_EQ(kpa_add(5), 8, "kretprobe_leaf_result");
		CHECK(entry_hits == 1 && ret_hits == 1 && ret_value == 8, "kretprobe_leaf",
		      "entries %lu returns %lu value %lu", entry_hits, ret_hits, ret_value);
		unregister_kretprobe(&rp);
	}
	ret_hits = 0;
	ret = register_kretprobe(&rq);
	CHECK_EQ(ret, 0, "kretprobe_register_call");
	if (!ret) {
		CHECK_EQ(kpa_bl(5), 15, "kretprobe_call_result");
		CHECK_EQ(kpa_bl(6), 16, "kretprobe_call_result2");
		CHECK(ret_hits == 2 && ret_value == 16, "kretprobe_call",
		      "returns %lu value %lu", ret_hits, ret_value);
		unregister_kretprobe(&rq);
	}
	CHECK_EQ(kpa_bl(5), 15, "kretprobe_after_unregister");

	/* on paciasp: the return address swapped before it is signed */
	ret_hits = 0;
	rq.kp.symbol_name = "kpa_pac";
	rq.kp.addr = NULL;
	ret = register_kretprobe(&rq);
	CHECK_EQ(ret, 0, "kretprobe_register_paciasp");
	if (!ret) {
		CHECK_EQ(kpa_pac(7), 17, "kretprobe_paciasp_result");
		CHECK(ret_hits == 1 && ret_value == 17, "kretprobe_paciasp",
		      "returns %lu value %lu", ret_hits, ret_value);
		unregister_kretprobe(&rq);
	}
	CHECK_EQ(kpa_pac(7), 17, "kretprobe_paciasp_after");
}

static volatile int stop;
static unsigned long worker_calls, worker_wrong;

static void *worker(void *arg)
{
	unsigned long i;

	(void)arg;
	for (i = 0; !stop && i < 50000000; i++) {
		unsigned long x = i & 0xff;

		if (kpa_add(x) != x + 3 || kpa_bcond(x & 7) != ((x & 7) < 5 ? 200UL : 100UL))
			worker_wrong++;
		if (kpa_blr(x) != x + 10)
			worker_wrong++;
		worker_calls++;
	}
	return NULL;
}

/* probes placed and removed while another thread runs the probed code */
static void case_threads(void)
{
	char *ats[] = { kpa_add_bti, kpa_add_at, kpa_bcond_at, kpa_blr_at, kpa_add_ret };
	struct kprobe ps[5];
	pthread_t t;
	int round, fails = 0;
	size_t i;

	stop = 0;
	hits = 0;
	pthread_create(&t, NULL, worker, NULL);
	while (!__atomic_load_n(&worker_calls, __ATOMIC_RELAXED))
		;
	for (round = 0; round < 200; round++) {
		for (i = 0; i < 5; i++) {
			memset(&ps[i], 0, sizeof(ps[i]));
			ps[i].addr = (kprobe_opcode_t *)ats[i];
			ps[i].pre_handler = pre;
			fails += register_kprobe(&ps[i]) != 0;
		}
		for (i = 0; i < 5; i++)
			unregister_kprobe(&ps[i]);
	}
	stop = 1;
	pthread_join(t, NULL);
	CHECK_EQ(fails, 0, "threads_registered");
	CHECK_EQ(worker_wrong, 0, "threads_results");
	printf("# %lu calls, %lu hits\n", worker_calls, hits);
	CHECK(worker_calls > 0, "threads_ran", "no call");
}

static volatile int blocker_state;

/* a thread that blocks SIGTRAP with the raw system call (no interposer sees it) */
static void *blocker(void *arg)
{
	unsigned long mask = 1UL << (SIGTRAP - 1), old;

	(void)arg;
	syscall(SYS_rt_sigprocmask, SIG_BLOCK, &mask, &old, sizeof(mask));
	blocker_state = 1;
	while (blocker_state == 1)
		usleep(1000);
	syscall(SYS_rt_sigprocmask, SIG_SETMASK, &old, NULL, sizeof(old));
	blocker_state = 3;
	while (blocker_state == 3)
		usleep(1000);
	return NULL;
}

/* Under qemu-user, whose /proc shows its own threads' masks (fhook looks at none there)? */
static bool under_emulator(void)
{
	char a[256] = "", b[256] = "", path[64];

	snprintf(path, sizeof(path), "/proc/self/task/%ld/exe", (long)syscall(SYS_gettid));
	if (readlink("/proc/self/exe", a, sizeof(a) - 1) <= 0 ||
	    readlink(path, b, sizeof(b) - 1) <= 0)
		return false;
	return strcmp(a, b) != 0;
}

/* a thread with SIGTRAP blocked would die at a brk: nothing is placed (-EBUSY) */
static void case_trap_blocked(void)
{
	struct kprobe p = { .addr = (kprobe_opcode_t *)kpa_add_at, .pre_handler = pre };
	pthread_t t;

	blocker_state = 0;
	pthread_create(&t, NULL, blocker, NULL);
	while (blocker_state != 1)
		usleep(1000);
	if (under_emulator()) {
		printf("SKIP trap_blocked_refused: qemu-user's /proc shows its own masks\n");
	} else {
		CHECK_EQ(register_kprobe(&p), -EBUSY, "trap_blocked_refused");
		CHECK_EQ(kpa_add(1), 4, "trap_blocked_nothing_placed");
	}
	blocker_state = 2;
	while (blocker_state != 3)
		usleep(1000);
	hits = 0;
	CHECK_EQ(register_kprobe(&p), 0, "trap_unblocked_register");
	CHECK(kpa_add(1) == 4 && hits == 1, "trap_unblocked_hit", "hits %lu", hits);
	unregister_kprobe(&p);
	blocker_state = 4;
	pthread_join(t, NULL);
}

/*
 * The longest SVE vectors: the signal frame's SVE record no longer fits
 * and goes to its extra space, from which sigreturn restores the Z
 * registers, so a simulated vector load must be written there too.
 */
static void case_sve_long(void)
{
	static const struct { const char *name; char *at; fn_t fn; } loads[] = {
		{ "sve_ldr_s", kpa_ldr_s_at, kpa_ldr_s },
		{ "sve_ldr_d", kpa_ldr_d_at, kpa_ldr_d },
		{ "sve_ldr_q", kpa_ldr_q_at, kpa_ldr_q },
	};
	size_t i;
	int vl = prctl(PR_SVE_GET_VL, 0, 0, 0, 0);

	if (vl < 0 || prctl(PR_SVE_SET_VL, 256, 0, 0, 0) < 0) {
		printf("SKIP sve_long: no SVE\n");
		return;
	}
	printf("# vector length %d bytes\n", prctl(PR_SVE_GET_VL, 0, 0, 0, 0) & 0xffff);
	for (i = 0; i < sizeof(loads) / sizeof(loads[0]); i++) {
		struct kprobe p = { .addr = (kprobe_opcode_t *)loads[i].at, .pre_handler = pre };
		unsigned long want = loads[i].fn(0);

		hits = 0;
		if (register_kprobe(&p)) {
			CHECK(0, loads[i].name, "register_kprobe failed");
			continue;
		}
		CHECK(loads[i].fn(0) == want && hits == 1, loads[i].name, "hits %lu", hits);
		unregister_kprobe(&p);
	}
	prctl(PR_SVE_SET_VL, vl & 0xffff, 0, 0, 0);
}

static unsigned long errno_hits;

static int count_errno(struct kprobe *p, struct pt_regs *regs)
{
	(void)p;
	(void)regs;
	__atomic_add_fetch(&errno_hits, 1, __ATOMIC_RELAXED);
	return 0;
}

/*
 * A probe on what the SIGTRAP handler itself calls (__errno_location, to
 * keep errno): met inside the handler, it runs its instruction without
 * recursing for ever, and the other probe still works.
 */
static void case_trap_path(void)
{
	struct kprobe e = { .symbol_name = "__errno_location", .pre_handler = count_errno };
	struct kprobe p = { .addr = (kprobe_opcode_t *)kpa_add_at, .pre_handler = pre };
	int ret;

	errno_hits = hits = 0;
	ret = register_kprobe(&e);
	CHECK_EQ(ret, 0, "trap_path_register");
	if (ret)
		return;
	errno = 0;
	CHECK(errno == 0 && errno_hits >= 1, "trap_path_errno_probed", "hits %lu", errno_hits);
	CHECK_EQ(register_kprobe(&p), 0, "trap_path_register_other");
	errno = 42;
	CHECK_EQ(kpa_add(2), 5, "trap_path_result");
	CHECK(errno == 42, "trap_path_errno_kept", "errno %d", errno);
	CHECK_EQ(hits, 1, "trap_path_other_hit");
	unregister_kprobe(&p);
	unregister_kprobe(&e);
	errno_hits = 0;
	errno = 0;
	CHECK_EQ(errno_hits, 0, "trap_path_unregistered");
}

static const struct check_case cases[] = {
	CHECK_CASE(unprobed),
	CHECK_CASE(classes),
	CHECK_CASE(post),
	CHECK_CASE(modify),
	CHECK_CASE(refused),
	CHECK_CASE(foreign),
	CHECK_CASE(decode),
	CHECK_CASE(sweep),
	CHECK_CASE(kretprobe),
	CHECK_CASE(threads),
	CHECK_CASE(trap_blocked),
	CHECK_CASE(trap_path),
	CHECK_CASE(sve_long),
};

int main(void)
{
	return check_run_cases(cases);
}
