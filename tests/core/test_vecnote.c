// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * Handlers proven at build time: this program is built with fhook's flags
 * (`fhook cflags`, the assembler front end), which lists the functions
 * that leave the vector registers alone in a note of the object.  An ops
 * whose handler is listed, and whose bytes in the process still hash as
 * the note says, gets the trampoline that saves no xmm register, with no
 * decoder loaded; every other handler keeps the save.  The traced
 * function's floating-point arguments arrive intact either way.
 *
 * FHOOK_SAVE_ALL_ARGS=1 (set below) keeps every site saving every
 * argument register, so that nothing else loads the decoder.
 *
 * "test_vecnote tampered": tests/core/test_vecnote.sh changed an immediate
 * of counting_handler in a copy of the program after it was built, so its
 * bytes are no longer the proven ones: its save stays.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include <fhook/fhook.h>
#include <fhook/kprobes.h>

#include "../check.h"

/* no site of its own: a handler is built notrace */
#define NOTRACE __attribute__((noinline, patchable_function_entry(0, 0), \
			       no_sanitize("address", "thread", "undefined")))

static long calls;

NOINLINE double fsum(double a, double b, double c, double d, double e, double f, double g,
		     double h)
{
	__asm__ volatile("");	/* not pure: every call is made */
	return a + 2 * b + 3 * c + 4 * d + 5 * e + 6 * f + 7 * g + 8 * h;
}

static NOTRACE void empty_handler(unsigned long ip, unsigned long parent_ip,
				  struct ftrace_ops *op, struct ftrace_regs *fregs)
{
	__asm__ volatile("");
}

/* a relocated field in it (the counter's address): masked in the hash */
NOTRACE void counting_handler(unsigned long ip, unsigned long parent_ip, struct ftrace_ops *op,
			      struct ftrace_regs *fregs)
{
	__asm__ volatile("addq $0x5a5a5a, %0" : "+m"(calls));
}

/* a branch inside: both ways are looked at */
static NOTRACE void branching_handler(unsigned long ip, unsigned long parent_ip,
				      struct ftrace_ops *op, struct ftrace_regs *fregs)
{
	if (ip == (unsigned long)fsum)
		__asm__ volatile("addq $0x5a5a5a, %0" : "+m"(calls));
	else
		__asm__ volatile("subq $1, %0" : "+m"(calls));
}

/* floating point: never listed */
static volatile double scale = 2.5;
static NOTRACE void float_handler(unsigned long ip, unsigned long parent_ip,
				  struct ftrace_ops *op, struct ftrace_regs *fregs)
{
	calls += (long)(scale * 0x5a5a5a / 2.5);
}

/* the clobbering behind a branch the call takes */
static NOTRACE void branch_clobber_handler(unsigned long ip, unsigned long parent_ip,
					   struct ftrace_ops *op, struct ftrace_regs *fregs)
{
	__asm__ volatile("addq $0x5a5a5a, %0" : "+m"(calls));
	if (ip == (unsigned long)fsum)
		__asm__ volatile("pcmpeqd %%xmm0, %%xmm0\n\tpcmpeqd %%xmm7, %%xmm7"
				 ::: "xmm0", "xmm7");
}

/*
 * Loads from its fregs: proven when they are of words the trampoline
 * fills in (the registers), not of its vector part, which one that saves
 * no vector register leaves as it was
 */
static NOTRACE void fregs_handler(unsigned long ip, unsigned long parent_ip,
				  struct ftrace_ops *op, struct ftrace_regs *fregs)
{
	/* the fields, not the accessors: a sanitized build would call those */
	if (fregs->regs.ip == ip + 5 && fregs->regs.sp)
		__asm__ volatile("addq $0x5a5a5a, %0" : "+m"(calls));
}

static NOTRACE void fregs_xmm_handler(unsigned long ip, unsigned long parent_ip,
				      struct ftrace_ops *op, struct ftrace_regs *fregs)
{
	calls += (*(volatile unsigned long *)fregs->fhook_vregs[0] != 0) * 0x5a5a5a;
}

static NOINLINE void count_call(void)
{
	__asm__ volatile("addq $0x5a5a5a, %0" : "+m"(calls));
}

