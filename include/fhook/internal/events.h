/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * fhook: fprobe events, with the kernel's dynamic_events grammar.
 *
 *   f[MAXACTIVE][:[GRP/][EVENT]] SYM[%return] [FETCHARGS]
 *   p[:[GRP/][EVENT]] [MOD:]SYM[+OFFS]|ADDR [FETCHARGS]
 *   r[MAXACTIVE][:[GRP/][EVENT]] [MOD:]SYM[+0] [FETCHARGS]
 *   -:[GRP/]EVENT
 *
 * 'f' events are fprobes (functions with an fhook site); 'p' and 'r' are
 * the kernel's kprobe events, on any instruction of any loaded object.
 *
 * An event definition is parsed (and its DWARF names resolved) by the
 * `fhook` command, which turns it into a small fetch program: a list of
 * fetch instructions per argument, as the kernel's struct fetch_insn.  The
 * traced process only runs those programs and copies the bytes they fetch
 * into a per-thread ring buffer (lib/recorder/record.c); decoding and
 * printing happen in the command again (lib/events/format.c).
 *
 * Errors are reported as the kernel's error_log does: one message of the
 * kernel's ERRORS list and the position of the offending character in the
 * command (its words joined by single spaces).
 *
 * Nothing here is async-signal-safe; call it from ordinary thread context.
 */
