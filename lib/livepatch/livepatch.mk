# Caller-selective redirect, fault injection, and the preload entry of
# `fhook patch` / `fhook inject`.  libcapstone (the tail-call check) is
# opened with dlopen() at first use, not linked.
LIB_SRCS += lib/livepatch/livepatch.c lib/livepatch/tailcall.c lib/livepatch/preload.c
