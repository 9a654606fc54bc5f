# The events tests' known program: DWARF, instrumented, not linked with libfhook.
TEST_TARGETS += $(B)/tests/events/prog

$(B)/tests/events/prog: tests/events/prog.c
	@mkdir -p $(dir $@)
	$(CC) -std=gnu11 -O1 -g -fpatchable-function-entry=5 $(SAN) -o $@ $< -lpthread
