#!/bin/bash
# The aarch64 edition: cross-build libfhook and the test programs that
# apply into build-aarch64/ and run them under qemu-user.  Ends with
# "N passed, N failed, N skipped"; each program left out is one SKIP line
# with the reason.  Needs gcc-aarch64-linux-gnu, libc6-dev-arm64-cross,
# qemu-user-static and libelf-dev:arm64, for the C++ programs
# g++-aarch64-linux-gnu and libstdc++6:arm64, for the C++ names' unit
# test libiberty-dev:arm64 (.ci/run installs them).
set -o pipefail
cd "$(dirname "$0")/.."

B=${FHOOK_AARCH64_BUILD:-build-aarch64}
CC=${FHOOK_AARCH64_CC:-aarch64-linux-gnu-gcc}
CXX=${FHOOK_AARCH64_CXX:-aarch64-linux-gnu-g++}
# Debian's arm64 multiarch libraries (libelf-dev:arm64 brings libc6:arm64)
# run with their own loader: with the cross sysroot's older loader beside
# them, the first pthread_create() never returns
if [ -e /lib/ld-linux-aarch64.so.1 ]; then
	SYSROOT=${FHOOK_AARCH64_SYSROOT:-/}
else
	SYSROOT=${FHOOK_AARCH64_SYSROOT:-/usr/aarch64-linux-gnu}
fi
QEMU=${FHOOK_QEMU:-qemu-aarch64-static}
TIMEOUT=${FHOOK_TEST_TIMEOUT:-300}

# the programs that run on aarch64 today (*_pac and pac/: built with
# pointer authentication and BTI landing pads, -mbranch-protection=standard)
PROGRAMS="
core/test_ops core/test_stress core/test_unregister_race core/test_blocked
core/test_dlopen_glob core/test_nosites core/test_dlopen core/test_own_malloc
core/test_process core/test_unwind_tramp core/test_misc core/test_regs
fprobe/test_dlopen_glob fprobe/test_coroutines fprobe/test_coroutines_framed
fprobe/test_fprobe fprobe/test_unregister_stress fprobe/test_progs
fprobe/test_progs_framed fprobe/test_exit_on_unwind fprobe/test_graph
fprobe/test_unwind_sampled
livepatch/test_inject livepatch/test_redirect
util/test_lockdep soak/test_soak
events/test_perfetto_unit events/test_evdesc_unit
core/test_ops_pac core/test_regs_pac core/test_misc_pac core/test_process_pac
core/test_unwind_tramp_pac core/test_stress_pac core/test_own_malloc_pac
core/test_unregister_race_pac core/test_blocked_pac core/pac/test_dlopen core/pac/test_dlopen_glob
fprobe/test_progs_framed_pac fprobe/test_coroutines_framed_pac fprobe/pac/test_dlopen_glob
fprobe/test_fprobe_pac fprobe/test_unwind_sampled_pac fprobe/test_unregister_stress_pac
fprobe/test_progs_pac fprobe/test_exit_on_unwind_pac fprobe/test_coroutines_pac
fprobe/test_graph_pac livepatch/test_redirect_pac livepatch/test_inject_pac
kprobes/test_kprobes_a64 kprobes/test_kprobes_a64_pac kprobes/test_kprobe_gone
kprobes/test_kretprobes kprobes/test_kprobes_stress kprobes/test_kretprobes_stress
"
# what those programs load, built with them
EXTRA_TARGETS="kprobes/kpgone_a.so kprobes/kpgone_b.so"
# the shell tests that run the fhook command (build-aarch64/fhook under
# qemu-user, the programs it starts behind FHOOK_EMULATOR); each says
# SKIP, with why, for its cases that do not apply to aarch64
SCRIPTS="events/test_trace.sh events/test_record.sh events/test_kprobe_events.sh
events/test_dwarf_args.sh events/test_rec_fast.sh fprobe/test_rec_order.sh"
# (the C++ kprobes' test builds its programs with $CXX)
if command -v "$CXX" >/dev/null; then
	SCRIPTS="$SCRIPTS events/test_cxx_kprobes.sh"
else
	SKIPS="$SKIPS
events/test_cxx_kprobes.sh:$CXX not installed"
fi
# the programs those scripts run (under $B/tests/)
SCRIPT_TARGETS="events/prog events/rec_prog events/kp_prog events/kp_prog_stripped
events/kp_lib.so events/kp_count.so events/kp_loop events/fast_args_prog fprobe/rec_order_prog
fprobe/rec_order_prog_pac"
if command -v "$CXX" >/dev/null; then
	SCRIPT_TARGETS="$SCRIPT_TARGETS events/cxx_prog_gcc"
