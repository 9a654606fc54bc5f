# fprobe events: grammar (parse.c), program symbols and DWARF (prog.c,
# dwarf.c), in-process recording (record.c), ring buffers (ring.c) and
# decoding and formatting for `fhook trace` (format.c).
LIB_SRCS += lib/events/parse.c lib/events/prog.c lib/events/dwarf.c \
	lib/events/record.c lib/events/trace.c
LIB_LDLIBS += -ldw
