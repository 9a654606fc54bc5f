# make test-real: real programs' own test suites (Debian source packages) built
# with `fhook cflags` and run untraced, under `fhook trace` on every function's
# entry and exit, and while an fprobe on every function is toggled (docs/real-programs.md).
.PHONY: test-real
test-real: $(B)/libfhook.so $(B)/fhook
	bash tests/real/run.sh
