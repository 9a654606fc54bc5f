/* SPDX-License-Identifier: LGPL-2.1-or-later */
#ifndef FHOOK_CLI_H
#define FHOOK_CLI_H

#include <pthread.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

int cmd_prepare(int argc, char **argv);
int cmd_funcs(int argc, char **argv);
/*
 * The names fhook funcs prints (funcs.c): a C++ function's in @mode (a
 * DEC_DEMANGLE_* of lib/events/decode.h), short against every function of
 * the files added.
 */
struct cxx_set;
struct cli_func_names {
	int mode;
	struct cxx_set *set;
	char **tables;
	int nr_tables;
	char *buf;
};
/* The DEC_DEMANGLE_* that --demangle=@arg names, or -EINVAL. */
int cli_func_names_mode(const char *arg);
/* Take the functions of @path into account (short names only); 0 or a negative errno. */
int cli_func_names_add(struct cli_func_names *fn, const char *path);
/* @raw's name, valid until the next call. */
const char *cli_func_name(struct cli_func_names *fn, const char *raw);
void cli_func_names_fini(struct cli_func_names *fn);
/* fhook funcs --why: how each function of @path would be kprobed, named in @mode (funcs_why.c) */
int cli_funcs_why(const char *path, const char *glob, int mode);
/*
 * Is link-time address @addr of @path, in the function [@start, +@size),
 * the first byte of an instruction (decoded from @start)?  0, -EILSEQ, or
 * another negative errno when it cannot tell.
 */
int cli_insn_boundary(const char *path, unsigned long start, unsigned long size,
		      unsigned long addr);

/* Commands built from other layers' fragments (cli/ *.mk files); weak until then. */
int cmd_patch(int argc, char **argv) __attribute__((weak));
int cmd_inject(int argc, char **argv) __attribute__((weak));
int cmd_unpatch(int argc, char **argv) __attribute__((weak));
int cmd_trace(int argc, char **argv) __attribute__((weak));
int cmd_record(int argc, char **argv) __attribute__((weak));
int cmd_replay(int argc, char **argv) __attribute__((weak));
int cmd_report(int argc, char **argv) __attribute__((weak));
int cmd_info(int argc, char **argv) __attribute__((weak));

/* The file execvp() would run for @name (malloc'd), or NULL. */
char *cli_which(const char *name);

/*
 * For a "#!" script, the program the kernel runs for it, following
 * interpreters that are scripts themselves (malloc'd); NULL when @file is
 * not a script, or its chain ends nowhere.
 */
char *cli_script_interpreter(const char *file);

/*
 * Can fhook act inside the program execvp would run for @name?  0, or
 * -ENOEXEC with the reason on stderr (statically linked, set-id or with
 * file capabilities, 32-bit or foreign ELF, corrupt ELF).
 */
int cli_check_program(const char *name);
/* Path of libfhook.so for LD_PRELOAD. */
int cli_libfhook_path(char *buf, size_t size);
/* pthread_create() of a helper thread that takes none of the signals sent to the command */
int cli_helper_thread(pthread_t *th, void *(*fn)(void *), void *arg);
/*
 * Run argv with libfhook preloaded (the caller sets the FHOOK_* variables
 * that tell it what to do).  With @wait_child, fork, wait and return the
 * program's exit status (128+signal if it died); else exec in place.
 */
int cli_run_preloaded(char **argv, bool wait_child);
/* Fork and exec argv with libfhook preloaded; the child's pid or a negative errno. */
pid_t cli_start_preloaded(char **argv);
/* A wait status as a shell's exit status (128+signal for a signal). */
int cli_exit_status(int status);

struct dec;
/* Open a recording for reading, saying on stderr what a reader should know of it. */
struct dec *cli_open_recording(const char *cmd, const char *path);
/* The same, with @fn told of every whole block read (dec_set_block_hook()). */
typedef int (*dec_block_fn)(void *ctx, uint32_t type, const void *payload, uint32_t len);
struct dec *cli_open_recording_with(const char *cmd, const char *path, dec_block_fn fn,
				    void *ctx);
/* After decoding: records that did not parse. */
void cli_recording_warnings(const char *cmd, struct dec *d);

/* Libraries PROG would load, as the dynamic loader resolves them. */
int cli_program_objects(const char *prog, char ***paths, int *nr);

#endif
