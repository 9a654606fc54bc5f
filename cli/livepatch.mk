# fhook patch / fhook inject
CLI_SRCS += cli/patch.c cli/inject.c cli/with_check.c
