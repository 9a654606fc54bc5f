/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * x86-64 internals: instruction bytes, text patching, stubs, trampolines.
 */
#ifndef FHOOK_ARCH_H
#define FHOOK_ARCH_H

#include <stddef.h>
#include <stdbool.h>
#include <stdint.h>
#include <fhook/ftrace.h>
#include <fhook/dyn_ftrace.h>

#define INT3_INSN_OPCODE	0xcc
#define CALL_INSN_OPCODE	0xe8
#define CALL_INSN_SIZE		5

/* ---- instruction bytes (insn.c) ---- */

extern const unsigned char fhook_nop5[5];

/* Inline: start-up and site updates test every site. */
static inline bool fhook_insn_is_nop5(const unsigned char *b)
{
	uint32_t w;

	/* 0f 1f 44 00: clang writes the same nop with a non-zero displacement */
	__builtin_memcpy(&w, b, 4);
	return w == 0x00441f0fu;
}

/* five 1-byte nops */
static inline bool fhook_insn_is_pad5(const unsigned char *b)
{
	uint32_t w;

	__builtin_memcpy(&w, b, 4);
	return w == 0x90909090u && b[4] == 0x90;
}
void fhook_insn_call(unsigned char *buf, unsigned long ip, unsigned long target);
/* Target of "call rel32" in @b at @ip, or 0 if @b is no such call. */
unsigned long fhook_insn_call_target(const unsigned char *b, unsigned long ip);
bool fhook_call_in_reach(unsigned long ip, unsigned long target);
void fhook_insn_hex(char *out, size_t size, const unsigned char *b, size_t len);

/* ---- the arch functions' helpers (ftrace.c) ---- */

struct text_poke_loc;

/* Print the kernel's ftrace_bug() report for the site at @ip (in @obj). */
struct fhook_object;
void fhook_ftrace_bug(int err, unsigned long ip, const unsigned char *expected,
		      const unsigned char *actual, size_t len)
	__attribute__((visibility("hidden")));
void fhook_ftrace_bug_obj(struct fhook_object *obj, int err, unsigned long ip,
			  const unsigned char *expected, const unsigned char *actual, size_t len)
	__attribute__((visibility("hidden")));

/*
 * What ftrace_init_nop must write at @rec, given the @cur bytes (6) there.
 * Returns 1 and fills @loc when a write is needed, 0 when the site is
 * already a nop, -EINVAL for bytes that are no known pad.
 */
int fhook_init_nop_prepare(struct dyn_ftrace *rec, const unsigned char *cur,
			   struct text_poke_loc *loc) __attribute__((visibility("hidden")));

/* ---- text patching (text_poke.c) ---- */

struct text_poke_loc {
	unsigned long addr;
	unsigned char len;		/* bytes written */
	unsigned char emu_len;		/* instruction length to emulate (6 for PAD6) */
	unsigned char new[6];
};

/*
 * Copy @len bytes of code at @addr; -EFAULT if they are not mapped.
 * Safe on any address.
 */
int fhook_text_read(unsigned long addr, void *buf, size_t len);

/*
 * Apply @nr writes with the int3 protocol: three serializations for the
 * whole batch.  @locs is sorted in place.  Call with text_mutex held
 * (fhook_text_lock()).  Returns 0 or -EPERM; on -EPERM no site is left
 * holding an int3: every site holds either its old or its new bytes.
 */
int fhook_text_poke_batch(struct text_poke_loc *locs, size_t nr);

/*
 * Turn the compiler's pads (five 1-byte nops, each loc 5 bytes) into
 * 5-byte nops: ftrace_init_nop for many sites.  They are written
 * directly, since no protocol makes that safe for a thread caught between
 * two of them (which is why it happens before the object's code runs, or
 * in `fhook prepare`); each page is made writable, rewritten and restored
 * once.  -pg calls go through fhook_text_poke_batch().  Sorts @locs; call
 * with text_mutex held.  Returns 0 or -EPERM.
 */
int fhook_text_poke_init(struct text_poke_loc *locs, size_t nr);

void fhook_text_lock(void);
void fhook_text_unlock(void);

/* Serialize the instruction stream of every thread of the process. */
void fhook_sync_core(void);

/* Install the SIGTRAP handler, chaining to whatever was there. */
void fhook_trap_install(void);

/* counters, for tests and bench */
struct fhook_poke_stats {
	unsigned long batches;
	unsigned long syncs;
	unsigned long writes;
	unsigned long traps_emulated;
	unsigned long traps_rewound;
	int procmem;			/* writes went through /proc/self/mem */
};
void fhook_poke_stats(struct fhook_poke_stats *st);

/* ---- stubs (stubs.c) ---- */

/*
 * One stub: 16 bytes of code near the sites ("lea slot(%rip), %r11;
 * jmp *slot->tramp") and this data slot.  Slots are never freed or reused
 * for another ops: a thread stalled between a site's call and the
 * trampoline's read-side lock must still find the ops it was headed for.
 */
struct fhook_stub {
	void *tramp;			/* fhook_tramp_args or fhook_tramp_regs */
	struct ftrace_ops *ops;		/* NULL: the list function decides */
	ftrace_func_t func;
	unsigned long code;		/* address of the stub's code */
	struct ftrace_ops *owner;	/* the ops this slot belongs to, forever */
	unsigned long pad[3];
};

struct fhook_stub_region;

struct fhook_stub_region *fhook_region_near(unsigned long lo, unsigned long hi);
/* The stub calling the list function, or @ops' own.  NULL: out of memory. */
struct fhook_stub *fhook_stub_get(struct fhook_stub_region *r, struct ftrace_ops *ops);
struct fhook_stub *fhook_stub_list(struct fhook_stub_region *r);
/* The stub whose code is at @code, if any. */
struct fhook_stub *fhook_stub_of_code(unsigned long code);
/*
 * Bind every stub of @ops to it (handler and trampoline as its flags say),
 * or with @ops NULL... unbind them: their sites then go through the list
 * function, which no longer finds the ops.
 */
void fhook_stubs_bind(struct ftrace_ops *owner, bool bind);

/* ---- trampolines (trampoline.S) ---- */

extern char fhook_tramp_args[], fhook_tramp_regs[], fhook_just_return[];
/* The same with the dispatch inlined; used when urcu-bp has sys_membarrier. */
extern char fhook_tramp_args_fast[], fhook_tramp_regs_fast[];

/* Called by the trampolines: in dispatch.c */
void fhook_dispatch(unsigned long ip, unsigned long parent_ip, struct fhook_stub *stub,
		    struct ftrace_regs *fregs) __attribute__((visibility("hidden")));

#endif /* FHOOK_ARCH_H */
