# Caller-selective redirect, fault injection, and the preload entry of
# `fhook patch` / `fhook inject`.
LIB_SRCS += lib/livepatch/livepatch.c lib/livepatch/caller.c lib/livepatch/preload.c lib/livepatch/replacement.c
