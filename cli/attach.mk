# fhook ... -p PID: attaching to a running process (ptrace), and the
# commands' attached modes.  The command reads the sites of the process's
# files with the ELF reader it shares with libfhook (CMD_SRCS).  The
# ptrace code is x86-64's: elsewhere every -p says it is not built
# (attach_none.c), and what reads /proc (maps.c, target.c) stays.
ifeq ($(ARCH),x86_64)
CLI_SRCS += $(addprefix cli/attach/,attach.c call.c ctl.c load.c maps.c target.c threads.c world.c)
else
CLI_SRCS += cli/attach/maps.c cli/attach/target.c cli/attach_none.c
endif
CLI_SRCS += cli/attach_cmd.c cli/attach_ev.c
