/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * What the files of cli/attach/ share: the state of one attach
 * (struct cli_attach, its threads, the process's mappings and pads) and
 * the functions one file asks of another.  The rest of the command sees
 * only cli/attach.h.
 */
#ifndef FHOOK_CLI_ATTACH_ATT_H
#define FHOOK_CLI_ATTACH_ATT_H

#include <limits.h>
#include <signal.h>
#include <stdbool.h>
#include <stdlib.h>
#include <sys/types.h>
#include <sys/user.h>
#include <time.h>

#include "../attach.h"
#include "arch.h"
#include "util/sched_slice.h"

#define ATT_MAX_THREADS		4096
#define ATT_CALL_TIMEOUT_MS	30000
#define ATT_MAX_FRAMES		8	/* nested signal frames looked at, per thread */

struct att_thread {
	pid_t tid;
	bool gone;
	int stop_sig;			/* the stop we saw: SIGTRAP, or a group-stop's signal */
	bool sched_saved;		/* boosted while kept: its scheduling put back */
	bool loader;			/* ours, not the program's: att_start_loader() */
	/* its signal frames' saved pcs, and where they are (att_rewrite_pads()) */
	int nr_frames;
	unsigned long frame_pc[ATT_MAX_FRAMES], frame_at[ATT_MAX_FRAMES];
	struct fhook_sched_attr sched;
	struct att_regs regs;
};

struct att_map {
	unsigned long start, end, off;
	bool exec;
	char *path;
};

/* A pad of several instructions: no thread may be inside it when it becomes one. */
struct att_split {
	unsigned long addr;
	unsigned int len;
};

/* The gcc pads of one object, at run-time addresses. */
struct att_pads {
	unsigned long *addrs;
	size_t nr;
	/* the object's other sites (calls to __fentry__), sorted: no pads, but sites */
	unsigned long *calls;
	size_t nr_calls;
	unsigned long lo, hi;		/* the pages they are on */
	/*
	 * Worked out while the threads run: the pages as they were (@orig)
	 * and as they are to be (@img), and the split pads, sorted.  With the
	 * threads stopped, the pages are only read again to see that they
	 * did not change meanwhile, and written.
	 */
	unsigned char *orig, *img;
	/*
	 * Where they are read again, allocated and touched beforehand: a
	 * fresh buffer's page faults (hundreds, for a large program) would
	 * be taken with every thread stopped.
	 */
	unsigned char *now;
	struct att_split *split;
	size_t nr_split;
};

struct cli_attach {
	const char *cmd;
	pid_t pid;
	sigset_t old_mask;	/* the attaching thread's before SIGCHLD was blocked */
	int pidfd;
	struct att_thread *th;
	int nr_th;
	struct att_thread *hijack;	/* the thread kept for calls */
	unsigned long ctl;		/* fhook_attach_ctl in the process */
	struct att_map *maps;
	int nr_maps;
	unsigned long restorer;		/* where signal handlers return: att_find_restorer() */
	/* loading libfhook: found before any thread is stopped */
	struct att_pads *pads;
	int nr_pads;
	unsigned long dlopen_fn, errno_fn, dlerror_fn;
	unsigned long pcreate_fn, pdetach_fn, sleep_fn;	/* for att_start_loader() */
	unsigned long land_fn, end_fn;	/* getppid(), pthread_exit(): att_call_land() */
	const char *pcreate_why;	/* why there is none */
	char pcreate_buf[96];
	pid_t clone_tid;		/* the thread that pthread_create() made */
	bool by_loader;			/* libfhook loaded by that thread */
	char lib[PATH_MAX];
	struct cli_attach_times times;
	/* the control thread's socket, when the process has one: no thread stopped */
	int sock;
	pid_t ctl_tid;
	/* the world stop (stop_world()) */
	pid_t preferred;		/* a thread it found at a safe point */
	double hijack_t0;		/* when the kept thread stopped */
	bool self_boosted;		/* the command's thread, while one is kept */
	struct fhook_sched_attr self_sched;
	bool ctl_missing;		/* no control thread when we came */
	pid_t world_tid;		/* the thread of ours that stopped them */
	int world_ret;
	bool pads_done;
	int pads_moved;			/* threads moved past the rest of a pad */
	int world_threads;
	double world_ms;
};

/* FHOOK_ATTACH_VERBOSE: every thread's verdict, the channel, the times stopped */
static inline bool att_verbose(void)
{
	return getenv("FHOOK_ATTACH_VERBOSE");
}

static inline double att_now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1e3 + ts.tv_nsec / 1e6;
}

