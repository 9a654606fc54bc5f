#!/bin/bash
# The aarch64 tests that need a kernel running arm64 code (ptrace, which
# qemu-user lacks: attaching to a running process), in a QEMU system VM:
# Debian 12's arm64 kernel (downloaded with apt-get download, unpacked,
# not installed) under qemu-system-aarch64 -M virt (TCG), an initramfs of
# busybox-static:arm64, the arm64 loader and the libraries the programs
# need, and build-aarch64/'s fhook command, libfhook.so and the attach
# tests' programs.  Its /init (scripts/vm-aarch64-init.sh) runs the checks
# and prints them on the console; here they are printed one per line and
# counted: "N passed, N failed, N skipped".  A missing qemu-system-aarch64
# (Debian package qemu-system-arm), kernel or busybox is one SKIP line.
#
# Needs what scripts/test-aarch64.sh needs to cross-build, and
# qemu-system-arm and cpio (.ci/run installs them).  FHOOK_VM_TIMEOUT:
# seconds for the whole guest run (default 300); FHOOK_AARCH64_KERNEL: an
# arm64 kernel Image to boot instead of the downloaded one.
set -o pipefail
cd "$(dirname "$0")/.."

B=${FHOOK_AARCH64_BUILD:-build-aarch64}
CC=${FHOOK_AARCH64_CC:-aarch64-linux-gnu-gcc}
CXX=${FHOOK_AARCH64_CXX:-aarch64-linux-gnu-g++}
V=$B/vm
TIMEOUT=${FHOOK_VM_TIMEOUT:-300}
# Debian's arm64 multiarch libraries, as scripts/test-aarch64.sh runs them
LIBDIRS="/lib/aarch64-linux-gnu /usr/lib/aarch64-linux-gnu /usr/aarch64-linux-gnu/lib"
PROGS="fhook libfhook.so tests/attach/att_prog tests/attach/att_sleep
tests/kprobes/test_kprobes_a64 tests/core/test_stub_stalled_ptrace"

skip() {
	echo "SKIP aarch64_vm: $*"
	echo "0 passed, 0 failed, 1 skipped"
	exit 0
}
failed() {
	echo "FAIL aarch64_vm_$1: $2"
	echo "0 passed, 1 failed, 0 skipped"
	exit 1
}

for tool in qemu-system-aarch64 cpio "$CC"; do
	command -v "$tool" > /dev/null ||
		skip "$tool not installed (qemu-system-aarch64 is in Debian's qemu-system-arm)"
done
[ -e /lib/ld-linux-aarch64.so.1 ] || [ -e /lib/aarch64-linux-gnu/ld-linux-aarch64.so.1 ] ||
	skip "no arm64 loader (/lib/ld-linux-aarch64.so.1: libc6:arm64 not installed)"
mkdir -p "$V/deb"

# fetch PKG DIR: download (once) and unpack an arm64 Debian package into DIR
fetch() {
	local pkg=$1 dir=$2 deb
	deb=$(ls "$V"/deb/"${pkg%%:*}"_*.deb 2> /dev/null | head -1)
	if [ -z "$deb" ]; then
		(cd "$V/deb" && apt-get download "$pkg") > "$V/apt.log" 2>&1 || return 1
		deb=$(ls "$V"/deb/"${pkg%%:*}"_*.deb 2> /dev/null | head -1)
	fi
	[ -n "$deb" ] || return 1
	rm -rf "$dir"
	mkdir -p "$dir"
	dpkg-deb -x "$deb" "$dir"
}

# the kernel: Debian 12's newest 6.1 arm64 image
KERNEL=${FHOOK_AARCH64_KERNEL:-}
if [ -z "$KERNEL" ]; then
	KERNEL=$(ls "$V"/kernel/boot/vmlinuz-* 2> /dev/null | head -1)
	if [ -z "$KERNEL" ]; then
		kpkg=$(apt-cache search --names-only '^linux-image-6\.1\.0-[0-9]+-arm64$' \
			2> /dev/null | cut -d' ' -f1 | sort -V | tail -1)
		[ -n "$kpkg" ] || skip "no Debian arm64 kernel package (apt-cache search" \
			"linux-image-6.1.0-*-arm64: arm64 added with dpkg --add-architecture," \
			"and apt-get update run?)"
		fetch "$kpkg" "$V/kernel" || skip "apt-get download $kpkg failed (see $V/apt.log)"
		KERNEL=$(ls "$V"/kernel/boot/vmlinuz-* 2> /dev/null | head -1)
	fi
fi
[ -e "$KERNEL" ] || skip "no arm64 kernel"
BUSYBOX=$V/busybox/bin/busybox
[ -e "$BUSYBOX" ] || fetch busybox-static:arm64 "$V/busybox" ||
	skip "apt-get download busybox-static:arm64 failed (see $V/apt.log)"

