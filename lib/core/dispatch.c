// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * The hot path: what a trampoline calls, the list function for sites
 * shared by several ops, and the per-thread recursion lock.
 *
 * Every handler runs inside a section of util/tasks.h (the trampolines
 * count the thread in; this file's C dispatcher does the same), so
 * unregister_ftrace_function() can wait for the handlers still running
 * with fhook_tasks_synchronize(), and no lock is taken on the call path.
 */
#define _GNU_SOURCE
#include <string.h>

#include "util/tasks.h"

#include "core.h"
#include "arch/arch.h"

int ftrace_test_recursion_trylock(unsigned long ip, unsigned long parent_ip)
{
	(void)ip;
	(void)parent_ip;
	return fhook_recursion_trylock();
}

void ftrace_test_recursion_unlock(int bit)
{
	fhook_recursion_unlock(bit);
}

static void ftrace_ops_assist_func(unsigned long ip, unsigned long parent_ip,
				   struct ftrace_ops *op, struct ftrace_regs *fregs)
{
	int bit = ftrace_test_recursion_trylock(ip, parent_ip);

	if (bit < 0)
		return;
	op->func(ip, parent_ip, op, fregs);
	ftrace_test_recursion_unlock(bit);
}

ftrace_func_t fhook_ops_func(struct ftrace_ops *ops)
{
	return (ops->flags & FTRACE_OPS_FL_RECURSION) ? ftrace_ops_assist_func : ops->func;
}

void ftrace_ops_list_func(unsigned long ip, unsigned long parent_ip, struct ftrace_ops *unused,
			  struct ftrace_regs *fregs)
{
	struct ftrace_ops *op;

	(void)unused;
	for (op = __atomic_load_n(&ftrace_ops_list, __ATOMIC_ACQUIRE); op;
	     op = __atomic_load_n(&op->next, __ATOMIC_ACQUIRE)) {
		unsigned long flags = __atomic_load_n(&op->flags, __ATOMIC_RELAXED);

		if (!ftrace_ops_test(op, ip))
			continue;
		/*
		 * A call that came through a trampoline saving only the
		 * arguments began while no SAVE_REGS ops wanted this site (else
		 * the site would have called a full-saving one): it is not
		 * this ops' call, and its handler must never see NULL regs.
		 */
		if ((flags & FTRACE_OPS_FL_SAVE_REGS) && !fregs->fhook_full)
			continue;
		if (flags & FTRACE_OPS_FL_RECURSION)
			ftrace_ops_assist_func(ip, parent_ip, op, fregs);
		else
			__atomic_load_n(&op->func, __ATOMIC_RELAXED)(ip, parent_ip, op, fregs);
	}
}

/*
 * The trampolines' C path: a thread the tasks registry does not know yet
 * (registered here), ThreadSanitizer builds, FHOOK_SLOW_DISPATCH.
 */
void fhook_dispatch(unsigned long ip, unsigned long parent_ip, struct fhook_stub *stub,
		    struct ftrace_regs *fregs)
{
	/* bit 0: fregs holds only what the function reads; no other ops' handler */
	bool own = (unsigned long)stub & 1;
	struct ftrace_ops *ops;

	stub = (struct fhook_stub *)((unsigned long)stub & ~1UL);
	if (!fhook_tasks_enter())
		return;		/* an exiting thread, past its last destructor */
	ops = __atomic_load_n(&stub->data, __ATOMIC_ACQUIRE);
	if (__builtin_expect(ops != NULL, 1))
		__atomic_load_n(&stub->func, __ATOMIC_RELAXED)(ip, parent_ip, ops, fregs);
	else if (!own)
		ftrace_ops_list_func(ip, parent_ip, NULL, fregs);
	fhook_tasks_leave();
}

void ftrace_override_function_with_return(struct ftrace_regs *fregs, unsigned long retval)
{
	regs_set_return_value(&fregs->regs, retval);
	instruction_pointer_set(&fregs->regs, (unsigned long)fhook_just_return);
}
