/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * What each architecture implements: the downward half of the contract
 * between lib/arch/<arch>/ and generic code.
 *
 * Arch code knows instructions, text pages, trampolines and the stack;
 * it knows no ftrace_ops, objects or symbols.  Where it needs generic
 * knowledge (is this address code of a loaded object? is it a site?) it
 * asks through the hooks generic code hands it in fhook_arch_init()
 * (lib/arch/hooks.h), the only way up.  scripts/check-layers.sh checks
 * both directions in `make test`.
 *
 * A new architecture is a new folder under lib/arch/ with an arch.mk
 * naming its sources and an arch_insn.h with the inline helpers below.
 */
#ifndef FHOOK_ARCH_H
#define FHOOK_ARCH_H

#include <pthread.h>
#include <stddef.h>
#include <stdbool.h>
#include <stdint.h>
#include <fhook/ftrace.h>
#include <fhook/dyn_ftrace.h>
#include <fhook/internal/site.h>

#include "hooks.h"
/*
 * Per arch, inline (start-up and site updates test every site):
 *   FHOOK_SITE_LEN               bytes of a site's call or nop
 *   FHOOK_SITE_MAX               bytes a site may span (x86-64: a 6-byte GOT call)
 *   fhook_site_is_nop(b)         @b holds the site's nop
 *   fhook_site_is_pad(b)         @b holds the compiler's split pad (written directly)
 *   fhook_site_call_target(b,ip) target of the call at @ip, or 0
 *   FHOOK_SITE_ENTRY_MAX, fhook_site_entry_off(b)  where a site lies past a function's entry
 *   FHOOK_SITE_ADJUST_SPAN, fhook_site_adjust(rec)  the site of a compiler's record
 *   FHOOK_KPROBE_HIT_IP_OFF      the ip a kprobe's pre_handler sees, past the probed address
 *   FHOOK_ARCH_TRAP_NAME         the breakpoint instruction, as messages name it
 */
#include "arch_insn.h"
/*
 * Per arch, inline, with struct pt_regs: where a return address lives
 * (FHOOK_RET_IN_SLOT, fhook_ret_key_at_return(), fhook_ret_slot_restore(),
 * fhook_fregs_ret_ptr()) and what a kretprobe keeps of the registers
 * (struct fhook_regs_scratch).
 */
#include "arch_regs.h"

/* ---- site bytes (insn.c): the one encoder and classifier ---- */

extern const unsigned char fhook_site_nop[FHOOK_SITE_LEN];

/* Write the call from the site at @ip to @target into @buf. */
void fhook_site_encode_call(unsigned char *buf, unsigned long ip, unsigned long target);
/* Can a site at @ip call @target directly? */
bool fhook_site_in_reach(unsigned long ip, unsigned long target);

/* "aa:bb:cc" of @len bytes, cut to @size (the ftrace_bug report) */
void fhook_insn_hex(char *out, size_t size, const unsigned char *b, size_t len);

/* ---- text patching (text_poke.c) ---- */

struct text_poke_loc {
	unsigned long addr;
	unsigned char len;		/* bytes written */
	unsigned char emu_len;		/* instruction length to emulate (6 for PAD6) */
	unsigned char new[FHOOK_SITE_MAX];
	/*
	 * Where a thread that meets the int3 goes on: 0, as the new bytes
	 * would take it (a call, or past a nop); FHOOK_EMU_KPROBE, to the
	 * kprobe at this address; else this address.
	 */
	unsigned long emu_ip;
};

