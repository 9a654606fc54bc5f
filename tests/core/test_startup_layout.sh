#!/bin/bash
# The start-up path of libfhook sits in one stretch of its text
# (util/startup.h): every process runs it once, and on a virtual machine
# each 64 KiB window of text it touches costs a fault of 10-20 us, more
# than its instructions.  The constructors and what they call in a
# process with nothing to do, in one with pads to rewrite and in one
# under `fhook record` must lie within BOUND bytes of each other; a
# function of that path added elsewhere in .text fails this.  Nor may the
# library have a DT_FINI: crti's _fini sits at the far end of the text, a
# window every exiting process would fault in for an empty function.
set -o pipefail
cd "${FHOOK_ROOT:-$(dirname "$0")/../..}" || exit 2
B=${FHOOK_BUILD:-build}
LIB=$B/libfhook.so
BOUND=$((32 * 1024))
FUNCS="fhook_core_init fhook_sites_init exec_env_init sigtrap_mask_init
rethook_longjmp_init fhook_ev_preload fhook_lp_preload rec_attach_init
lp_attach_init fhook_atfork fhook_objects_refresh fhook_objects_sync sync_cb
object_new objects_added fhook_elf_map_sites elf_open fhook_libc_sym
fhook_arch_init fhook_arch_longjmp_init fhook_text_init_pads fhook_rec_setup
fhook_rec_map_shm announce_objects lp_kprobe_init fhook_lp_set_nosite
fhook_ev_preload_exit fhook_lp_preload_exit"

if ! syms=$(nm -S "$LIB"); then
	echo "FAIL startup_layout_nm: nm $LIB failed"
	exit 1
fi
if grep -qE ' U __(asan|tsan)_' <<< "$syms"; then
	echo "SKIP startup_layout: a sanitizer build lays out its own code"
	exit 0
fi
lo= hi= missing=
for f in $FUNCS; do
	line=$(awk -v f="$f" '$4 == f && ($3 == "t" || $3 == "T") { print $1, $2; exit }' \
		<<< "$syms")
	if [ -z "$line" ]; then
		missing="$missing $f"
		continue
	fi
	read -r addr size <<< "$line"
	a=$((16#$addr)) e=$((16#$addr + 16#$size))
	[ -z "$lo" ] || [ "$a" -lt "$lo" ] && lo=$a
	[ -z "$hi" ] || [ "$e" -gt "$hi" ] && hi=$e
done
if [ -n "$missing" ]; then
	echo "FAIL startup_layout_symbols: not in $LIB (renamed or inlined?):$missing"
	exit 1
fi
span=$((hi - lo))
. tests/faults.sh
bounded startup_layout "$span" "$BOUND" \
	"the start-up path spans $span bytes of text (bound $BOUND)"
if ! dyn=$(readelf -dW "$LIB"); then
	echo "FAIL startup_layout_readelf: readelf -d $LIB failed"
	exit 1
fi
if grep -q '(FINI)' <<< "$dyn"; then
	echo "FAIL startup_layout_fini: $LIB has a DT_FINI (link it with -Wl,-fini=...)"
else
	echo "PASS startup_layout_fini: no DT_FINI, the exit path stays in the start-up text"
fi
