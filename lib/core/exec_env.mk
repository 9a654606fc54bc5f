# Children started with an environment of their own stay traced.
LIB_SRCS += lib/core/exec_env.c
