# kprobes: the hand-written functions of kp_funcs.S are linked into the test
# (test_kretprobes and test_kprobes_stress on aarch64: their editions of
# the functions those use, kp_funcs_a64.S).
KP_FUNCS := tests/kprobes/$(if $(filter aarch64,$(ARCH)),kp_funcs_a64.S,kp_funcs.S)
$(B)/tests/kprobes/test_kprobes: tests/kprobes/test_kprobes.c tests/kprobes/kp_funcs.S \
		tests/check.h $(B)/libfhook.so
	@mkdir -p $(dir $@)
	$(CC) $(TEST_CFLAGS) -o $@ $< tests/kprobes/kp_funcs.S $(TEST_LDFLAGS)

$(B)/tests/kprobes/test_kretprobes: tests/kprobes/test_kretprobes.c $(KP_FUNCS) \
		tests/check.h $(B)/libfhook.so
	@mkdir -p $(dir $@)
	$(CC) $(TEST_CFLAGS) -o $@ $< $(KP_FUNCS) $(TEST_LDFLAGS)

$(B)/tests/kprobes/test_kprobes_stress: tests/kprobes/test_kprobes_stress.c \
		$(KP_FUNCS) tests/check.h $(B)/libfhook.so
	@mkdir -p $(dir $@)
	$(CC) $(TEST_CFLAGS) -o $@ $< $(KP_FUNCS) $(TEST_LDFLAGS)

# preloaded into unmodified programs: every function of some objects probed
TEST_TARGETS += $(B)/tests/kprobes/kpcover.so
$(B)/tests/kprobes/kpcover.so: tests/kprobes/kpcover.c $(B)/libfhook.so
	@mkdir -p $(dir $@)
	$(CC) -std=gnu11 -O2 -g -Wall -Iinclude -fPIC -shared $(SAN) -o $@ $< $(TEST_LDFLAGS)

# two libraries without fhook flags: one unloaded under a probe, one loaded after it
TEST_TARGETS += $(B)/tests/kprobes/kpgone_a.so $(B)/tests/kprobes/kpgone_b.so
$(B)/tests/kprobes/kpgone_%.so: tests/kprobes/kpgone_%.c
	@mkdir -p $(dir $@)
	$(CC) -std=gnu11 -O2 -g -Wall -fPIC -shared -o $@ $<

# aarch64: a probe on each class of instruction (kp_a64.S), run by `make test-aarch64`
$(B)/tests/kprobes/test_kprobes_a64: tests/kprobes/test_kprobes_a64.c tests/kprobes/kp_a64.S \
		tests/check.h $(B)/libfhook.so
	@mkdir -p $(dir $@)
	$(CC) $(TEST_CFLAGS) -o $@ $< tests/kprobes/kp_a64.S $(TEST_LDFLAGS)

ifeq ($(ARCH),aarch64)
TEST_TARGETS += $(B)/tests/kprobes/test_kprobes_a64_pac
endif
# ... and built with pointer authentication and BTI landing pads, its text
# guarded although the C runtime's start files have no BTI note (the linker
# says so: a warning), so that a brk on "bti c" is reached by a guarded call
$(B)/tests/kprobes/test_kprobes_a64_pac: tests/kprobes/test_kprobes_a64.c \
		tests/kprobes/kp_a64.S tests/check.h $(B)/libfhook.so
	@mkdir -p $(dir $@)
	$(CC) $(TEST_CFLAGS) -mbranch-protection=standard -Wl,-z,force-bti -o $@ $< \
		tests/kprobes/kp_a64.S $(TEST_LDFLAGS)
