// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * Attaching on aarch64: the registers through PTRACE_GETREGSET NT_PRSTATUS
 * (struct user_pt_regs), the vector state (NT_PRFPREG, and NT_ARM_SVE when
 * the thread has live SVE state) kept across a call, a call that returns
 * to address 0 through its link register, and the vdso's
 * __kernel_rt_sigreturn as the mark of a signal frame (glibc gives the
 * kernel no restorer of its own on aarch64).
 *
 * A system call interrupted by our stop: arm64's do_signal() has already
 * rewound pc to the svc and put the first argument back in x0 when the
 * tracer sees the thread, and has forgotten the number (NT_ARM_SYSTEM_CALL
 * reads -1).  So a thread whose pc is at an "svc #0" is in the system
 * call numbered by x8, which it makes again when let go.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/auxv.h>
#include <sys/ptrace.h>
#include <sys/syscall.h>
#include <sys/uio.h>
#include <time.h>
#include <unistd.h>

#include "../att.h"

#define A64_SVC0		0xd4000001u
#define A64_PSTATE_BTYPE	(3UL << 10)
/* user addresses: 48 bits (what pointer authentication signs above them is stripped) */
#define A64_VA_MASK		((1UL << 48) - 1)

#ifndef NT_ARM_SYSTEM_CALL
#define NT_ARM_SYSTEM_CALL	0x404
#endif
#ifndef NT_ARM_SVE
#define NT_ARM_SVE		0x405
#endif
/* the kernel's struct user_sve_header (asm/ptrace.h, which clashes with sys/ptrace.h) */
struct att_sve_header {
	uint32_t size, max_size;
	uint16_t vl, max_vl, flags, reserved;
};
#define ATT_SVE_PT_REGS_SVE	1
#define ATT_SVE_MAX		(64 << 10)

int att_arch_get_regs(pid_t tid, struct att_regs *r)
{
	struct iovec iov = { &r->r, sizeof(r->r) };
	struct iovec l, rem;
	uint32_t insn = 0;

	if (ptrace(PTRACE_GETREGSET, tid, (void *)NT_PRSTATUS, &iov))
		return -errno;
	r->sysno = -1;
	l.iov_base = &insn;
	l.iov_len = sizeof(insn);
	rem.iov_base = (void *)r->r.pc;
	rem.iov_len = sizeof(insn);
	if (r->r.pc && process_vm_readv(tid, &l, 1, &rem, 1, 0) == sizeof(insn) &&
	    insn == A64_SVC0)
		r->sysno = (long)r->r.regs[8];
	return 0;
}

int att_arch_set_regs(pid_t tid, const struct att_regs *r)
{
	struct iovec iov = { (void *)&r->r, sizeof(r->r) };

	return ptrace(PTRACE_SETREGSET, tid, (void *)NT_PRSTATUS, &iov) ? -errno : 0;
}

unsigned long att_regs_pc(const struct att_regs *r)
{
	return r->r.pc;
}

void att_regs_set_pc(struct att_regs *r, unsigned long pc)
{
	r->r.pc = pc;
}

unsigned long att_regs_sp(const struct att_regs *r)
{
	return r->r.sp;
}

long att_regs_syscall(const struct att_regs *r)
{
	return r->sysno;
}

/* at its svc, it makes the call again when let go */
long att_regs_restarting(const struct att_regs *r)
{
	return r->sysno;
}

void att_regs_syscall_return(struct att_regs *r, long val)
{
	if (r->sysno >= 0)
		r->r.pc += 4;	/* past the svc */
	r->r.regs[0] = val;
	r->sysno = -1;
}

int att_arch_call_setup(struct cli_attach *a, struct att_regs *r, unsigned long fn,
			const unsigned long *args, int nargs, unsigned long *sp)
{
	int nr = -1, i;
	struct iovec iov = { &nr, sizeof(nr) };

	for (i = 0; i < 8; i++)
		r->r.regs[i] = i < nargs ? args[i] : 0;
	r->r.regs[30] = 0;	/* the return faults, and stops it for us */
	r->r.sp = *sp;
	r->r.pc = fn;
	/*
	 * Not coming from a branch: a BTYPE left from the thread's own code
	 * would make the function's "bti c" fault on a guarded page.
	 */
	r->r.pstate &= ~A64_PSTATE_BTYPE;
	r->sysno = -1;
	/* not inside a system call (a syscall-stop's number): nothing to restart */
	ptrace(PTRACE_SETREGSET, a->hijack->tid, (void *)NT_ARM_SYSTEM_CALL, &iov);
	return 0;
}

bool att_arch_call_done(const struct att_regs *r, unsigned long sp, unsigned long *ret)
{
	/* "ret" to the zero link register; sp is back where the call started */
	if (r->r.pc != 0 || r->r.sp != sp)
		return false;
	*ret = r->r.regs[0];
	return true;
}

/*
 * The return address is the link register: a function that returns into
 * getppid() would return into it again from there, so no landing.
 */
int att_arch_call_setup_land(struct cli_attach *a, struct att_regs *r, unsigned long fn,
			     const unsigned long *args, int nargs, unsigned long land,
			     unsigned long end, unsigned long *sp)
{
	return -EOPNOTSUPP;
}

bool att_arch_call_landed(const struct att_regs *r, unsigned long sp)
{
	return false;
}

