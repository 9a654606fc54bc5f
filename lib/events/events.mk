# fprobe events.  In libfhook (the traced process): the recorder
# (record*.c, which record.h lists) and the fetch types (types.c).  In the
# fhook command only: the grammar (parse*.c), program symbols and DWARF
# (prog.c, dwarf.c), the recording session and its drain (session.c), and
# reading a recording back (decode.c, format.c).  libdw never enters a
# traced process.
LIB_SRCS += lib/events/record.c lib/events/record_fetch.c lib/events/record_kprobe.c \
	lib/events/record_desc.c lib/events/record_proc.c lib/events/record_shm.c \
	lib/events/record_setup.c lib/events/record_attach.c lib/events/record_trigger.c \
	lib/events/types.c
CMD_SRCS += lib/events/parse.c lib/events/parse_args.c lib/events/parse_dwarf.c \
	lib/events/prog.c lib/events/dwarf.c lib/events/types.c \
	lib/events/session.c lib/events/decode.c lib/events/calls.c lib/events/format.c \
	lib/events/perfetto.c
# C++ names (cxxname.c): libiberty's demangler, linked into the command alone.
CMD_SRCS += lib/events/cxxname.c
# What a recording is (RF_INFO): written by the session, read by decode.c.
CMD_SRCS += lib/events/recinfo.c
CLI_STATIC := -ldw $(CLI_STATIC) -llzma -lbz2 -liberty -lstdc++
CLI_LDLIBS += -lpthread
