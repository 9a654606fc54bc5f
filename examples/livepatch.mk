# The redirect by caller in user space: the memcg server and the ported
# kernel module (a shared object it dlopens), plus the replacement library the
# `fhook patch` tests and README use.
EX_TRACE_CFLAGS := -std=gnu11 -O2 -g -Wall -Iinclude -fpatchable-function-entry=5 $(SAN)

$(B)/examples/memcg/memcg: examples/memcg/memcg.c examples/memcg/memcg.h
	@mkdir -p $(dir $@)
	$(CC) $(EX_TRACE_CFLAGS) -rdynamic -o $@ $< -ldl $(SAN)

# Linked with libfhook (which brings the ftrace core in, as the kernel has
# it built in); seq_printf comes from the program, as a module's symbols
# come from the kernel.
$(B)/examples/caller-redirect/caller_redirect.so: examples/caller-redirect/caller_redirect.c \
		examples/memcg/memcg.h $(B)/libfhook.so
	@mkdir -p $(dir $@)
	$(CC) -std=gnu11 -O2 -g -Wall -Wno-sign-compare -Iinclude -fPIC -shared $(SAN) \
		-o $@ $< -L$(B) -lfhook -Wl,-rpath,'$$ORIGIN/../..'

EXTRA_TARGETS += $(B)/examples/memcg/memcg $(B)/examples/caller-redirect/caller_redirect.so