/* a call: what it reaches is not looked at */
static NOTRACE void calling_handler(unsigned long ip, unsigned long parent_ip,
				    struct ftrace_ops *op, struct ftrace_regs *fregs)
{
	count_call();
	__asm__ volatile("");
}

/* vector-free, but with a site of its own: a redirect of it could run anything */
static void site_handler(unsigned long ip, unsigned long parent_ip, struct ftrace_ops *op,
			 struct ftrace_regs *fregs)
{
	__asm__ volatile("addq $0x5a5a5a, %0" : "+m"(calls));
}

/*
 * Written by hand (an object's assembly may put a relocation anywhere):
 * bytes the linker fills in that are no operand.  As assembled, ".long"
 * of an undefined symbol is four zero bytes, which decode as two plain
 * "add %al, (%rax)"; linked (--defsym vecnote_magic=0xc3c0570f), they are
 * "xorps %xmm0, %xmm0; ret" (the program is linked -no-pie for an absolute
 * 32-bit value).  It must not be proven.
 */
__asm__(".text\n"
	".type vn_reloc_insn, @function\n"
	"vn_reloc_insn:\n"
	"	.long vecnote_magic\n"
	"	ret\n"
	".size vn_reloc_insn, .-vn_reloc_insn\n"
	/*
	 * A proven function whose relocated displacement the linker rewrites
	 * with its opcode (a GOT load relaxed into an lea) ...
	 */
	".type vn_got_load, @function\n"
	"vn_got_load:\n"
	"	movq vn_global@GOTPCREL(%rip), %rax\n"
	"	xorl %eax, %eax\n"
	"	ret\n"
	".size vn_got_load, .-vn_got_load\n"
	/*
	 * ... and one with the same bytes but the three before that field
	 * (not proven itself): it clobbers xmm0.  Only an operand field may
	 * differ from a proven function's bytes.
	 */
	".type vn_got_twin, @function\n"
	"vn_got_twin:\n"
	"	movq %rax, %xmm0\n"
	"	xchg %ax, %ax\n"
	"	xorl %eax, %eax\n"
	"	ret\n"
	".size vn_got_twin, .-vn_got_twin\n"
	/*
	 * A "ret" to an address of its own pushing: it returns through code
	 * that clobbers xmm0 and xmm7, which no branch of it names.
	 */
	".type vn_pushret, @function\n"
	"vn_pushret:\n"
	"	leaq vn_pushret_clob(%rip), %rax\n"
	"	pushq %rax\n"
	"	ret\n"
	".size vn_pushret, .-vn_pushret\n"
	"vn_pushret_clob:\n"
	"	pcmpeqd %xmm0, %xmm0\n"
	"	pcmpeqd %xmm7, %xmm7\n"
	"	ret\n"
	/* a frame of its own, as gcc keeps one with frame pointers: proven */
	".type vn_framed, @function\n"
	"vn_framed:\n"
	"	pushq %rbp\n"
	"	movq %rsp, %rbp\n"
	"	pushq %rbx\n"
	"	movq $1, -16(%rbp)\n"
	"	popq %rbx\n"
	"	popq %rbp\n"
	"	ret\n"
	".size vn_framed, .-vn_framed\n");
void vn_reloc_insn(unsigned long ip, unsigned long parent_ip, struct ftrace_ops *op,
		   struct ftrace_regs *fregs);
void vn_got_twin(unsigned long ip, unsigned long parent_ip, struct ftrace_ops *op,
		 struct ftrace_regs *fregs);
void vn_pushret(unsigned long ip, unsigned long parent_ip, struct ftrace_ops *op,
		struct ftrace_regs *fregs);
void vn_framed(unsigned long ip, unsigned long parent_ip, struct ftrace_ops *op,
	       struct ftrace_regs *fregs);
long vn_global;