void att_arch_skip_syscall(struct att_regs *r)
{
	r->sysno = -1;
}

static struct user_fpsimd_struct fpsimd;
static unsigned char sve[ATT_SVE_MAX] __attribute__((aligned(16)));
static bool sve_live;

int att_arch_save_ext(pid_t tid)
{
	struct iovec iov = { &fpsimd, sizeof(fpsimd) };
	struct iovec siov = { sve, sizeof(sve) };
	const struct att_sve_header *h = (const void *)sve;

	if (ptrace(PTRACE_GETREGSET, tid, (void *)NT_PRFPREG, &iov))
		return -errno;
	/*
	 * Live SVE state (the thread stopped in its own code, not in a
	 * system call, which discards it): the Z registers' upper bits too.
	 */
	sve_live = !ptrace(PTRACE_GETREGSET, tid, (void *)NT_ARM_SVE, &siov) &&
		   siov.iov_len >= sizeof(*h) && (h->flags & ATT_SVE_PT_REGS_SVE) &&
		   h->size <= siov.iov_len;
	return 0;
}

int att_arch_restore_ext(pid_t tid)
{
	struct iovec iov = { &fpsimd, sizeof(fpsimd) };
	const struct att_sve_header *h = (const void *)sve;
	struct iovec siov = { sve, sve_live ? h->size : 0 };

	if (sve_live)
		return ptrace(PTRACE_SETREGSET, tid, (void *)NT_ARM_SVE, &siov) ? -errno : 0;
	return ptrace(PTRACE_SETREGSET, tid, (void *)NT_PRFPREG, &iov) ? -errno : 0;
}

/*
 * A sleep that our stop interrupted would have restarted through
 * restart_syscall (-ERESTART_RESTARTBLOCK: the time left, kept by the
 * kernel), which arm64 sets up in x8 only as the thread leaves that stop;
 * it leaves the stop of the call's fault instead, so x8 is set here.  An
 * absolute clock_nanosleep() restarts as it was (-ERESTARTNOHAND).
 */
int att_arch_call_restore(pid_t tid, const struct att_regs *saved)
{
	struct att_regs r = *saved;

	if (r.sysno == SYS_nanosleep ||
	    (r.sysno == SYS_clock_nanosleep && !(r.r.regs[1] & TIMER_ABSTIME)))
		r.r.regs[8] = SYS_restart_syscall;
	return att_arch_set_regs(tid, &r);
}

/* __kernel_rt_sigreturn's offset in a vdso image (its section headers are mapped) */
static unsigned long vdso_sym_off(const unsigned char *img, const char *name)
{
	const Elf64_Ehdr *eh = (const void *)img;
	const Elf64_Shdr *sh = (const void *)(img + eh->e_shoff);
	const Elf64_Phdr *ph = (const void *)(img + eh->e_phoff);
	unsigned long base = 0;
	int i, j;

	if (memcmp(eh->e_ident, ELFMAG, SELFMAG) || !eh->e_shoff)
		return 0;
	for (i = 0; i < eh->e_phnum; i++)
		if (ph[i].p_type == PT_LOAD) {
			base = ph[i].p_vaddr - ph[i].p_offset;
			break;
		}
	for (i = 0; i < eh->e_shnum; i++) {
		const Elf64_Sym *sym = (const void *)(img + sh[i].sh_offset);
		const char *str;

		if (sh[i].sh_type != SHT_DYNSYM || sh[i].sh_link >= eh->e_shnum)
			continue;
		str = (const char *)img + sh[sh[i].sh_link].sh_offset;
		for (j = 0; j < (int)(sh[i].sh_size / sizeof(*sym)); j++)
			if (sym[j].st_value && !strcmp(str + sym[j].st_name, name))
				return sym[j].st_value - base;
	}
	return 0;
}

/*
 * The kernel returns from every signal handler to the vdso's
 * __kernel_rt_sigreturn: its offset in our own vdso (the same kernel's
 * image), at the process's vdso (its auxv).
 */
unsigned long att_arch_find_restorer(struct cli_attach *a)
{
	unsigned long own = getauxval(AT_SYSINFO_EHDR), off, aux[2], theirs = 0;
	char path[64];
	int fd;

	if (!own || !(off = vdso_sym_off((const unsigned char *)own, "__kernel_rt_sigreturn")))
		return 0;
	snprintf(path, sizeof(path), "/proc/%d/auxv", a->pid);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return 0;
	while (read(fd, aux, sizeof(aux)) == sizeof(aux) && aux[0] != AT_NULL)
		if (aux[0] == AT_SYSINFO_EHDR)
			theirs = aux[1];
	close(fd);
	return theirs ? theirs + off : 0;
}

/* a handler that calls further saved its link register, maybe signed */
bool att_arch_is_return_to(unsigned long w, unsigned long addr)
{
	return (w & A64_VA_MASK) == addr;
}

/* the kernel enters the handler with the return in the link register */
bool att_arch_regs_return_to(const struct att_regs *r, unsigned long addr)
{
	return r->r.regs[30] == addr;
}

/*
 * A site is one instruction: no pad is split (att_rewrite_pads()), so no
 * pc saved in a signal frame has to move.
 */
void att_arch_find_frames(struct cli_attach *a, struct att_thread *t)
{
	t->nr_frames = 0;
}