#ifndef FHOOK_EVENTS_H
#define FHOOK_EVENTS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#ifdef __cplusplus
extern "C" {
#endif

/* The kernel's limits (kernel/trace/trace.h, trace_probe.h). */
#define FHOOK_EV_MAX_EVENT_NAME_LEN	64
#define FHOOK_EV_MAX_ARG_NAME_LEN	32
#define FHOOK_EV_MAX_ARGSTR_LEN		63
#define FHOOK_EV_MAX_TRACE_ARGS		128
#define FHOOK_EV_MAX_ARRAY_LEN		64
#define FHOOK_EV_FETCH_INSN_MAX		16
#define FHOOK_EV_MAX_STRING_SIZE	4096
#define FHOOK_EV_PARAM_MAX_STACK	2048	/* the kernel's THREAD_SIZE (16 KiB) / sizeof(long) */
#define FHOOK_EV_MAXACTIVE_MAX		4096
#define FHOOK_EV_MAX_ENTRY_ARGS		16	/* $argN a return event may use */
#define FHOOK_EV_DEFAULT_GROUP		"fprobes"
#define FHOOK_EV_KPROBE_GROUP		"kprobes"

/* FHOOK_FOP_ARG's parameter for a floating-point argument in vector register n (ABI order). */
#define FHOOK_EV_ARG_XMM		0x100

/* Fetch operations, as the kernel's FETCH_OP_*. */
enum fhook_fetch_op {
	FHOOK_FOP_NOP = 0,
	FHOOK_FOP_ARG,		/* param: integer register 0-5, stack slot 6.., or
				 * FHOOK_EV_ARG_XMM + n: vector register n */
	FHOOK_FOP_EDATA,	/* param: slot of an argument saved at entry */
	FHOOK_FOP_RETVAL,	/* param 0: the integer result register; 1: the vector one (a floating-point result) */
	FHOOK_FOP_STACKP,
	FHOOK_FOP_STACK,	/* param: word index */
	FHOOK_FOP_COMM,
	FHOOK_FOP_IMM,		/* param: the value */
	FHOOK_FOP_SYMBOL,	/* data: "sym[+-off]", resolved to an IMM in the process */
	FHOOK_FOP_DATA,		/* data: an immediate string */
	FHOOK_FOP_DEREF,	/* param: offset; load a long from value + offset */
	FHOOK_FOP_UDEREF,	/* the same (user and kernel memory are one here) */
	FHOOK_FOP_ADD,		/* param: offset; value += offset (char array fields) */
	FHOOK_FOP_MOD_BF,	/* lshift, rshift: extract a bitfield */
	FHOOK_FOP_END,
	FHOOK_FOP_REG,		/* param: index of the register's word in struct pt_regs */
};

struct fhook_fetch_insn {
	int op;
	long param;
	unsigned char lshift, rshift, basesize;
	char *data;
};

/* Argument types. */
enum fhook_ev_type {
	FHOOK_EVT_U8, FHOOK_EVT_U16, FHOOK_EVT_U32, FHOOK_EVT_U64,
	FHOOK_EVT_S8, FHOOK_EVT_S16, FHOOK_EVT_S32, FHOOK_EVT_S64,
	FHOOK_EVT_X8, FHOOK_EVT_X16, FHOOK_EVT_X32, FHOOK_EVT_X64,
	FHOOK_EVT_CHAR, FHOOK_EVT_SYMBOL,
	FHOOK_EVT_STRING, FHOOK_EVT_USTRING, FHOOK_EVT_SYMSTR,
	FHOOK_EVT_F32, FHOOK_EVT_F64,	/* floating point (from DWARF; not a kernel type) */
	FHOOK_EVT_NR,
};

/* Size in bytes of a value of @type in a record (strings: variable). */
unsigned int fhook_ev_type_size(int type);
bool fhook_ev_type_is_string(int type);
const char *fhook_ev_type_name(int type);

/**
 * struct fhook_event_arg - one fetch argument
 * @name:  its name (given, the DWARF name, or "argN")
 * @comm:  its expression as written (what dynamic_events shows after '=')
 * @type:  FHOOK_EVT_*
 * @count: array length, 0 for a scalar
 * @code:  the fetch program, ended by FHOOK_FOP_END
 */
struct fhook_event_arg {
	char *name;
	char *comm;
	int type;
	unsigned int count;
	struct fhook_fetch_insn code[FHOOK_EV_FETCH_INSN_MAX];
};

/**
 * struct fhook_event - a parsed fprobe event
 * @group, @event: names (the defaults are "fprobes" and SYM__entry/__exit)
 * @symbol:   the function, or a glob of functions
 * @is_return: a return (exit) event
 * @maxactive: MAXACTIVE, 0 when not given
 * @args, @nr_args: the fetch arguments
 * @entry_args, @nr_entry_args: for a return event, the argument indexes
 *		its $argN read, saved at entry (FHOOK_FOP_EDATA's slots)
 * @targets, @nr_targets: when @symbol is a C++ name or glob as a programmer
 *		writes it ("YAML::Parser::*"), the (mangled) symbols it matched
 * @kprobe:   a 'p' or 'r' event: a kprobe (kretprobe) on @symbol + @offset
 * @module:   its MOD (an object's file name or path), or NULL
 * @offset:   bytes into @symbol; with no @symbol, the address (link-time,
 *		in the program's executable)
 */
struct fhook_event {
	char group[FHOOK_EV_MAX_EVENT_NAME_LEN];
	char event[FHOOK_EV_MAX_EVENT_NAME_LEN];
	char *symbol;
	bool is_return;
	bool is_glob;
	bool is_remove;		/* "-:[GRP/]EVENT" */
	unsigned int maxactive;
	struct fhook_event_arg *args;
	int nr_args;
	int entry_args[FHOOK_EV_MAX_ENTRY_ARGS];
	int nr_entry_args;
	char **targets;		/* a C++ name or glob: the symbols it matched */
	int nr_targets;
	bool kprobe;
	char *module;
	unsigned long offset;
};

/**
 * struct fhook_event_error - where and why a definition was refused
 * @msg:     the kernel's message
 * @pos:     offset of the offending character in @command
 * @command: the definition's words joined by single spaces
 */
struct fhook_event_error {
	const char *msg;
	int pos;
	char command[4096];
};

struct fhook_event_prog;

/**
 * fhook_event_prog_open - the symbols and DWARF of a program to resolve against
 * @path:  the executable
 * @libs:  its shared objects (may be NULL)
 * @nr:    how many
 *
 * Reads the function and data symbols (and which functions have a
 * patchable site) of every file, and opens the DWARF of those that have
 * it.  Returns NULL with errno set if @path cannot be read.
 */
struct fhook_event_prog *fhook_event_prog_open(const char *path, char **libs, int nr);
void fhook_event_prog_close(struct fhook_event_prog *prog);

/**
 * fhook_event_parse - parse one definition
 * @spec: the definition, words separated by blanks
 * @prog: the program (symbols checked, DWARF names resolved), or NULL:
 *        then no symbol is checked and DWARF names are refused
 * @ev:   filled on success; free with fhook_event_free()
 * @err:  filled on failure
 *
 * Returns 0, -EINVAL (a syntax or resolution error: @err says which),
 * -ENOENT (@spec's symbol or a name in it is unknown: @err says which) or
 * -ENOMEM.
 */
int fhook_event_parse(const char *spec, struct fhook_event_prog *prog,
		      struct fhook_event *ev, struct fhook_event_error *err);
void fhook_event_free(struct fhook_event *ev);

/* Print @ev as the kernel's dynamic_events file shows it (one line). */
int fhook_event_snprint(char *buf, size_t size, const struct fhook_event *ev);

/*
 * Print @err in error_log form:
 *   fhook: error: <message>
 *     Command: <command>
 *              ^
 */
void fhook_event_print_error(FILE *f, const struct fhook_event_error *err);

#ifdef __cplusplus
}
#endif

#endif /* FHOOK_EVENTS_H */
