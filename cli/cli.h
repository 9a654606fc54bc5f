/* SPDX-License-Identifier: LGPL-2.1-or-later */
#ifndef FHOOK_CLI_H
#define FHOOK_CLI_H

int cmd_prepare(int argc, char **argv);
int cmd_funcs(int argc, char **argv);

/* Libraries PROG would load, as the dynamic loader resolves them. */
int cli_program_objects(const char *prog, char ***paths, int *nr);

#endif
