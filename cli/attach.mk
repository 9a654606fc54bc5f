# fhook ... -p PID: attaching to a running process (ptrace), and the
# commands' attached modes.  The command reads the sites of the process's
# files with the ELF reader it shares with libfhook (CMD_SRCS).  What the
# ptrace code knows of the architecture is in cli/attach/arch/$(ARCH).c
# (x86-64, aarch64); elsewhere every -p says attaching is not built
# (attach_none.c), and what reads /proc (maps.c, target.c) stays.
ifneq ($(wildcard cli/attach/arch/$(ARCH).c),)
CLI_SRCS += $(addprefix cli/attach/,attach.c call.c ctl.c load.c maps.c target.c threads.c world.c) \
	    cli/attach/arch/$(ARCH).c
else
CLI_SRCS += cli/attach/maps.c cli/attach/target.c cli/attach_none.c
endif
CLI_SRCS += cli/attach_cmd.c cli/attach_ev.c
