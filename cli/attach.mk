# fhook ... -p PID: attaching to a running process (ptrace), and the
# commands' attached modes.  The command reads the sites of the process's
# files with the ELF reader it shares with libfhook (CMD_SRCS).
CLI_SRCS += $(addprefix cli/attach/,attach.c call.c ctl.c load.c maps.c target.c threads.c world.c) \
	    cli/attach/arch/$(ARCH).c \
	    cli/attach_cmd.c cli/attach_ev.c
