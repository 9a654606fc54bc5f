# Helpers of tests/attach/*.sh: a traceable 8-thread program that is not
# linked with libfhook (fhook loads it when it attaches), replacements, and
# a client of the control socket that does not prove its permission, a
# wrapper that runs a program under a seccomp filter, and a library that
# wraps pthread_create().
$(B)/tests/attach/att_prog: tests/attach/att_prog.c
	@mkdir -p $(dir $@)
	$(CC) -std=gnu11 -O2 -g -Wall $(FHOOK_SITE_CFLAGS) $(SAN) -o $@ $< -lpthread -ldl

$(B)/tests/attach/att_repl.so: tests/attach/att_repl.c
	@mkdir -p $(dir $@)
	$(CC) -std=gnu11 -O2 -g -Wall -fPIC -shared $(SAN) -o $@ $<

$(B)/tests/attach/att_slow.so: tests/attach/att_slow.c
	@mkdir -p $(dir $@)
	$(CC) -std=gnu11 -O2 -g -Wall -fPIC -shared -fpatchable-function-entry=5 $(SAN) -o $@ $<

$(B)/tests/attach/att_wrap.so: tests/attach/att_wrap.c
	@mkdir -p $(dir $@)
	$(CC) -std=gnu11 -O2 -g -Wall -fPIC -shared $(SAN) -o $@ $< -ldl

$(B)/tests/attach/att_ctl_client: tests/attach/att_ctl_client.c
	@mkdir -p $(dir $@)
	$(CC) -std=gnu11 -O2 -g -Wall $(SAN) -o $@ $<

$(B)/tests/attach/att_seccomp: tests/attach/att_seccomp.c
	@mkdir -p $(dir $@)
	$(CC) -std=gnu11 -O2 -g -Wall $(SAN) -o $@ $<

$(B)/tests/attach/att_hostile: tests/attach/att_hostile.c
	@mkdir -p $(dir $@)
	$(CC) -std=gnu11 -O2 -g -Wall -fpatchable-function-entry=5 $(SAN) -o $@ $< -lpthread

TEST_TARGETS += $(B)/tests/attach/att_hostile $(B)/tests/attach/att_prog $(B)/tests/attach/att_repl.so $(B)/tests/attach/att_slow.so \
	$(B)/tests/attach/att_ctl_client $(B)/tests/attach/att_seccomp $(B)/tests/attach/att_wrap.so \
	$(B)/tests/attach/att_sleep $(B)/tests/attach/att_park

# a process whose one thread sleeps or reads (the syscall restart after an attach)
$(B)/tests/attach/att_sleep: tests/attach/att_sleep.c
	@mkdir -p $(dir $@)
	$(CC) -std=gnu11 -O2 -g -Wall $(FHOOK_SITE_CFLAGS) $(SAN) -o $@ $<

# puts a thread of another process between two nops of a pad (by ptrace
# single steps) and leaves it there with a signal
$(B)/tests/attach/att_park: tests/attach/att_park.c tests/thread_pc.h
	@mkdir -p $(dir $@)
	$(CC) -std=gnu11 -O2 -g -Wall $(SAN) -o $@ $<
