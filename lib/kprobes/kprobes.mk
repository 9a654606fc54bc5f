# kprobes and kretprobes on any code (lib/arch relocates and traps)
LIB_SRCS += lib/kprobes/kprobes.c lib/kprobes/kretprobe.c lib/kprobes/lp_kprobe.c
