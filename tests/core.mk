# Extra builds for tests/core.
TEST_TARGETS += $(B)/tests/core/libdltarget.so

$(B)/tests/core/libdltarget.so: tests/core/dltarget.c
	@mkdir -p $(dir $@)
	$(CC) -O2 -g -fPIC -shared -fpatchable-function-entry=5 -o $@ $<
