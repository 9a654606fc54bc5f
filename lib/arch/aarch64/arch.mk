# aarch64: what lib/arch/arch.h asks of an architecture.
LIB_SRCS += lib/arch/aarch64/hooks.c lib/arch/aarch64/insn.c lib/arch/aarch64/text_poke.c \
	lib/arch/aarch64/stubs.c lib/arch/aarch64/rethook.c lib/arch/aarch64/redirect.c \
	lib/arch/aarch64/longjmp.c lib/arch/aarch64/branches.c lib/arch/aarch64/unsupported.c \
	lib/arch/aarch64/kprobe.c lib/arch/aarch64/kprobe_insn.c
LIB_ASM  += lib/arch/aarch64/trampoline.S lib/arch/aarch64/graph_rec.S
# the kernel's CALL_OPS pads: two words before the entry (the literal), two at it
FHOOK_SITE_CFLAGS := -fpatchable-function-entry=4,2
# the command's view of a kprobe's placement in a file
CMD_SRCS += lib/arch/aarch64/kprobe_file.c