/* Registered on fsum: which trampoline, and the arguments still right. */
static void run(ftrace_func_t func, const char *name, int saves, long per_call)
{
	struct ftrace_ops ops = { .func = func };
	volatile double r;
	char n[64];
	int got, i;

	calls = 0;
	snprintf(n, sizeof(n), "%s_register", name);
	CHECK_EQ(ftrace_set_filter_ip(&ops, (unsigned long)fsum, 0, 1) ||
		 register_ftrace_function(&ops), 0, n);
	got = fhook_ops_saves_vectors(&ops);
	snprintf(n, sizeof(n), "%s_saves_vectors", name);
	CHECK(got == saves, n, "%d, expected %d", got, saves);
	/* more than once: a thread's first call may take another way */
	for (i = 0; i < 3; i++) {
		r = fsum(1, 2, 3, 4, 5, 6, 7, 8);
		snprintf(n, sizeof(n), "%s_args_intact_%d", name, i);
		CHECK(r == 204.0, n, "%g, expected 204", r);
	}
	snprintf(n, sizeof(n), "%s_handler_ran", name);
	CHECK(calls == 3 * per_call, n, "%ld, expected %ld", calls, 3 * per_call);
	unregister_ftrace_function(&ops);
	ftrace_free_filter(&ops);
}

/*
 * A kprobe inside a handler whose trampoline saves no xmm register could
 * send it anywhere (here to code that clobbers xmm0 and xmm7): refused
 * while its ops is registered; placed once it is not, and the handler is
 * then not proven again, so registering its ops again keeps the save.
 */
NOTRACE void kp_target_handler(unsigned long ip, unsigned long parent_ip, struct ftrace_ops *op,
			       struct ftrace_regs *fregs)
{
	__asm__ volatile("addq $0x5a5a5a, %0" : "+m"(calls));
}

static NOINLINE void kp_clobber(unsigned long ip, unsigned long parent_ip,
				struct ftrace_ops *op, struct ftrace_regs *fregs)
{
	__asm__ volatile("addq $1, %0" : "+m"(calls));
	__asm__ volatile("pcmpeqd %%xmm0, %%xmm0\n\tpcmpeqd %%xmm7, %%xmm7" ::: "xmm0", "xmm7");
}

/* the target of a probe inside a proven handler: its last instruction */
__asm__(".text\n"
	".type vn_kp_target, @function\n"
	"vn_kp_target:\n"
	"	addq $1, vn_global(%rip)\n"
	".globl vn_kp_target_ret\n"
	"vn_kp_target_ret:\n"
	"	ret\n"
	".size vn_kp_target, .-vn_kp_target\n");
void vn_kp_target(unsigned long ip, unsigned long parent_ip, struct ftrace_ops *op,
		  struct ftrace_regs *fregs);
extern char vn_kp_target_ret[];

static NOTRACE void kp_flagged_handler(unsigned long ip, unsigned long parent_ip,
				       struct ftrace_ops *op, struct ftrace_regs *fregs)
{
	__asm__ volatile("addq $0x5a5a5a, %0" : "+m"(calls));
}

static int kp_redirect(struct kprobe *p, struct pt_regs *regs)
{
	regs->ip = (unsigned long)kp_clobber;
	return 1;
}

