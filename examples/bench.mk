# `make bench`: fhook against its peers (uftrace, -finstrument-functions,
# LTTng-UST, bpftrace uprobes) on the same workloads, in one run; writes
# bench/RESULTS.md and bench/results.png.  Numbers never fail anything.
# The programs are built by bench/run.sh itself (it installs the peers first),
# so that `make` does not need them; it runs `make all` first.
bench:
	@bash bench/run.sh

.PHONY: bench
