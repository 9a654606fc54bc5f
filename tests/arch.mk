# The live-argument analysis alone: its functions decoded where they are.
$(B)/tests/arch/test_livein: tests/arch/test_livein.c tests/check.h lib/arch/x86_64/livein.c \
		lib/arch/x86_64/cs.c lib/arch/x86_64/cs.h lib/arch/x86_64/vecfree.c \
		lib/arch/x86_64/vecfree.h lib/util/libc.c
	@mkdir -p $(dir $@)
	$(CC) -std=gnu11 -O2 -g -Wall -Iinclude -Ilib -Ilib/arch/x86_64 $(SAN) -o $@ $< \
		lib/arch/x86_64/livein.c lib/arch/x86_64/cs.c lib/arch/x86_64/vecfree.c \
		lib/util/libc.c -ldl $(SAN)
