# fhook ... -p PID: attaching to a running process (ptrace), and the
# commands' attached modes.  The command reads the sites of the process's
# files with libfhook's own ELF reader.
CLI_SRCS += cli/attach.c cli/attach_cmd.c cli/attach_ev.c
CMD_SRCS += lib/kallsyms/elf.c
