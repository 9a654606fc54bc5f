# Test programs: every tests/<layer>/test_*.c becomes build/tests/<layer>/test_*,
# built traceable and linked with libfhook.  A layer's own fragment may add
# TEST_TARGETS with other recipes.
TEST_CFLAGS := -std=gnu11 -O2 -g -Wall -Iinclude $(FHOOK_SITE_CFLAGS) $(SAN)
TEST_LDFLAGS := -L$(B) -lfhook -Wl,-rpath,$(CURDIR)/$(B) -lpthread -ldl $(SAN)
TEST_C_SRCS := $(wildcard tests/*/test_*.c)
TEST_TARGETS += $(TEST_C_SRCS:tests/%.c=$(B)/tests/%)

$(B)/tests/%: tests/%.c tests/check.h $(B)/libfhook.so
	@mkdir -p $(dir $@)
	$(CC) $(TEST_CFLAGS) -o $@ $< $(TEST_LDFLAGS)
