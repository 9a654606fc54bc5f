# fprobe events, the command's side (linked into the fhook command only,
# never into a traced process): the grammar (parse*.c), program symbols and
# DWARF (prog.c, dwarf.c), the recording session and its drain
# (session.c), and reading a recording back (decode.c, calls.c, format.c,
# perfetto.c).  What runs in the traced process is lib/recorder/.
CMD_SRCS += lib/events/parse.c lib/events/parse_args.c lib/events/parse_dwarf.c \
	lib/events/prog.c lib/events/prog_cxx.c lib/events/dwarf.c \
	lib/events/session.c lib/events/decode.c lib/events/calls.c lib/events/format.c \
	lib/events/perfetto.c lib/events/filter.c
# C++ names (cxxname.c): libiberty's demangler.
CMD_SRCS += lib/events/cxxname.c
# What a recording is (RF_INFO): written by the session, read by decode.c.
CMD_SRCS += lib/events/recinfo.c
CLI_STATIC := -ldw $(CLI_STATIC) -llzma -lbz2 -liberty -lstdc++
CLI_LDLIBS += -lpthread
