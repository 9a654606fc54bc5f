# Test programs: every tests/<layer>/test_*.c becomes build/tests/<layer>/test_*,
# built traceable and linked with libfhook.  A layer's own fragment may add
# TEST_TARGETS with other recipes.
TEST_CFLAGS := -std=gnu11 -O2 -g -Wall -Iinclude $(FHOOK_SITE_CFLAGS) $(SAN)
TEST_LDFLAGS := -L$(B) -lfhook -Wl,-rpath,$(CURDIR)/$(B) -lpthread -ldl $(SAN)
# tests/<layer>/test_*_<arch>.c: of one architecture's instructions, built for it only
ARCH_TEST_SRCS := tests/kprobes/test_kprobes_a64.c
ARCH_TEST_SRCS_aarch64 := tests/kprobes/test_kprobes_a64.c
TEST_C_SRCS := $(filter-out $(filter-out $(ARCH_TEST_SRCS_$(ARCH)),$(ARCH_TEST_SRCS)), \
			    $(wildcard tests/*/test_*.c))
TEST_TARGETS += $(TEST_C_SRCS:tests/%.c=$(B)/tests/%)

$(B)/tests/%: tests/%.c tests/check.h $(B)/libfhook.so
	@mkdir -p $(dir $@)
	$(CC) $(TEST_CFLAGS) -o $@ $< $(TEST_LDFLAGS)
