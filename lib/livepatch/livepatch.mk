# Caller-selective redirect, fault injection, and the preload entry of
# `fhook patch` / `fhook inject`.
LIB_SRCS += lib/livepatch/livepatch.c lib/livepatch/tailcall.c lib/livepatch/preload.c
LIB_LDLIBS += -lcapstone