#define FHOOK_EMU_KPROBE	1UL

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
 * Turn the compiler's pads (five 1-byte nops) among the @nr sites at
 * @addrs[0], @addrs[@stride], ... (each plus @bias; 0: no site) into
 * 5-byte nops: ftrace_init_nop for many sites, with no list of writes
 * built.  They are written directly, since no protocol makes that safe for
 * a thread caught between two of them (which is why it happens before the
 * object's code runs, or in `fhook prepare`); each page is made writable,
 * rewritten and restored once.  With @expect_pads (the caller saw one in
 * the file) the pages of every site are made private before any is read,
 * which is cheapest when pads are what they hold; without, only pages
 * found to hold a pad are written.  Addresses outside a loaded object's
 * text are no sites and are skipped.  With @records, the addresses are the
 * compiler's records, which fhook_site_adjust() turns into sites; else
 * they are sites.  Call with text_mutex held.  Returns
 * how many sites hold neither a pad nor a nop (left to the caller: -pg
 * calls, foreign bytes), or -EPERM.
 */
long fhook_text_init_pads(const unsigned long *addrs, size_t stride, size_t nr,
			  unsigned long bias, bool expect_pads, bool records);

void fhook_text_lock(void);
void fhook_text_unlock(void);
/*
 * text_mutex itself, for fhook_assert_held() (lib/util/lockdep.h) where
 * code relies on its caller holding it.
 */
pthread_mutex_t *fhook_text_mutex(void);

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
 * One stub: a few bytes of code near the sites that load this data slot
 * and jump to its trampoline.  A slot belongs to one owner forever (an
 * opaque cookie of generic code, one per registration of an ftrace_ops,
 * never an address that memory can be given again), and is never reused
 * for another: a thread stalled between a site's call and the trampoline
 * must find its registration's handler, or once that is gone, none.
 */
struct fhook_stub {
	void *tramp;			/* one of the trampolines below */
	void *data;			/* the handler's third argument; NULL: slow path */
	ftrace_func_t func;
	unsigned long code;		/* address of the stub's code */
	const void *owner;		/* the owner of this slot, forever */
	/*
	 * For the graph trampolines that read no ops (the records' and the
	 * frameless ones): the owner's struct fhook_fgraph while bound to
	 * one of them, else one of no kind (shadow.h FGRAPH_TRAMP_*), never
	 * NULL.  Stored before tramp, so a thread that jumps through the new
	 * trampoline reads it.
	 */
	const void *grec;
	/*
	 * What every site that calls this stub reads of the registers a
	 * trampoline saves (fhook_arch_site_class()), forever as the owner.
	 */
	unsigned int cls;
	unsigned int pad32;
	/*
	 * What a per-ops copy (x86-64 gen.c) calls, with data as its ops:
	 * the handler while bound, else one that does nothing (stored before
	 * data is cleared: a copy loads data first).
	 */
	void *copy_func;
};

struct fhook_stub_region;

/* Which trampoline a stub jumps to. */
enum fhook_tramp_kind {
	FHOOK_TRAMP_ARGS,		/* argument registers only */
	FHOOK_TRAMP_REGS,		/* every register (FTRACE_OPS_FL_SAVE_REGS) */
};

/* Stubs within reach of code in [@lo, @hi).  NULL: out of memory. */
struct fhook_stub_region *fhook_region_near(unsigned long lo, unsigned long hi);
/*
 * The stub of @owner for sites of class @cls in @r, made if needed.  NULL:
 * out of memory, or no stub left in that place (its sites call the list
 * stub then).
 */
struct fhook_stub *fhook_stub_get(struct fhook_stub_region *r, const void *owner,
				  unsigned int cls);

/*
 * What the function of the site at @ip reads, after the site, of the
 * registers a trampoline saves, as a class of the arch's (a frameless
 * fprobe entry saves only those); 0: anything, the class every stub
 * handles.  Decodes the function: ask only for sites that can use it.
 * @is_site tells where other sites are (a jump there is taken as a call:
 * what is hooked there later may read anything).
 */
unsigned int fhook_arch_site_class(unsigned long ip, bool (*is_site)(unsigned long));
/*
 * Can fhook_arch_site_class() tell (its decoder loaded)?  Else ask it
 * nothing: every class would be 0.  _prepare() loads the decoder, before
 * any lock is taken (loading an object takes the loader's).
 */
bool fhook_arch_site_class_ready(void);
void fhook_arch_site_class_prepare(void);
/* The stub that calls the list function (hooks->list_func). */
struct fhook_stub *fhook_stub_list(struct fhook_stub_region *r);
/* The stub whose code is at @code, if any. */
struct fhook_stub *fhook_stub_of_code(unsigned long code);

/* fhook_stub_set() flags */
#define FHOOK_TRAMP_NOSSE	0x1	/* the handler leaves xmm0-7 alone: not saved */
#define FHOOK_TRAMP_C		0x2	/* through the C dispatcher (tests, TSan builds) */
#define FHOOK_TRAMP_FGRAPH	0x4	/* the handler's data is a struct fhook_fgraph */
#define FHOOK_TRAMP_GRAPH_REC	0x8	/* ... whose records the trampolines write */
#define FHOOK_TRAMP_GEN		0x10	/* a trampoline made for this handler (no IPMODIFY) */
#define FHOOK_TRAMP_GRAPH_EXIT	0x20	/* ... whose returns are hooked (FGRAPH_FL_EXIT) */
#define FHOOK_TRAMP_LEAN	0x40	/* ... whose entry handler is proven: no frame */
#define FHOOK_TRAMP_GRAPH_DATA	0x80	/* ... whose handlers take entry data (FGRAPH_FL_DATA) */
#define FHOOK_TRAMP_LEAN_FREGS	0x100	/* ... and the proven entry handler reads its fregs */
#define FHOOK_TRAMP_LEAN_BARE	0x400	/* ... and may be served bare (fhook_fgraph.bare) */
/* an ops' handler proven to read no fregs: its copy (GEN) needs build none */
#define FHOOK_TRAMP_OPS_LEAN	0x200
/*
 * an IPMODIFY ops' handler proven (FHOOK_FREGS_IPMOD): a copy made for
 * its shape (gen.c) builds only the words of ftrace_regs it reads and the
 * ip, saves only what it may change, and returns where it left the ip
 */
#define FHOOK_TRAMP_IPMOD	0x800

/*
 * Point @s at @func with @data, through a trampoline of @kind; with @func
 * NULL, unbind it: its calls go to the list function.  A trampoline
 * counts the thread in util/tasks.h's word while it calls the handler, so
 * fhook_tasks_synchronize() after unbinding waits out every call that
 * could still reach @func.
 */
void fhook_stub_set(struct fhook_stub *s, enum fhook_tramp_kind kind, unsigned int flags,
		    ftrace_func_t func, void *data);
/*
 * fhook_stub_set() on every stub of @owner; with @code (and @func), its
 * fhook_stub_set_direct().
 */
void fhook_stubs_set(const void *owner, enum fhook_tramp_kind kind, unsigned int flags,
		     ftrace_func_t func, void *data, void *code);

/*
 * Point @s at generated code (a direct trampoline, below) that runs
 * instead of a trampoline and handler.  @func and @data are what a
 * thread that took the stub's trampoline a moment before calls, as with
 * fhook_stub_set().  Unbinding with fhook_stub_set(func NULL) sends the
 * stub back through the list function.
 */
void fhook_stub_set_direct(struct fhook_stub *s, void *code, ftrace_func_t func, void *data);

/* ---- direct trampolines (direct.c) ---- */

/*
 * A caller range of a direct trampoline: calls whose return address lies
 * in [start, start + size) go to @target (0: return @retval at once).
 */
struct fhook_direct_route {
	unsigned long start, size;
	unsigned long target;
	unsigned long retval;
};

#define FHOOK_DIRECT_MAX_SKIP		8
#define FHOOK_DIRECT_MAX_ROUTES		7

struct fhook_direct;

/*
 * Code that sends a call to the first of @routes whose range
 * holds its return address, or to the function's body (@site_ret, where
 * the site's call returns) when none does or one of @skip does.  Made
 * once per function and shape and never unmapped; getting it again for
 * the same function and shape rewrites its data, so only while no stub
 * leads to it.
 * NULL: too many ranges, or out of memory.
 */
struct fhook_direct *fhook_direct_get(unsigned long site_ret,
				      const struct fhook_direct_route *skip, unsigned int nr_skip,
				      const struct fhook_direct_route *routes,
				      unsigned int nr_routes);
void *fhook_direct_code(const struct fhook_direct *d);
/* Calls route @i took since the last get; @i == nr_routes: no route. */
unsigned long fhook_direct_count(const struct fhook_direct *d, unsigned int i);
/*
 * After no stub leads to @d any more and a grace period (or when it was
 * never published): every route goes to the function's body, for a
 * thread still inside the code, and the code may serve again.
 */
void fhook_direct_retire(struct fhook_direct *d);

/* Where ftrace_override_function_with_return() sends a call: "ret". */
extern char fhook_just_return[];

/* ---- return hooks (rethook_tramp.S, rethook.c) ---- */

/*
 * Where a hooked return goes: the shared return trampoline, which calls
 * the handler handed over with fhook_arch_rethook_init() and returns to
 * the address it gives back.
 */
extern char rethook_trampoline[];
/* ... and the one of entries the graph trampolines made for graph records */
extern char rethook_rec_trampoline[];

/*
 * Fill @code with @nr lines of FHOOK_RETHOOK_STUB_SIZE bytes, each with
 * a stub going to rethook_trampoline and one to rethook_rec_trampoline
 * (arch/shadow.h); stub 0 is never entered.
 */
void fhook_rethook_stubs_write(unsigned char *code, size_t nr);

/*
 * The .eh_frame (a CIE and one FDE) that describes [@start, @start +
 * @len), a range of stubs, to unwinders: the frame at a stub is its
 * caller's, with the real return address at *(slot) + @ret_off, and
 * @personality as the personality routine.  Returns the bytes written
 * (at most FHOOK_RETHOOK_EH_FRAME_MAX), 0 if @size is too small.
 */
size_t fhook_rethook_eh_frame(unsigned char *buf, size_t size, unsigned long start,
			      unsigned long len, void *personality, unsigned long ret_off);

/* ---- longjmp (longjmp.S, longjmp.c) ---- */

/*
 * libfhook interposes longjmp, _longjmp, siglongjmp and __longjmp_chk:
 * each tells the hook handed over with fhook_arch_longjmp_init() the
 * stack pointer the jump restores, then jumps on to libc's function with
 * its own frame gone (see lib/arch/hooks.h).
 */

/* ---- counted redirects (redirect.S) ---- */

#define FHOOK_REDIRECT_DEPTH	8

struct fhook_redirect {
	unsigned long target;
	long *inflight;
};

/*
 * A thread's pending redirects: a handler pushes one and points the ip at
 * fhook_redirect_thunk, which pops it, decrements *inflight (the last
 * touch of the owner's memory) and jumps to the target with every
 * argument register intact.  A stack, not one slot: a signal handler may
 * call a redirected function from inside the thunk's caller.
 */
struct fhook_redirect_stack {
	unsigned int depth;
	unsigned int pad;
	struct fhook_redirect e[FHOOK_REDIRECT_DEPTH];
};

extern __thread struct fhook_redirect_stack fhook_redirect_tls
	__attribute__((tls_model("initial-exec")));
extern char fhook_redirect_thunk[];

/* ---- instruction decoding (branches.c) ---- */

struct fhook_branch_scan {
	unsigned long call_at;		/* the first call that reaches a target, or 0 */
	unsigned long jump_at;		/* the first jump that does (a tail call), or 0 */
	int indirect;			/* calls through registers: unknowable */
};

/*
 * Decode the function at [@start, @start + @size) and find its calls and
 * jumps to any of the @nr @targets, directly or through a PLT stub or GOT
 * slot.  Returns 0, -ENOSYS when no decoder can be loaded (said on
 * stderr once), or -ENOMEM.
 */
int fhook_insn_scan_branches(unsigned long start, unsigned long size,
			     const unsigned long *targets, int nr,
			     struct fhook_branch_scan *out);

/*
 * ---- a kprobe's placement read from a file, for the command (kprobe_file.c,
 * linked into the fhook command only: `fhook funcs --why`, and whether an
 * event's FUNC+OFF is an instruction's start) ----
 */
struct fhook_kprobe_file_req {
	unsigned long addr;		/* the probe (link-time address) */
	unsigned long start, size;	/* its function; @size: the bytes @code holds of it */
	bool size_known;		/* else @size is only what the file holds, up to 16 */
	const unsigned char *code;	/* the function's bytes from the file, and @pad more */
	unsigned int pad;		/* bytes after the function that no symbol holds */
	/* @len bytes at @addr of the file (jump tables); false if not there */
	bool (*read)(void *ctx, unsigned long addr, void *buf, size_t len);
	void *ctx;
};

/*
 * How a kprobe at @req->addr == @req->start would be placed in a process:
 * FHOOK_KPROBE_JUMP, FHOOK_KPROBE_TRAP (@why, if it was empty, says why
 * not a jump, or stays empty where the arch places no jumps), 0 when no
 * probe can be placed (@why says why), -ENOSYS when no decoder can be
 * loaded (said on stderr).
 */
int fhook_kprobe_file_how(const struct fhook_kprobe_file_req *req, char *why, size_t why_size);

/* -EILSEQ when @req->addr is not the start of an instruction of its function, else 0. */
int fhook_kprobe_file_boundary(const struct fhook_kprobe_file_req *req);

/*
 * ---- kprobes (kprobe.c, kprobe_insn.c, kprobe_tramp.S) ----
 *
 * Said for x86-64; aarch64 places no jumps (every slot is a trap: a brk on
 * the probed word, its instruction run out of line or simulated) and
 * refuses with -EILSEQ what a trap cannot take (lib/arch/aarch64/kprobe_insn.c).
 */

enum fhook_kprobe_how {
	FHOOK_KPROBE_JUMP = 1,		/* a jmp to a detour with the relocated code */
	FHOOK_KPROBE_TRAP,		/* an int3; the instruction runs out of line */
};

/*
 * The code of one probed address: made once, never freed or changed (a
 * thread may be anywhere in it long after the probe is gone), and found
 * again when the address is probed again.
 */
struct fhook_kprobe_slot {
	unsigned long addr;
	void *cookie;			/* generic code's record of the address */
	unsigned long entry;		/* calls the handlers, then @resume */
	unsigned long resume;		/* the relocated copy: runs as @addr would */
	bool post;			/* made for a post_handler: int3s at the copy's exits */
	unsigned char nr_exits;
	struct fhook_kprobe_exit {
		unsigned long at;	/* its int3, in the copy */
		unsigned long ip;	/* where the instruction went (ret, jmp *: read then) */
		unsigned long resume;	/* where the thread goes on */
		unsigned short imm;	/* ret imm16 */
		unsigned char kind;	/* KPROBE_EXIT_* (arch) */
	} exits[3];
	unsigned int covered;		/* bytes of instructions the copy holds */
	int can;			/* FHOOK_KPROBE_JUMP if a jump may be placed */
	int armed;			/* how it is placed now, 0: not */
	unsigned int gen;		/* arms so far: a trap that finds it disarmed tells
					   a trap placed since from someone else's */
	bool in_use;			/* handed out and not yet disarmed */
	bool keep_trap;			/* a thread was inside: a trap this time */
	bool for_neighbour;		/* a trap because a probe is inside its jump */
	struct fhook_kprobe_slot *made;	/* every slot ever made, for good */
	unsigned char orig[16];		/* the bytes at @addr before any probe */
	char why[96];			/* why no jump ("" if none was refused) */
	/*
	 * A jump over more than one instruction: where another tool's
	 * breakpoint at @addr (a uprobe, which steps the file's first
	 * instruction) lets the thread go on, and the copy of the second.
	 */
	unsigned long after_first, second;
	bool given_back;		/* the bytes went back to the function (kprobe.c) */
};

/*
 * Load what relocating needs (capstone) now: its dlopen() must not happen
 * under text_mutex.  Call with no lock held; false if it cannot be loaded.
 */
bool fhook_kprobe_arch_ready(void);

/*
 * The slot for a probe at @addr in the function [@start, @start + @size)
 * (@size 0: unknown; @pad bytes after it belong to no symbol, which a
 * short function's jump may cover when they are padding), made if
 * needed: a jump when @jump and the bytes allow it, else a trap (@post:
 * int3s at its exits for a post_handler).  @cookie is what the hit hook gets.
 * No jump covers another probe in use (that probe would be skipped): a
 * probe whose jump covers @addr becomes a trap, as the kernel unoptimizes
 * it, and its new slot is in @retrapped (its cookie says whose).  Call
 * with text_mutex held.  Returns 0, -EILSEQ (not even one instruction can
 * be moved; @why says why), -EBUSY (its slot is placed, or the probe whose
 * jump covers @addr cannot become a trap), -ENOSYS (no capstone) or
 * -ENOMEM.
 */
int fhook_kprobe_slot_get(unsigned long addr, unsigned long start, unsigned long size,
			  unsigned int pad, bool jump, bool post, void *cookie, struct fhook_kprobe_slot **slotp,
			  struct fhook_kprobe_slot **retrapped, char *why, size_t why_size);

/*
 * Place @nr slots' probes: an int3 on each, then, once no thread is
 * stopped inside the bytes it replaces, each jump (a slot whose bytes a
 * thread keeps being inside of stays a trap; its @why says so).  Call
 * with text_mutex held.  0, -EBUSY (a thread has SIGTRAP blocked) or
 * -EPERM.
 */
int fhook_kprobe_arm(struct fhook_kprobe_slot **slots, size_t nr);
/*
 * Put the original bytes back where the probes' bytes still are (a slot
 * whose bytes changed, its object unloaded, is only forgotten).  Threads
 * may still run in the slots' code.
 */
int fhook_kprobe_disarm(struct fhook_kprobe_slot **slots, size_t nr);
/* Forget @nr slots whose object was unloaded: nothing is written. */
void fhook_kprobe_forget(struct fhook_kprobe_slot **slots, size_t nr);

/* The original bytes of [@addr, @addr + @len) into @buf, under any probe. */
int fhook_kprobe_read_orig(unsigned long addr, unsigned char *buf, size_t len);

/* What another tool left where code differs from its file (kprobes.c names it in a refusal). */
enum fhook_kprobe_foreign {
	FHOOK_FOREIGN_CODE,	/* other bytes */
	FHOOK_FOREIGN_TRAP,	/* a breakpoint: a uprobe's, a debugger's */
	FHOOK_FOREIGN_JUMP,	/* a jump or call: a patch */
};
/* Of the @len bytes @mem read at a probe's place, the one at @i differs from the file's. */
enum fhook_kprobe_foreign fhook_kprobe_foreign_kind(const unsigned char *mem, size_t len,
						    size_t i);

/* for tests and bench */
struct fhook_kprobe_stats {
	unsigned long traps;		/* trap probes hit */
	unsigned long kept_trap;	/* jumps not placed: a thread inside */
	unsigned long stepped_over;	/* calls another tool's breakpoint took (not probed) */
};
void fhook_kprobe_stats(struct fhook_kprobe_stats *st);

/*
 * Is the handler at @func known to leave the vector registers alone (a
 * leaf that names none of them and only loads from its fregs)?
 * fhook_arch_handler_scan() finds out (from its object's notes, or by
 * decoding it when libcapstone is loaded) and remembers; call it before
 * taking locks.  fhook_arch_handler_vec_free() only asks what was
 * remembered: how many bytes from @func were proven (none of them may
 * hold a site, which could call anything once enabled), if what the
 * handler reads of its fregs is what a trampoline of @kind gives it; 0
 * for a handler never scanned, in doubt, or reading more.
 */
enum fhook_fregs_kind {
	FHOOK_FREGS_NOSSE,	/* a struct ftrace_regs without its vector part */
	FHOOK_FREGS_ARGS,	/* the argument registers only (frameless fprobe entry) */
	FHOOK_FREGS_RETVAL,	/* the return values only (frameless fprobe return) */
	FHOOK_FREGS_IPMOD,	/* pt_regs and fhook_full, the ip read back (IPMODIFY copies) */
};
void fhook_arch_handler_scan(void *func);
/*
 * ... and, when its object's notes do not prove it, decoded even if that
 * loads libcapstone now (an IPMODIFY ops' handler: the copy it may get
 * saves five times what the load costs after a few thousand calls).
 */
void fhook_arch_handler_scan_decode(void *func);
size_t fhook_arch_handler_vec_free(void *func, enum fhook_fregs_kind kind);
/* Does the proven handler at @func read its fregs at all? */
bool fhook_arch_handler_reads_fregs(void *func);

/*
 * Might the handler at @func read one of the argument registers of
 * @args (bit i: argument i, i < 6) before it writes it?  True whenever
 * the decoder is not loaded, or it cannot tell.
 */
bool fhook_arch_handler_reads_args(void *func, unsigned int args);
/*
 * A kprobe is about to be placed at @addr: no handler with it among the
 * bytes proven is proven any more, nor will be.  True when one was.
 */
bool fhook_arch_handler_unprove(unsigned long addr);

#endif /* FHOOK_ARCH_H */
