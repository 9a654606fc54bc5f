# The kprobe events' program: built without fhook's flags, and a stripped copy.
TEST_TARGETS += $(B)/tests/events/kp_prog $(B)/tests/events/kp_prog_stripped

$(B)/tests/events/kp_prog: tests/events/kp_prog.c
	@mkdir -p $(dir $@)
	$(CC) -std=gnu11 -O2 $(SAN) -o $@ $<

$(B)/tests/events/kp_prog_stripped: $(B)/tests/events/kp_prog
	strip --strip-all -o $@ $<
