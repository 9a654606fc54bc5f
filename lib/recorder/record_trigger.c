// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * The flight recorder's duration trigger: `--trigger 'FUNC>DURATION'`
 * dumps the rings when a call of FUNC took DURATION or longer, decided at
 * its return.  An fprobe of its own on FUNC, beside the recording's: the
 * entry notes the time in the call's entry data, the exit compares; a
 * call over the bound bumps the shared count and kicks the command, whose
 * drain thread dumps (the exit's own record is in the ring by then, and
 * so is every call that led up to it).  The monotonic clock, read twice
 * per call of FUNC only: a function worth a duration trigger is not the
 * innermost of a tight loop.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <linux/futex.h>
#include <stdint.h>
#include <string.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include <fhook/fprobe.h>

#include "record.h"
#include "record_trigger.h"

/* the current recording's trigger (each has its own: struct rec_trig) */
#define trig_fp		(REC_CUR->trig.fp)
#define trig_shm	(REC_CUR->trig.shm)
#define trig_ns		(REC_CUR->trig.ns)
#define trig_registered	(REC_CUR->trig.registered)

static uint64_t trig_now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ULL + (uint64_t)ts.tv_nsec;
}

static int trig_entry(struct fprobe *fp, unsigned long ip, unsigned long ret_ip,
		      struct ftrace_regs *fregs, void *data)
{
	*(uint64_t *)data = trig_now();
	return 0;
}

static void trig_exit(struct fprobe *fp, unsigned long ip, unsigned long ret_ip,
		      struct ftrace_regs *fregs, void *data)
{
	struct rec_trig *t = (struct rec_trig *)fp;
	uint64_t took;

	/* a frame unwound (an exception, longjmp): no return to time */
	if (!fregs)
		return;
	if (__atomic_load_n(&t->shm->trigger_off, __ATOMIC_RELAXED))
		return;
	took = trig_now() - *(uint64_t *)data;
	if (took >= t->ns)
		fhook_rec_trigger_fire(t->shm, took);
}

void fhook_rec_trigger_fire(struct ev_shm *shm, uint64_t took_ns)
{
	if (__atomic_load_n(&shm->trigger_off, __ATOMIC_RELAXED))
		return;
	__atomic_store_n(&shm->trigger_took_ns, took_ns, __ATOMIC_RELAXED);
	__atomic_add_fetch(&shm->trigger_fired, 1, __ATOMIC_RELEASE);
	/* kicked already, and the command has not looked since: it will see this one */
	if (__atomic_exchange_n(&shm->trigger_kicked, 1, __ATOMIC_ACQ_REL))
		return;
	/* the command's drain thread sleeps on this word */
	__atomic_add_fetch(&shm->wake, 1, __ATOMIC_RELEASE);
	syscall(SYS_futex, &shm->wake, FUTEX_WAKE, 1, NULL, NULL, 0);
}

void fhook_rec_trigger_arm(struct ev_shm *shm, FILE *err)
{
	char func[EV_TRIGGER_FUNC_MAX];
	int ret;

	if (trig_registered || !shm->flight || !shm->trigger_func[0])
		return;
	/* the command's memory: a name that ends inside its field */
	memcpy(func, shm->trigger_func, sizeof(func));
	func[sizeof(func) - 1] = 0;
	trig_shm = shm;
	trig_ns = shm->trigger_ns;
	memset(&trig_fp, 0, sizeof(trig_fp));
	trig_fp.entry_handler = trig_entry;
	trig_fp.exit_handler = trig_exit;
	trig_fp.entry_data_size = sizeof(uint64_t);
	trig_fp.flags = FPROBE_FL_EXIT_ON_UNWIND;
	ret = register_fprobe(&trig_fp, func, NULL);
	/* a program it starts that has no such function has nothing to time */
	if (ret && ret != -ENOENT)
		fprintf(err, "fhook: cannot time %s for the flight recorder's trigger: %s\n", func,
			strerror(-ret));
	trig_registered = !ret;
}

void fhook_rec_trigger_disarm(void)
{
	if (!trig_registered)
		return;
	unregister_fprobe(&trig_fp);
	trig_registered = false;
}
