/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Getting into a running process (`fhook ... -p PID`): cli/attach/.
 */
#ifndef FHOOK_CLI_ATTACH_H
#define FHOOK_CLI_ATTACH_H

#include <stdbool.h>
#include <sys/types.h>

struct cli_attach;

/* What one attach cost, for FHOOK_ATTACH_VERBOSE (bench/attach.sh). */
struct cli_attach_times {
	int threads;		/* threads stopped */
	double stopped_ms;	/* all of them stopped, at most */
	double call_ms;		/* the hijacked thread away in its last call */
	bool loaded;		/* libfhook was loaded into the process */
};

/*
 * Attach to @pid: check the kernel's ptrace rules (and say which one
 * refused), stop every thread, load libfhook if the process has none
 * (gcc's 1-byte-nop pads are made 5-byte nops first, with every thread
 * stopped and none inside a pad), then keep one thread stopped at a safe
 * point for cli_attach_ctl() and let the others run.  Messages begin
 * "fhook: @cmd: ".  Returns 0, or a negative errno with the reason printed.
 */
int cli_attach_open(const char *cmd, pid_t pid, struct cli_attach **out);
/* Set: a process without patchable sites is attached to too (kprobes need none). */
extern bool cli_attach_no_sites_ok;

/*
 * Send one request (fhook_attach_ctl(), include/fhook/attach.h) and get
 * the reply (malloc'd).  Returns 0 when the reply says "ok", 1 when it is
 * an error reply, a negative errno when the process could not be reached
 * (it exited: -ESRCH).
 */
int cli_attach_ctl(struct cli_attach *a, const char *req, char **reply);

/* Copy descriptor @fd of the process into this one (pidfd_getfd). */
int cli_attach_getfd(struct cli_attach *a, int fd);

/* Put the thread back as it was and detach; the process runs (or stays stopped). */
void cli_attach_close(struct cli_attach *a);

/* The objects of @pid, main program first (malloc'd paths), as cli_program_objects(). */
int cli_attach_objects(pid_t pid, char ***paths, int *nr);

/* Is @pid still there (not a zombie)? */
bool cli_attach_alive(pid_t pid);

/* Parse "-p PID"'s argument; -1 (message printed) when it is no pid. */
pid_t cli_attach_parse_pid(const char *cmd, const char *s);

#endif
