# Kprobe globs' programs: one call tree built without fhook's flags (-O2,
# -O0, a stripped copy) and with them, and its library, without.
KPG := $(B)/tests/events
TEST_TARGETS += $(KPG)/kpglob_O2 $(KPG)/kpglob_O0 $(KPG)/kpglob_fh_O2 $(KPG)/kpglob_fh_O0 \
	$(KPG)/kpglob_stripped $(KPG)/kpglob_lib.so

$(KPG)/kpglob_lib.so: tests/events/kpglob_lib.c
	@mkdir -p $(dir $@)
	$(CC) -std=gnu11 -O2 -fPIC -shared $(SAN) -o $@ $<

$(KPG)/kpglob_O2 $(KPG)/kpglob_O0: $(KPG)/kpglob_%: tests/events/kpglob_prog.c $(KPG)/kpglob_lib.so
	$(CC) -std=gnu11 -$* $(SAN) -o $@ $< -L$(KPG) -l:kpglob_lib.so -Wl,-rpath,'$$ORIGIN'

$(KPG)/kpglob_fh_O2 $(KPG)/kpglob_fh_O0: $(KPG)/kpglob_fh_%: tests/events/kpglob_prog.c \
		$(KPG)/kpglob_lib.so
	$(CC) -std=gnu11 -$* $(FHOOK_SITE_CFLAGS) $(SAN) -o $@ $< -L$(KPG) \
		-l:kpglob_lib.so -Wl,-rpath,'$$ORIGIN'

$(KPG)/kpglob_stripped: $(KPG)/kpglob_O2
	$(STRIP) --strip-all -o $@ $<

# another tool's breakpoint and jump, written before fhook probes
TEST_TARGETS += $(KPG)/kpg_victim.so $(KPG)/kpg_patcher.so
$(KPG)/kpg_victim.so: tests/events/kpg_victim.c
	@mkdir -p $(dir $@)
	$(CC) -std=gnu11 -O2 -fPIC -shared $(SAN) -o $@ $<

$(KPG)/kpg_patcher.so: tests/events/kpg_patcher.c $(KPG)/kpg_victim.so
	$(CC) -std=gnu11 -O2 -fPIC -shared $(SAN) -o $@ $< -L$(KPG) -l:kpg_victim.so \
		-Wl,-rpath,'$$ORIGIN'

# floating point kept in registers across calls (-fipa-ra)
TEST_TARGETS += $(KPG)/kpglob_fp
$(KPG)/kpglob_fp: tests/events/kpglob_fp.c
	@mkdir -p $(dir $@)
	$(CC) -std=gnu11 -O2 $(SAN) -o $@ $<
