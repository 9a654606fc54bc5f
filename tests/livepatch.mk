# Helpers of tests/livepatch/test_cli.sh: a traceable program that is not
# linked with libfhook (the command preloads it) and a replacement library.
$(B)/tests/livepatch/lp_prog: tests/livepatch/lp_prog.c
	@mkdir -p $(dir $@)
	$(CC) -std=gnu11 -O2 -g -Wall $(FHOOK_SITE_CFLAGS) -rdynamic $(SAN) \
		-o $@ $< -ldl

$(B)/tests/livepatch/lp_repl.so: tests/livepatch/lp_repl.c
	@mkdir -p $(dir $@)
	$(CC) -std=gnu11 -O2 -g -Wall -fPIC -shared $(SAN) -o $@ $<

TEST_TARGETS += $(B)/tests/livepatch/lp_prog $(B)/tests/livepatch/lp_repl.so

# aarch64: the redirects built with pointer authentication and BTI landing
# pads: a replacement entered with the caller's return address signs it
# as the function would have (tests/fprobe.mk).
ifeq ($(ARCH),aarch64)
LP_PAC_PROGS := test_redirect test_inject
TEST_TARGETS += $(LP_PAC_PROGS:%=$(B)/tests/livepatch/%_pac)
$(LP_PAC_PROGS:%=$(B)/tests/livepatch/%_pac): $(B)/tests/livepatch/%_pac: tests/livepatch/%.c \
		tests/check.h $(B)/libfhook.so
	@mkdir -p $(dir $@)
	$(CC) $(TEST_CFLAGS) -mbranch-protection=standard -o $@ $< $(TEST_LDFLAGS)
endif
