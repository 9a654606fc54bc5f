# Extra builds for tests/core.
TEST_TARGETS += $(B)/tests/core/libdltarget.so

$(B)/tests/core/libdltarget.so: tests/core/dltarget.c
	@mkdir -p $(dir $@)
	$(CC) -O2 -g -fPIC -shared $(FHOOK_SITE_CFLAGS) -o $@ $<

# A program without patchable sites: built without the flags.
TEST_TARGETS += $(B)/tests/core/test_nosites
$(B)/tests/core/test_nosites: tests/core/nosites.c $(B)/libfhook.so
	@mkdir -p $(dir $@)
	$(CC) -std=gnu11 -O2 -g -Iinclude $(SAN) -o $@ $< $(TEST_LDFLAGS)
$(B)/tests/core/test_dlopen_glob: $(B)/tests/core/libdltarget.so

# Built with fhook's flags whole (its assembler front end proves handlers).
$(B)/tests/core/test_vecnote: tests/core/test_vecnote.c tests/check.h $(B)/libfhook.so \
			      $(B)/gcc-as/as
	@mkdir -p $(dir $@)
	$(CC) $(TEST_CFLAGS) -B$(CURDIR)/$(B)/gcc-as/ -o $@ $< $(TEST_LDFLAGS) \
		-no-pie -Wl,--defsym,vecnote_magic=0xc3c0570f

# Frameless per-ops copies: handlers proven by the front end.
$(B)/tests/core/test_ops_lean: tests/core/test_ops_lean.c tests/check.h $(B)/libfhook.so \
			       $(B)/gcc-as/as
	@mkdir -p $(dir $@)
	$(CC) $(TEST_CFLAGS) -B$(CURDIR)/$(B)/gcc-as/ -o $@ $< $(TEST_LDFLAGS)

# IPMODIFY copies: the handlers proven by the front end's note (test_ipmod)
# and by decoding at registration (test_ipmod_nonote, the usual build).
$(B)/tests/core/test_ipmod: tests/core/test_ipmod.c tests/check.h tests/argregs.h \
			    $(B)/libfhook.so $(B)/gcc-as/as
	@mkdir -p $(dir $@)
	$(CC) $(TEST_CFLAGS) -B$(CURDIR)/$(B)/gcc-as/ -o $@ $< $(TEST_LDFLAGS)
TEST_TARGETS += $(B)/tests/core/test_ipmod_nonote
$(B)/tests/core/test_ipmod_nonote: tests/core/test_ipmod.c tests/check.h tests/argregs.h \
				   $(B)/libfhook.so
	@mkdir -p $(dir $@)
	$(CC) $(TEST_CFLAGS) -o $@ $< $(TEST_LDFLAGS)

# aarch64: programs built with pointer authentication and BTI landing pads
# (their sites after "bti c": tests/check.h's TEST_SITE_OFF).
ifeq ($(ARCH),aarch64)
CORE_PAC_PROGS := test_ops test_regs test_misc test_process test_unwind_tramp test_stress \
		  test_own_malloc test_unregister_race test_blocked
TEST_TARGETS += $(CORE_PAC_PROGS:%=$(B)/tests/core/%_pac)
$(CORE_PAC_PROGS:%=$(B)/tests/core/%_pac): $(B)/tests/core/%_pac: tests/core/%.c tests/check.h \
		$(B)/libfhook.so
	@mkdir -p $(dir $@)
	$(CC) $(TEST_CFLAGS) -mbranch-protection=standard -o $@ $< $(TEST_LDFLAGS)

# the dlopen programs load the library beside them: in pac/, built so too
CORE_PAC_DL_PROGS := test_dlopen test_dlopen_glob
TEST_TARGETS += $(CORE_PAC_DL_PROGS:%=$(B)/tests/core/pac/%) $(B)/tests/core/pac/libdltarget.so
$(CORE_PAC_DL_PROGS:%=$(B)/tests/core/pac/%): $(B)/tests/core/pac/%: tests/core/%.c tests/check.h \
		$(B)/libfhook.so $(B)/tests/core/pac/libdltarget.so
	@mkdir -p $(dir $@)
	$(CC) $(TEST_CFLAGS) -mbranch-protection=standard -o $@ $< $(TEST_LDFLAGS)

$(B)/tests/core/pac/libdltarget.so: tests/core/dltarget.c
	@mkdir -p $(dir $@)
	$(CC) -O2 -g -fPIC -shared $(FHOOK_SITE_CFLAGS) -mbranch-protection=standard -o $@ $<
endif

# the functions and handler the two stalled-thread tests share
$(B)/tests/core/test_stub_stalled $(B)/tests/core/test_stub_stalled_ptrace: tests/core/stub_stalled.h \
	tests/thread_pc.h
