# The events tests' known program: DWARF, instrumented, not linked with libfhook.
TEST_TARGETS += $(B)/tests/events/prog

$(B)/tests/events/prog: tests/events/prog.c
	@mkdir -p $(dir $@)
	$(CC) -std=gnu11 -O1 -g -fpatchable-function-entry=5 $(SAN) -o $@ $< -lpthread

# A program that starts generations of itself with an empty environment.
TEST_TARGETS += $(B)/tests/events/spawn_env_prog

$(B)/tests/events/spawn_env_prog: tests/events/spawn_env_prog.c
	@mkdir -p $(dir $@)
	$(CC) -std=gnu11 -O1 -g -fpatchable-function-entry=5 $(SAN) -o $@ $<

# A program with its own (traceable) allocator.
TEST_TARGETS += $(B)/tests/events/own_malloc_prog

$(B)/tests/events/own_malloc_prog: tests/events/own_malloc_prog.c
	@mkdir -p $(dir $@)
	$(CC) -std=gnu11 -O1 -g -fpatchable-function-entry=5 $(SAN) -o $@ $< -lpthread
