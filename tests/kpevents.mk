# The kprobe events' programs, built without fhook's flags: a program, a
# stripped copy, a library it loads with dlopen(), and a counter of
# liblzma's lzma_code() by interposition (an independent count for xz),
# a replacement of kp_add for fhook patch, and a program to attach to.
TEST_TARGETS += $(B)/tests/events/kp_prog $(B)/tests/events/kp_prog_stripped \
	$(B)/tests/events/kp_lib.so $(B)/tests/events/kp_count.so $(B)/tests/events/kp_repl.so \
	$(B)/tests/events/kp_loop

$(B)/tests/events/kp_prog: tests/events/kp_prog.c
	@mkdir -p $(dir $@)
	$(CC) -std=gnu11 -O2 $(SAN) -o $@ $< -ldl

$(B)/tests/events/kp_prog_stripped: $(B)/tests/events/kp_prog
	$(STRIP) --strip-all -o $@ $<

$(B)/tests/events/kp_lib.so: tests/events/kp_lib.c
	@mkdir -p $(dir $@)
	$(CC) -std=gnu11 -O2 -fPIC -shared $(SAN) -o $@ $<

$(B)/tests/events/kp_count.so: tests/events/kp_count.c
	@mkdir -p $(dir $@)
	$(CC) -std=gnu11 -O2 -fPIC -shared $(SAN) -o $@ $< -ldl

$(B)/tests/events/kp_repl.so: tests/events/kp_repl.c
	@mkdir -p $(dir $@)
	$(CC) -std=gnu11 -O2 -fPIC -shared $(SAN) -o $@ $<

$(B)/tests/events/kp_loop: tests/events/kp_loop.c
	@mkdir -p $(dir $@)
	$(CC) -std=gnu11 -O2 $(SAN) -o $@ $<
