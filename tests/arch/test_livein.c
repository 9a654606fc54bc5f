// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * Which argument registers a function reads after its site (livein.c),
 * on hand-written functions with exact answers: reads before and after
 * writes, on every path of a branch and through loops and tail jumps,
 * partial writes and conditional moves taken as reads, implicit operands,
 * %rdx read by every return that did not write it (a pair's second half),
 * and "all of them" for every doubt (a call before the registers are
 * written, an indirect jump, an unknown instruction, a repeat prefix, an
 * int3, too long a path, a jump to another function's site).  Then the
 * site classes built on it.
 *
 * Built with lib/arch/x86_64/livein.c and cs.c alone (tests/arch.mk):
 * the functions are decoded where they are, through the fhook_text_read()
 * below.
 */
#define _GNU_SOURCE
#include <stdbool.h>
#include <stdio.h>
#include <string.h>

#include "../check.h"

unsigned int fhook_arch_live_args(unsigned long body, bool (*is_site)(unsigned long));
unsigned int fhook_arch_site_class(unsigned long ip, bool (*is_site)(unsigned long));
void fhook_arch_site_class_prepare(void);
bool fhook_arch_site_class_ready(void);

int fhook_text_read(unsigned long addr, void *buf, size_t len)
{
	memcpy(buf, (void *)addr, len);
	return 0;
}

enum { DI = 1, SI = 2, DX = 4, CX = 8, R8 = 16, R9 = 32, AX = 64, R10 = 128, ALL = 255 };

#define FN(name, body) ".globl " #name "\n.type " #name ",@function\n" #name ":\n" body "\n"

__asm__(".text\n"
	FN(lv_ret, "ret")
	FN(lv_di, "lea (%rdi,%rdi,2), %eax\n ret")
	FN(lv_si_dx, "mov %esi, %eax\n add %edx, %eax\n ret")
	FN(lv_branch, "xor %eax, %eax\n test %rdi, %rdi\n je 1f\n mov %rsi, %rax\n1: ret")
	FN(lv_cx_written, "mov $3, %ecx\n shl %cl, %edi\n mov %edi, %eax\n ret")
	FN(lv_call, "push %rbx\n mov %rdi, %rbx\n call lv_ret\n mov %rbx, %rax\n pop %rbx\n ret")
	FN(lv_call_written, "xor %edi, %edi\n xor %esi, %esi\n xor %edx, %edx\n xor %ecx, %ecx\n"
	   " xor %r8d, %r8d\n xor %r9d, %r9d\n xor %eax, %eax\n xor %r10d, %r10d\n"
	   " call lv_ret\n mov %rsi, %rax\n ret")
	FN(lv_cmov, "test %edi, %edi\n cmovne %esi, %ecx\n mov %ecx, %eax\n ret")
	FN(lv_partial, "mov $1, %cl\n mov %ecx, %eax\n ret")
	FN(lv_setcc, "cmp %esi, %edi\n sete %al\n movzbl %al, %eax\n ret")
	FN(lv_setcc_zeroed, "xor %eax, %eax\n cmp %esi, %edi\n sete %al\n ret")
	FN(lv_varargs, "test %al, %al\n je 1f\n movaps %xmm0, -72(%rsp)\n1: mov %rdi, %rax\n ret")
	FN(lv_chain, "mov (%r10), %rax\n ret")
	FN(lv_movzx_dil, "movzbl %dil, %eax\n ret")
	FN(lv_idiv, "mov %edi, %eax\n cltd\n idiv %esi\n ret")
	FN(lv_mul, "mov %rdi, %rax\n mul %rsi\n ret")
	FN(lv_tail, "mov %edi, %eax\n jmp lv_tail_to")
	FN(lv_tail_to, "add %esi, %eax\n ret")
	FN(lv_loop, "xor %eax, %eax\n1: add %edi, %eax\n dec %esi\n jne 1b\n ret")
	FN(lv_less_known, "test %edi, %edi\n je 2f\n mov $0, %edx\n2: mov %edx, %eax\n ret")
	FN(lv_indirect, "mov %rdi, %rax\n jmp *%rax")
	FN(lv_unknown, "xor %eax, %eax\n cpuid\n ret")
	FN(lv_rep, "mov %rdi, %rax\n rep stosb\n ret")
	FN(lv_int3, "int3\n ret")
	FN(lv_pops, "push %rdi\n pop %rsi\n mov %rsi, %rax\n ret")
	FN(lv_nops, "endbr64\n nopw 0x0(%rax,%rax,1)\n xchg %ax, %ax\n mov %edi, %eax\n ret")
	FN(lv_sse, "cvtsi2sd %edi, %xmm1\n addsd %xmm1, %xmm0\n cvttsd2si %xmm0, %eax\n ret")
	FN(lv_ud2, "test %edi, %edi\n je 1f\n ud2\n1: mov %edx, %eax\n ret")
	FN(lv_store, "mov %rsi, (%rdi)\n ret")
	FN(lv_push_r9, "push %r9\n pop %rax\n ret")
	FN(lv_jrcxz, "jrcxz 1f\n1: ret")
	FN(lv_long, ".rept 100\n nop\n .endr\n ret")
	FN(lv_four, "lea (%rdi,%rcx), %eax\n ret")
	FN(lv_pair_through, "mov %rdi, %rax\n ret")
	FN(lv_shift_cl, "mov %edi, %eax\n shl %cl, %eax\n xor %edx, %edx\n ret")
	FN(lv_cqo, "mov %rdi, %rax\n cqo\n ret")
	FN(lv_movsl, "movsl\n xor %edx, %edx\n ret")
	FN(lv_moffs, "movabs 0x1000, %eax\n xor %edx, %edx\n ret")
	FN(lv_jmp_site, "mov %edi, %eax\n xor %edx, %edx\n jmp lv_site_target")
	FN(lv_jcc_site, "xor %edx, %edx\n test %edi, %edi\n je lv_site_target\n mov %esi, %eax\n ret")
	FN(lv_site_target, "add %esi, %eax\n ret")
	FN(lv_dx_written, "mov %edi, %eax\n xor %edx, %edx\n ret")
	".previous\n");

#define DECL(n) extern char n[]
DECL(lv_ret); DECL(lv_di); DECL(lv_si_dx); DECL(lv_branch); DECL(lv_cx_written); DECL(lv_call);
DECL(lv_call_written); DECL(lv_cmov); DECL(lv_partial); DECL(lv_setcc); DECL(lv_setcc_zeroed);
DECL(lv_varargs); DECL(lv_chain); DECL(lv_movzx_dil); DECL(lv_idiv); DECL(lv_mul); DECL(lv_tail);
DECL(lv_loop); DECL(lv_less_known); DECL(lv_indirect); DECL(lv_unknown); DECL(lv_rep);
DECL(lv_int3); DECL(lv_pops); DECL(lv_nops); DECL(lv_sse); DECL(lv_ud2); DECL(lv_store);
DECL(lv_push_r9); DECL(lv_jrcxz); DECL(lv_long); DECL(lv_four); DECL(lv_pair_through);
DECL(lv_dx_written); DECL(lv_shift_cl); DECL(lv_cqo); DECL(lv_movsl); DECL(lv_moffs);
DECL(lv_jmp_site); DECL(lv_jcc_site); DECL(lv_site_target);

static const struct {
	const char *name;
	const char *fn;
	unsigned int live;
} funcs[] = {
	{ "ret_reads_rdx", lv_ret, DX },
	{ "lea_reads_rdi", lv_di, DI | DX },
	{ "add_reads_rsi_rdx", lv_si_dx, SI | DX },
	{ "both_paths", lv_branch, DI | SI | DX },
	{ "rcx_written_first", lv_cx_written, DI | DX },
	{ "call_reads_unwritten", lv_call, ALL },
	{ "call_after_all_written", lv_call_written, 0 },
	{ "cmov_destination_read", lv_cmov, DI | SI | CX | DX },
	{ "partial_write_read", lv_partial, CX | DX },
	{ "setcc_partial_read", lv_setcc, DI | SI | AX | DX },
	{ "setcc_after_zeroing", lv_setcc_zeroed, DI | SI | DX },
	{ "varargs_al", lv_varargs, DI | AX | DX },
	{ "static_chain_r10", lv_chain, R10 | DX },
	{ "movzx_dil", lv_movzx_dil, DI | DX },
	{ "idiv_implicit", lv_idiv, DI | SI | DX },
	{ "mul_implicit", lv_mul, DI | SI | DX },
	{ "tail_jump_followed", lv_tail, DI | SI | DX },
	{ "loop", lv_loop, DI | SI | DX },
	{ "target_reached_knowing_less", lv_less_known, DI | DX },
	{ "indirect_jump", lv_indirect, ALL & ~AX },
	{ "unknown_instruction", lv_unknown, ALL },
	{ "repeat_prefix", lv_rep, ALL },
	{ "int3", lv_int3, ALL },
	{ "pop_writes", lv_pops, DI | DX },
	{ "nops_read_nothing", lv_nops, DI | DX },
	{ "scalar_sse", lv_sse, DI | DX },
	{ "ud2_ends_path", lv_ud2, DI | DX },
	{ "store_reads_base", lv_store, DI | SI | DX },
	{ "push_r9", lv_push_r9, R9 | DX },
	{ "jrcxz", lv_jrcxz, ALL },
	{ "too_long", lv_long, ALL },
	{ "fourth_argument", lv_four, DI | CX | DX },
	{ "pair_second_half_through", lv_pair_through, DI | DX },
	{ "rdx_written_before_return", lv_dx_written, DI },
	{ "shift_by_cl", lv_shift_cl, DI | CX },
	{ "cqo_implicit", lv_cqo, DI | DX },
	{ "string_move", lv_movsl, DI | SI },
	{ "moffs_load", lv_moffs, 0 },
	/* with no site there, a jump is followed */
	{ "jump_followed", lv_jmp_site, DI | SI },
};

/* lv_site_target is a site (another function's entry): jumps there read all */
static bool test_is_site(unsigned long addr)
{
	return addr == (unsigned long)lv_site_target;
}

static const struct {
	const char *name;
	const char *fn;
	unsigned int live;
} at_sites[] = {
	{ "jump_to_site", lv_jmp_site, ALL & ~AX & ~DX },
	{ "branch_to_site", lv_jcc_site, ALL & ~DX },
	{ "no_jump_no_site", lv_di, DI | DX },
};

/*
 * a site's class: 1 when nothing but %rdi and %rsi is read (both always
 * saved: callee-saved in the Microsoft ABI), 2 with %rdx, 0 else
 */
static const struct {
	const char *name;
	const char *fn;
	unsigned int cls;
} classes[] = {
	{ "class_rdx_written", lv_dx_written, 1 },
	{ "class_rdi_rdx", lv_di, 2 },
	{ "class_ret_only", lv_ret, 2 },
	{ "class_rcx", lv_four, 0 },
	{ "class_rax", lv_varargs, 0 },
	{ "class_call", lv_call, 0 },
};

int main(void)
{
	unsigned int i;

	fhook_arch_site_class_prepare();
	if (!fhook_arch_site_class_ready()) {
		printf("SKIP livein: no libcapstone\n");
		return 0;
	}
	for (i = 0; i < sizeof(funcs) / sizeof(funcs[0]); i++) {
		unsigned int got = fhook_arch_live_args((unsigned long)funcs[i].fn, NULL);

		CHECK(got == funcs[i].live, funcs[i].name, "live %#x, expected %#x", got,
		      funcs[i].live);
	}
	for (i = 0; i < sizeof(classes) / sizeof(classes[0]); i++) {
		/* the site is the five bytes before what the analysis reads */
		unsigned int got = fhook_arch_site_class((unsigned long)classes[i].fn - 5, NULL);

		CHECK(got == classes[i].cls, classes[i].name, "class %u, expected %u", got,
		      classes[i].cls);
	}
	for (i = 0; i < sizeof(at_sites) / sizeof(at_sites[0]); i++) {
		unsigned int got = fhook_arch_live_args((unsigned long)at_sites[i].fn,
							test_is_site);

		CHECK(got == at_sites[i].live, at_sites[i].name, "live %#x, expected %#x", got,
		      at_sites[i].live);
	}
	return check_exit();
}
