# The events tests' known program: DWARF, instrumented, not linked with libfhook.
TEST_TARGETS += $(B)/tests/events/prog

$(B)/tests/events/prog: tests/events/prog.c
	@mkdir -p $(dir $@)
	$(CC) -std=gnu11 -O1 -g $(FHOOK_SITE_CFLAGS) $(SAN) -o $@ $< -lpthread

# The Perfetto writer is the command's, not libfhook's: its unit test links
# it directly (an explicit rule, so tests.mk's pattern rule does not apply).
$(B)/tests/events/test_perfetto_unit: tests/events/test_perfetto_unit.c lib/events/perfetto.c \
		lib/events/perfetto.h lib/events/decode.h $(B)/libfhook.so
	@mkdir -p $(dir $@)
	$(CC) $(TEST_CFLAGS) -Ilib -Ilib/events -o $@ tests/events/test_perfetto_unit.c \
		lib/events/perfetto.c lib/recorder/types.c $(TEST_LDFLAGS)

# fhook record's tests: known calls and sleeps, threads, strings, a long run.
TEST_TARGETS += $(B)/tests/events/rec_prog

$(B)/tests/events/rec_prog: tests/events/rec_prog.c
	@mkdir -p $(dir $@)
	$(CC) -std=gnu11 -O1 -g $(FHOOK_SITE_CFLAGS) $(SAN) -o $@ $< -lpthread

# A C++ program, built by g++ and by clang++: names, parameters, exceptions.
TEST_TARGETS += $(B)/tests/events/cxx_prog_gcc $(B)/tests/events/cxx_prog_clang

$(B)/tests/events/cxx_prog_gcc: tests/events/cxx_prog.cc
	@mkdir -p $(dir $@)
	$(CXX) -std=gnu++17 -O1 -g $(FHOOK_SITE_CFLAGS) $(SAN) -o $@ $<

$(B)/tests/events/cxx_prog_clang: tests/events/cxx_prog.cc
	@mkdir -p $(dir $@)
	clang++ $(if $(filter-out $(shell uname -m),$(ARCH)),--target=$(ARCH)-linux-gnu) -std=gnu++17 -O1 -g $(FHOOK_SITE_CFLAGS) $(SAN) -o $@ $<

# A program that starts generations of itself with an empty environment.
TEST_TARGETS += $(B)/tests/events/spawn_env_prog

$(B)/tests/events/spawn_env_prog: tests/events/spawn_env_prog.c
	@mkdir -p $(dir $@)
	$(CC) -std=gnu11 -O1 -g $(FHOOK_SITE_CFLAGS) $(SAN) -o $@ $<

# A program with its own (traceable) allocator.
TEST_TARGETS += $(B)/tests/events/own_malloc_prog

$(B)/tests/events/own_malloc_prog: tests/events/own_malloc_prog.c
	@mkdir -p $(dir $@)
	$(CC) -std=gnu11 -O1 -g $(FHOOK_SITE_CFLAGS) $(SAN) -o $@ $< -lpthread

# C++ names (lib/events/cxxname.c, the command's): the unit test links it and
# libiberty directly (an explicit rule: tests.mk's pattern rule links libfhook).
$(B)/tests/events/test_cxxname_unit: tests/events/test_cxxname_unit.c lib/events/cxxname.c \
		lib/events/cxxname.h tests/check.h
	@mkdir -p $(dir $@)
	$(CC) $(TEST_CFLAGS) -Ilib/events -o $@ tests/events/test_cxxname_unit.c \
		lib/events/cxxname.c -liberty $(SAN)

# The event description and the filter compiler (the recorder's and the
# command's): the unit test links them directly.
$(B)/tests/events/test_evdesc_unit: tests/events/test_evdesc_unit.c lib/recorder/evdesc.c \
		lib/recorder/evdesc_write.c lib/recorder/evdesc.h lib/events/filter.c \
		lib/events/filter.h lib/recorder/types.c tests/check.h
	@mkdir -p $(dir $@)
	$(CC) $(TEST_CFLAGS) -Ilib -o $@ tests/events/test_evdesc_unit.c lib/recorder/evdesc.c \
		lib/recorder/evdesc_write.c lib/events/filter.c lib/recorder/types.c $(SAN)

# Preloaded into fhook record: a file system that refuses direct I/O, at
# open or at write, or one that counts it (without the sanitizers: the
# traced program inherits it).
TEST_TARGETS += $(B)/tests/events/no_direct_io.so

$(B)/tests/events/no_direct_io.so: tests/events/no_direct_io.c
	@mkdir -p $(dir $@)
	$(CC) -std=gnu11 -O2 -g -Wall -fPIC -shared -o $@ $< -ldl

# Arguments of every width in registers: events written straight into the ring.
TEST_TARGETS += $(B)/tests/events/fast_args_prog

$(B)/tests/events/fast_args_prog: tests/events/fast_args_prog.c
	@mkdir -p $(dir $@)
	$(CC) -std=gnu11 -O1 -g $(FHOOK_SITE_CFLAGS) $(SAN) -o $@ $<