targets=""
for p in $PROGS; do
	targets="$targets $B/$p"
done
# shellcheck disable=SC2086
if ! make --no-print-directory -j2 ARCH=aarch64 CC="$CC" CXX="$CXX" B="$B" $targets \
	> "$V/build.log" 2>&1; then
	tail -20 "$V/build.log"
	failed build "see $V/build.log"
fi

# the initramfs: busybox (its links made by /init), the programs in /u,
# and every library they need at the path the loader looks for it
R=$V/root
rm -rf "$R"
mkdir -p "$R"/{bin,dev,proc,sys,tmp,u,lib}
cp "$BUSYBOX" "$R/bin/busybox"
ln -s busybox "$R/bin/sh"
install -m 755 scripts/vm-aarch64-init.sh "$R/init"
for p in $PROGS; do
	cp "$B/$p" "$R/u/"
done
# find_lib NAME: the arm64 library NAME in the multiarch directories
find_lib() {
	local d
	for d in $LIBDIRS; do
		[ -e "$d/$1" ] && { echo "$d/$1"; return 0; }
	done
	return 1
}
todo=$(for p in $PROGS; do echo "$B/$p"; done)
seen=" "
while [ -n "$todo" ]; do
	next=""
	for f in $todo; do
		for n in $(LC_ALL=C readelf -d "$f" 2> /dev/null |
			   sed -n 's/.*(NEEDED).*\[\(.*\)\]/\1/p'); do
			case "$seen" in *" $n "*) continue ;; esac
			seen="$seen$n "
			[ "$n" = libfhook.so ] && continue
			l=$(find_lib "$n") || failed libs "$n (needed by $f) not found in $LIBDIRS"
			mkdir -p "$R/lib/aarch64-linux-gnu"
			cp -L "$l" "$R/lib/aarch64-linux-gnu/$n"
			next="$next $l"
		done
	done
	todo=$next
done
ld=$(find_lib ld-linux-aarch64.so.1) || failed libs "no ld-linux-aarch64.so.1"
cp -L "$ld" "$R/lib/aarch64-linux-gnu/ld-linux-aarch64.so.1"
ln -sf aarch64-linux-gnu/ld-linux-aarch64.so.1 "$R/lib/ld-linux-aarch64.so.1"
# the kernel opens /dev/console before devtmpfs is mounted
if ! mknod -m 600 "$R/dev/console" c 5 1 2> /dev/null; then
	skip "mknod refused (the initramfs needs /dev/console: run as root)"
fi
(cd "$R" && find . | cpio -o -H newc --quiet | gzip -1) > "$V/initramfs.cpio.gz" ||
	failed initramfs "cpio"

# The guest: TCG, 2 CPUs (attach stops and restarts threads on both), a
# CPU with pointer authentication, BTI and SVE (pauth-impdef: QEMU's cheap
# signing, the architected one is slow to emulate).  An Oops panics it and
# panic=-1 with -no-reboot ends QEMU at once.  No network card: its boot ROM
# (package ipxe-qemu) is not installed with qemu-system-arm.
t0=$SECONDS
timeout "$TIMEOUT" qemu-system-aarch64 -M virt -cpu max,pauth-impdef=on -smp 2 -m 1024 \
	-accel tcg -display none -no-reboot -nic none \
	-kernel "$KERNEL" -initrd "$V/initramfs.cpio.gz" \
	-append "console=ttyAMA0 quiet panic=-1 oops=panic" \
	-serial mon:stdio < /dev/null > "$V/console.log" 2>&1
rc=$?
secs=$((SECONDS - t0))

pass=0 fail=0 skip=0
while read -r s rest; do
	echo "$s $rest"
	case $s in
	PASS) pass=$((pass + 1)) ;;
	FAIL) fail=$((fail + 1)) ;;
	SKIP) skip=$((skip + 1)) ;;
	esac
done < <(tr -d '\r' < "$V/console.log" | sed -n 's/^@@ \(PASS\|FAIL\|SKIP\) /\1 /p')
tr -d '\r' < "$V/console.log" | sed -n 's/^@@ \(#.*\)/\1/p'
if tr -d '\r' < "$V/console.log" | grep -qx '@@ DONE'; then
	echo "PASS aarch64_vm_finished ($secs s, $(basename "$KERNEL"))"
	pass=$((pass + 1))
else
	echo "FAIL aarch64_vm_finished: no DONE in $secs s (QEMU exit $rc); see $V/console.log"
	tail -20 "$V/console.log"
	fail=$((fail + 1))
fi
echo
echo "$pass passed, $fail failed, $skip skipped"
[ "$fail" -eq 0 ]
