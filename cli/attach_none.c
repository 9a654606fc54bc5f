// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * The attach entry points (cli/attach.h) where attaching to a running
 * process is not built: cli/attach/arch/ has no code for the
 * architecture (cli/attach.mk).  Every `-p PID` says so; the rest of
 * the command (what reads /proc, cli/attach/maps.c and target.c) is the
 * same.
 */
#include <errno.h>
#include <stdio.h>

#include "attach.h"
#include "arch_insn.h"

bool cli_attach_no_sites_ok;

int cli_attach_open(const char *cmd, pid_t pid, struct cli_attach **out)
{
	*out = NULL;
	fprintf(stderr, "fhook: %s: -p %d: attaching to a running process is not built "
		"for " FHOOK_ARCH_NAME "\n", cmd, pid);
	return -EOPNOTSUPP;
}

int cli_attach_ctl(struct cli_attach *a, const char *req, char **reply)
{
	*reply = NULL;
	return -EOPNOTSUPP;
}

int cli_attach_getfd(struct cli_attach *a, int fd)
{
	return -EOPNOTSUPP;
}

void cli_attach_close(struct cli_attach *a)
{
}
