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
