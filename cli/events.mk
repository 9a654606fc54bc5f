# fhook trace
CLI_SRCS += cli/trace.c
