# x86-64: what lib/arch/arch.h asks of an architecture.
LIB_SRCS += lib/arch/x86_64/hooks.c lib/arch/x86_64/insn.c lib/arch/x86_64/text_poke.c \
	lib/arch/x86_64/stubs.c lib/arch/x86_64/rethook.c lib/arch/x86_64/longjmp.c \
	lib/arch/x86_64/redirect.c lib/arch/x86_64/branches.c \
	lib/arch/x86_64/direct.c lib/arch/x86_64/gen.c lib/arch/x86_64/kprobe.c \
	lib/arch/x86_64/kprobe_insn.c lib/arch/x86_64/vecscan.c \
	lib/arch/x86_64/cs.c lib/arch/x86_64/vecfree.c lib/arch/x86_64/vecnote.c \
	lib/arch/x86_64/livein.c
LIB_ASM  += lib/arch/x86_64/trampoline.S lib/arch/x86_64/rethook_tramp.S \
	lib/arch/x86_64/graph_rec.S lib/arch/x86_64/kprobe_tramp.S
# what a program is built with to have sites fhook can patch
FHOOK_SITE_CFLAGS := -fpatchable-function-entry=5
# the command's decoder (capstone, loaded when needed) and its view of a
# kprobe's placement in a file
CMD_SRCS += lib/arch/x86_64/branches.c lib/arch/x86_64/cs.c lib/arch/x86_64/kprobe_file.c
# the assembler front end `fhook cflags` gives GCC (proven handlers)
ARCH_TARGETS := $(B)/gcc-as/as