fi
if command -v clang++ >/dev/null; then
	SCRIPT_TARGETS="$SCRIPT_TARGETS events/cxx_prog_clang"
fi
# cases of those programs left out, with why (the others run one by one)
SKIP_CASES="
events/test_cxxname_unit/set_speed:a budget of native CPU time (qemu-user emulates)
"
# ... and what is left out, with why
SKIPS="
attach/:ptrace is not implemented by qemu-user (attach needs a kernel running arm64 code)
kprobes/test_kprobes:x86-64 functions and registers (kp_funcs.S; aarch64's: test_kprobes_a64)
core/test_ipmod:x86-64 generated IPMODIFY copies
core/test_general_regs:x86-64 handler scans (vecscan)
core/test_vecnote:x86-64 handler proofs
core/test_ops_lean:x86-64 lean trampolines
core/test_sigtrap_raw:the int3 protocol (aarch64 patches with one store)
core/test_ipmod_nonote:x86-64 generated IPMODIFY copies
fprobe/test_graph_lean:x86-64 graph trampolines
fprobe/test_graph_kind:x86-64 frameless trampolines, stepped into with ptrace (none under qemu-user)
fprobe/*_lean:built with fhook's x86-64 assembler front end (proven handlers)
arch/test_arch:x86-64 call-site bytes (5-byte calls and nops)
arch/test_livein:the x86-64 live-argument analysis
events/test_kprobe_globs.sh:x86-64 jumps, code bytes and offsets, and the host's programs (bash, sqlite3, python3)
tests/*/test_*.sh but SCRIPTS:not made to run under qemu-user yet
"

# the C++ programs (exceptions through hooked returns), where they can
# be built and their runtime is there to run them
CXX_PROGRAMS="fprobe/test_cxx_exceptions fprobe/test_cxx_exceptions_framed
fprobe/test_exit_on_unwind_cxx fprobe/test_cxx_exceptions_pac fprobe/test_exit_on_unwind_cxx_pac
fprobe/test_cxx_exceptions_framed_pac"
if command -v "$CXX" >/dev/null && { [ -e "$SYSROOT/lib/aarch64-linux-gnu/libstdc++.so.6" ] ||
				      [ -e "$SYSROOT/lib/libstdc++.so.6" ]; }; then
	PROGRAMS="$PROGRAMS $CXX_PROGRAMS"
else
	for p in $CXX_PROGRAMS; do
		SKIPS="$SKIPS
$p:$CXX or libstdc++6:arm64 not installed"
	done
fi

# the C++ names' unit test links libiberty
if [ -e "$SYSROOT/usr/lib/aarch64-linux-gnu/libiberty.a" ] ||
   [ -e /usr/lib/aarch64-linux-gnu/libiberty.a ]; then
	PROGRAMS="$PROGRAMS events/test_cxxname_unit"
else
	SKIPS="$SKIPS
events/test_cxxname_unit:libiberty-dev:arm64 not installed"
fi

# test_exec_env runs itself again with execl(): qemu-user does not follow
# an exec, so the kernel must hand an aarch64 program to qemu itself
# (binfmt_misc), which containers often lack
if grep -qs '^enabled' /proc/sys/fs/binfmt_misc/qemu-aarch64; then
	PROGRAMS="$PROGRAMS core/test_exec_env"
	NO_EXEC=
else
	# (the shell tests skip their cases whose programs exec)
	NO_EXEC="qemu-user cannot follow an exec (no binfmt_misc entry for qemu-aarch64)"
	SKIPS="$SKIPS
core/test_exec_env:it execs itself, which qemu-user cannot follow (no binfmt_misc entry for qemu-aarch64)"
fi

for tool in "$CC" "$QEMU"; do
	if ! command -v "$tool" >/dev/null; then
		echo "SKIP aarch64: $tool not installed"
		echo "0 passed, 0 failed, 1 skipped"
		exit 0
	fi
done

mkdir -p "$B"
targets=""
for p in $PROGRAMS $EXTRA_TARGETS $SCRIPT_TARGETS; do
	targets="$targets $B/tests/$p"
done
if ! make --no-print-directory -j2 ARCH=aarch64 CC="$CC" CXX="$CXX" B="$B" \
	STRIP=aarch64-linux-gnu-strip "$B/libfhook.so" "$B/fhook" $targets \
	>"$B/build.log" 2>&1; then
	mkdir -p "$B"
	tail -30 "$B/build.log"
	echo "FAIL aarch64_build: see $B/build.log"
	echo "0 passed, 1 failed, 0 skipped"
	exit 1
fi

mkdir -p "$B"
log="$B/test-log.txt"
: >"$log"
pass=0 fail=0 skip=0
# run @1, or each of its cases but those SKIP_CASES names
run_program() {
	local p=$1 dir prog cases c rc=0 r
	dir="$B/tests/$(dirname "$p")" prog="./$(basename "$p")"
	if ! grep -q "^$p/" <<<"$SKIP_CASES"; then
		(cd "$dir" && timeout "$TIMEOUT" "$QEMU" -L "$SYSROOT" "$prog" 2>&1)
		return
	fi
	cases=$(cd "$dir" && TEST_CASE=list timeout "$TIMEOUT" "$QEMU" -L "$SYSROOT" "$prog")
	for c in $cases; do
		grep -q "^$p/$c:" <<<"$SKIP_CASES" && continue
		(cd "$dir" && TEST_CASE=$c timeout "$TIMEOUT" "$QEMU" -L "$SYSROOT" "$prog" 2>&1)
		r=$?
		[ "$r" -ne 0 ] && rc=$r
	done
	return $rc
}

for p in $PROGRAMS; do
	out=$(run_program "$p")
	rc=$?
	printf '== %s (exit %d)\n%s\n' "$p" "$rc" "$out" >>"$log"
	np=$(grep -c '^PASS ' <<<"$out")
	nf=$(grep -c '^FAIL ' <<<"$out")
	ns=$(grep -c '^SKIP ' <<<"$out")
	if [ "$rc" -ne 0 ] && [ "$nf" -eq 0 ]; then
		echo "FAIL $p: exit $rc without a FAIL line" | tee -a "$log"
		nf=1
	fi
	grep '^FAIL ' <<<"$out" | sed "s|^FAIL |FAIL $p: |"
	printf '%-44s %4d passed, %d failed\n' "$p" "$np" "$nf"
	pass=$((pass + np)) fail=$((fail + nf)) skip=$((skip + ns))
done

# the shell tests: the command as the scripts run it (FHOOK_CLI), and the
# emulator it puts in front of the programs it starts (no binfmt_misc)
printf '#!/bin/sh\nexec %s -L %s %s "$@"\n' "$QEMU" "$SYSROOT" "$PWD/$B/fhook" >"$B/fhook-qemu"
chmod +x "$B/fhook-qemu"
for s in $SCRIPTS; do
	out=$(FHOOK_BUILD=$B FHOOK_CLI=$PWD/$B/fhook-qemu FHOOK_EMULATOR="$QEMU -L $SYSROOT" \
	      FHOOK_TEST_ARCH=aarch64 FHOOK_TEST_NO_EXEC=$NO_EXEC FHOOK_ROOT=$PWD \
	      FHOOK_TEST_NO_PTRACE="ptrace is not implemented by qemu-user" \
	      FHOOK_TEST_CC=$CC FHOOK_TEST_CXX=$CXX \
	      timeout "$TIMEOUT" bash "tests/$s" 2>&1)
	rc=$?
	printf '== %s (exit %d)\n%s\n' "$s" "$rc" "$out" >>"$log"
	np=$(grep -c '^PASS ' <<<"$out")
	nf=$(grep -c '^FAIL ' <<<"$out")
	ns=$(grep -c '^SKIP ' <<<"$out")
	if [ "$rc" -ne 0 ] && [ "$nf" -eq 0 ]; then
		echo "FAIL $s: exit $rc without a FAIL line" | tee -a "$log"
		nf=1
	fi
	grep -E '^(FAIL|SKIP) ' <<<"$out" | sed -E "s#^(FAIL|SKIP) #\\1 $s: #"
	printf '%-44s %4d passed, %d failed%s\n' "$s" "$np" "$nf" \
		"$([ "$ns" != 0 ] && echo ", $ns skipped")"
	pass=$((pass + np)) fail=$((fail + nf)) skip=$((skip + ns))
done
while IFS=: read -r what why; do
	[ -n "$what" ] || continue
	echo "SKIP $what: $why"
	skip=$((skip + 1))
done <<<"$SKIPS
$SKIP_CASES"
echo
echo "$pass passed, $fail failed, $skip skipped"
[ "$fail" -eq 0 ]
