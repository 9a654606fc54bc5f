# fprobe and rethook (return hooks on a per-thread shadow stack)
LIB_SRCS += lib/fprobe/fprobe.c lib/fprobe/rethook.c lib/fprobe/rethook_unwind.c
