# The recorder: the part of fprobe events that runs inside the traced
# process, in libfhook.  It runs the fetch programs the command compiled,
# writes each thread's records into its ring (ring.h) and keeps the shared
# memory's process mailbox.  The fetch types (types.c) and the event
# description's parser (evdesc.c) the command links too, with the
# description's writer (evdesc_write.c), which is the command's alone.
# Nothing here uses libdw or the command's files.
LIB_SRCS += lib/recorder/record.c lib/recorder/record_fetch.c lib/recorder/record_kprobe.c \
	lib/recorder/record_desc.c lib/recorder/record_proc.c lib/recorder/record_shm.c \
	lib/recorder/record_setup.c lib/recorder/record_attach.c lib/recorder/record_trigger.c \
	lib/recorder/record_filter.c lib/recorder/types.c lib/recorder/evdesc.c
CMD_SRCS += lib/recorder/types.c lib/recorder/evdesc.c lib/recorder/evdesc_write.c
