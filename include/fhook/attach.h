/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * fhook: the control channel of a running process (`fhook ... -p PID`).
 *
 * The fhook command reaches a running process through ptrace: it stops one
 * thread at a safe point, makes it call fhook_attach_ctl() with a request
 * written below that thread's stack, reads the reply, and puts the thread
 * back as it was (docs/attach.md).  A process without libfhook first gets
 * it with a dlopen() run the same way.  The first call starts a control
 * thread that serves the later requests on a Unix socket, so that they
 * stop no thread; nothing waits in a process that was never attached to,
 * and who may use either channel is decided by the kernel's ptrace rules.
 *
 * The entry point is for fhook's command, not for programs; it is in a
 * public header so that the library's version script keeps it.  The verbs'
 * table is <fhook/internal/attach.h>.
 */
#ifndef FHOOK_ATTACH_H
#define FHOOK_ATTACH_H

#ifdef __cplusplus
extern "C" {
#endif

/**
 * fhook_attach_ctl() - run one request of the fhook command
 * @req: one line, "VERB ARGS..." (words separated by tabs)
 *
 * Verbs: "hello" (the protocol version), "patch", "inject", "unpatch",
 * "list" (lib/livepatch/attach.c), "memfd", "trace-start", "trace-stop"
 * (lib/recorder/record_attach.c).
 *
 * Context: called on a thread the command hijacked at a safe point (not
 * inside the loader, malloc, or a handler), with every asynchronous signal
 * blocked; errno is as it was on return.  Requests are serialized (with
 * the control thread's too).  The first call starts the control thread.
 * Return: the reply, NUL-terminated, valid until the next call: "ok" or
 * "error" on the first line, then the verb's output (the messages, for an
 * error).
 */
const char *fhook_attach_ctl(const char *req);

/* The protocol this library speaks ("hello" answers it). */
#define FHOOK_ATTACH_PROTO	1

#ifdef __cplusplus
}
#endif

#endif /* FHOOK_ATTACH_H */