static void kprobe_on_handler(void)
{
	struct ftrace_ops ops = { .func = kp_target_handler };
	struct ftrace_ops inner = { .func = vn_kp_target };
	struct ftrace_ops flagged = { .func = kp_flagged_handler,
				      .flags = FHOOK_OPS_FL_GENERAL_REGS_ONLY };
	struct kprobe kp = { .addr = (kprobe_opcode_t *)kp_target_handler,
			     .pre_handler = kp_redirect };
	struct kprobe kp_mid = { .addr = (kprobe_opcode_t *)vn_kp_target_ret,
				 .pre_handler = kp_redirect };
	struct kprobe kp_flagged = { .addr = (kprobe_opcode_t *)kp_flagged_handler };
	volatile double r;
	char n[64];
	int i;

	calls = 0;
	CHECK_EQ(ftrace_set_filter_ip(&ops, (unsigned long)fsum, 0, 1) ||
		 register_ftrace_function(&ops), 0, "kprobed_register");
	CHECK_EQ(fhook_ops_saves_vectors(&ops), 0, "kprobed_proven");
	CHECK_EQ(register_kprobe(&kp), -EBUSY, "kprobed_entry_refused");
	r = fsum(1, 2, 3, 4, 5, 6, 7, 8);
	CHECK(r == 204.0 && calls == 0x5a5a5a, "kprobed_refused_unchanged", "%g, %ld calls", r,
	      calls);
	unregister_ftrace_function(&ops);
	/* inside one: its last instruction */
	CHECK_EQ(ftrace_set_filter_ip(&inner, (unsigned long)fsum, 0, 1) ||
		 register_ftrace_function(&inner), 0, "kprobed_inner_register");
	CHECK_EQ(fhook_ops_saves_vectors(&inner), 0, "kprobed_inner_proven");
	CHECK_EQ(register_kprobe(&kp_mid), -EBUSY, "kprobed_inside_refused");
	unregister_ftrace_function(&inner);
	ftrace_free_filter(&inner);
	/* the same for a handler whose flag promises it saves nothing */
	CHECK_EQ(ftrace_set_filter_ip(&flagged, (unsigned long)fsum, 0, 1) ||
		 register_ftrace_function(&flagged), 0, "kprobed_flagged_register");
	CHECK_EQ(register_kprobe(&kp_flagged), -EBUSY, "kprobed_flagged_refused");
	unregister_ftrace_function(&flagged);
	ftrace_free_filter(&flagged);
	/* placed while no ops has it: never proven again */
	CHECK_EQ(register_kprobe(&kp), 0, "kprobed_placed");
	calls = 0;
	CHECK_EQ(register_ftrace_function(&ops), 0, "kprobed_register_again");
	CHECK_EQ(fhook_ops_saves_vectors(&ops), 1, "kprobed_saves_vectors");
	for (i = 0; i < 3; i++) {
		r = fsum(1, 2, 3, 4, 5, 6, 7, 8);
		snprintf(n, sizeof(n), "kprobed_args_intact_%d", i);
		CHECK(r == 204.0, n, "%g, expected 204", r);
	}
	CHECK_EQ(calls, 3, "kprobed_redirected");
	unregister_ftrace_function(&ops);
	unregister_kprobe(&kp);
	CHECK_EQ(register_ftrace_function(&ops), 0, "kprobed_register_after");
	CHECK_EQ(fhook_ops_saves_vectors(&ops), 1, "kprobed_saves_vectors_after");
	unregister_ftrace_function(&ops);
	ftrace_free_filter(&ops);
}

static bool capstone_mapped(void)
{
	char line[512];
	bool found = false;
	FILE *f = fopen("/proc/self/maps", "re");

	while (f && fgets(line, sizeof(line), f))
		found |= strstr(line, "libcapstone") != NULL;
	if (f)
		fclose(f);
	return found;
}

int main(int argc, char **argv)
{
	bool tampered = argc > 1 && !strcmp(argv[1], "tampered");

	/*
	 * Frameless copies would decode each site's function (libcapstone):
	 * what is asked here is that proofs need no decoder.
	 */
	setenv("FHOOK_SAVE_ALL_ARGS", "1", 1);
	run(empty_handler, "empty", 0, 0);
	run(counting_handler, tampered ? "tampered" : "relocated_field", tampered,
	    tampered ? 0x5a5a5b : 0x5a5a5a);
	run(branching_handler, "branching", 0, 0x5a5a5a);
	run(float_handler, "floating_point", 1, 0x5a5a5a);
	run(fregs_handler, "fregs_registers", 0, 0x5a5a5a);
	run(fregs_xmm_handler, "fregs_vectors", 1, 0x5a5a5a);
	run(branch_clobber_handler, "branch_clobbering", 1, 0x5a5a5a);
	run(calling_handler, "calling", 1, 0x5a5a5a);
	run(site_handler, "with_site", 1, 0x5a5a5a);
	run(vn_reloc_insn, "relocated_opcode", 1, 0);
	run(vn_got_twin, "operand_twin", 1, 0);
	run(vn_pushret, "pushed_return", 1, 0);
	run(vn_framed, "frame_pointer", 0, 0);
	CHECK(!capstone_mapped(), "no_decoder_loaded", "libcapstone was loaded");
	if (argc == 1)	/* not in the copies test_vecnote.sh changed */
		kprobe_on_handler();
	return check_exit();
}
