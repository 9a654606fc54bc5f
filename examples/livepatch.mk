# The seed-000 scenario in user space: the memcg server and the ported
# module (a shared object it dlopens), plus the replacement library the
# `fhook patch` tests and README use.
EX_TRACE_CFLAGS := -std=gnu11 -O2 -g -Wall -Iinclude -fpatchable-function-entry=5 $(SAN)

$(B)/examples/memcg/memcg: examples/memcg/memcg.c examples/memcg/memcg.h
	@mkdir -p $(dir $@)
	$(CC) $(EX_TRACE_CFLAGS) -rdynamic -o $@ $< -ldl $(SAN)

# Linked with libfhook (which brings the ftrace core in, as the kernel has
# it built in); seq_printf comes from the program, as a module's symbols
# come from the kernel.
$(B)/examples/seed-module/seed_module.so: examples/seed-module/seed_module.c \
		examples/memcg/memcg.h $(B)/libfhook.so
	@mkdir -p $(dir $@)
	$(CC) -std=gnu11 -O2 -g -Wall -Wno-sign-compare -Iinclude -fPIC -shared $(SAN) \
		-o $@ $< -L$(B) -lfhook -Wl,-rpath,'$$ORIGIN/../..'

EXTRA_TARGETS += $(B)/examples/memcg/memcg $(B)/examples/seed-module/seed_module.so
