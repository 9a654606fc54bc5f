# The soak test needs the library that tests/core builds.
$(B)/tests/soak/test_soak: $(B)/tests/core/libdltarget.so
