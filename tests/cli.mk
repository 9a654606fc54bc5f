# The fhook command's tests (tests/cli/): a driver of the decoder's C++
# names for test_cxxnames.sh, linked with the command's own objects (the
# decoder is not in libfhook).  Not a test_* program: the script runs it.
TEST_TARGETS += $(B)/tests/cli/cxxnames_dec

$(B)/tests/cli/cxxnames_dec: tests/cli/cxxnames_dec.c $(CMD_SRCS:%.c=$(B)/cmd/%.o)
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS_COMMON) -o $@ $< $(CMD_SRCS:%.c=$(B)/cmd/%.o) \
		-Wl,-Bstatic $(CLI_STATIC) -Wl,-Bdynamic $(CLI_LDLIBS)
