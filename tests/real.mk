# make test-real: real programs' own test suites (Debian source packages) built
# with `fhook cflags` and run untraced, under `fhook trace` on every function's
# entry and exit, and while an fprobe on every function is toggled (docs/real-programs.md);
# first, the attach tests' cycles run 100 times each.
.PHONY: test-real
test-real: $(B)/libfhook.so $(B)/fhook $(B)/tests/attach/att_prog $(B)/tests/attach/att_repl.so \
	$(B)/tests/attach/att_slow.so
	bash tests/real/run.sh
