# kprobes and kretprobes on any code (lib/arch relocates and traps); globs'
# batches and the functions they leave out (nokprobe.c, the command's too)
LIB_SRCS += lib/kprobes/kprobes.c lib/kprobes/kretprobe.c lib/kprobes/lp_kprobe.c \
	lib/kprobes/kpglob.c lib/kprobes/nokprobe.c
CMD_SRCS += lib/kprobes/nokprobe.c