static inline void att_sleep_ms(double ms)
{
	struct timespec ts = { 0, (long)(ms * 1e6) };

	nanosleep(&ts, NULL);
}

/* target.c: the checks made before anything is touched, and the reasons of a refusal */
char *att_status_field(pid_t pid, const char *name, char *buf, size_t size);
int att_check_target(const char *cmd, pid_t pid);
void att_explain_eperm(const char *cmd, pid_t pid);

/* maps.c: the process's mappings and the symbols of its objects */
void att_free_maps(struct cli_attach *a);
int att_read_maps(struct cli_attach *a);
const struct att_map *att_libc(struct cli_attach *a);
int att_wait_for_libc(struct cli_attach *a);
const struct att_map *att_map_of(struct cli_attach *a, unsigned long addr);
const char *att_base_name(const char *p);
const struct att_map *att_object_named(struct cli_attach *a, const char *prefix);
unsigned long att_object_sym(const struct att_map *m, const char *name);

/* threads.c: seizing, stopping and letting go of threads; safe points */
extern unsigned long att_stack_words[8192];
void att_wait_for_tracee(void);
int att_wait_stop(struct att_thread *t);
int att_stop_all(struct cli_attach *a);
void att_release(struct att_thread *t);
void att_end_loader(struct att_thread *t);
void att_release_hijack(struct cli_attach *a);
unsigned long att_find_restorer(struct cli_attach *a);
size_t att_read_stack(struct cli_attach *a, const struct att_thread *t);
bool att_in_signal_handler(struct cli_attach *a, struct att_thread *t);
struct att_thread *att_pick_safe(struct cli_attach *a);
bool att_sigtrap_blocked(pid_t pid);
int att_stop_one_safe(struct cli_attach *a);

/* call.c: the process's memory, and calls on the kept thread */
int att_mem_write(struct cli_attach *a, unsigned long addr, const void *buf, size_t len);
int att_mem_read(struct cli_attach *a, unsigned long addr, void *buf, size_t len);
char *att_mem_string(struct cli_attach *a, unsigned long addr, size_t max);
int att_call(struct cli_attach *a, unsigned long fn, unsigned long *args, int nargs,
	     const void *data, size_t dlen, int data_arg, unsigned long *ret);
/*
 * As att_call() on a loader thread of ours, without a result, for a call
 * that ends well if the command dies meanwhile: the thread then ends.
 * -EOPNOTSUPP when that cannot be arranged (att_call() serves).
 */
int att_call_land(struct cli_attach *a, unsigned long fn, unsigned long *args, int nargs,
		  const void *data, size_t dlen, int data_arg);

/* world.c: what is done with every thread stopped (the pads, the signal masks) */
void att_free_pads(struct cli_attach *a);
int att_collect_pads(struct cli_attach *a);
void att_plan_all_pads(struct cli_attach *a);
int att_rewrite_pads(struct cli_attach *a);
int att_world_stop(struct cli_attach *a);

/* load.c: loading libfhook into the process */
int att_prep_load(struct cli_attach *a);
int att_load_libfhook(struct cli_attach *a);
int att_start_loader(struct cli_attach *a);

/* ctl.c: the control thread's socket */
int att_ctl_sock_open(struct cli_attach *a);
int att_ctl_sock_request(struct cli_attach *a, const char *req, char **reply);

#endif
