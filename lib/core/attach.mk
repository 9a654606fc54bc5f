# The control channel of a running process (`fhook ... -p PID`): the entry
# point the command calls in the process, the control thread that serves
# later requests, and the verbs of livepatch and the recorder.
LIB_SRCS += lib/core/control.c lib/core/ctl_thread.c lib/livepatch/attach.c
