#!/bin/bash
# Build the fhook kernel modules against Debian 12's 6.1 and 6.12 kernels and
# run them under QEMU (TCG, no KVM needed).
#
#   kernel-test.sh test   install, build, boot both kernels, run the checks,
#                         print one line per check and "N passed, N failed"
#   kernel-test.sh demo   install, build, boot one kernel and print the
#                         memcg before/with/after table
#
# Must run as root (apt-get, mknod).  Everything it produces is under
# kernel/build/.  Environment: FHOOK_NO_INSTALL=1 skips apt-get when the
# packages are already there; FHOOK_QEMU_TIMEOUT (seconds, default 420:
# a guest needs 60-120 s on an idle 2-CPU host, about 180 s on a busy one).
set -u

MODE=${1:-test}
HERE=$(cd "$(dirname "$0")/.." && pwd)
BUILD=$HERE/build
QEMU_TIMEOUT=${FHOOK_QEMU_TIMEOUT:-420}
passed=0
failed=0

log() { echo "kernel-test: $*" >&2; }
result() {
	echo "$1 $2"
	if [ "$1" = PASS ]; then passed=$((passed + 1)); else failed=$((failed + 1)); fi
}
summary() {
	echo "$passed passed, $failed failed"
	[ "$failed" -eq 0 ]
	exit
}

if [ "$(id -u)" != 0 ]; then
	log "must run as root (apt-get install, mknod for the initramfs)"
	result FAIL root
	summary
fi

# newest VERSION-FLAVOUR whose image and headers packages both exist.
# $1: regex for the headers package's version part, $2: image suffix.
newest_kernel() {
	apt-cache search --names-only "^linux-headers-$1\$" |
		sed -n "s/^linux-headers-\\($1\\) .*/\\1/p" | sort -rV |
		while read -r v; do
			if apt-cache show "linux-image-$v$2" > /dev/null 2>&1; then
				echo "$v"
				break
			fi
		done
}

pick_kernels() {
	# The patterns must mean the same as ERE (apt-cache) and BRE (sed).
	K61=$(newest_kernel '6\.1\.0-[0-9][0-9]*-amd64' '')
	K612=$(newest_kernel '6\.12\.[0-9][0-9]*[+]deb12-amd64' '-unsigned')
}

# installed PKG...: true when every package is installed (an unknown
# package prints no status line, so the lines are counted).
installed() {
	local n
	n=$(dpkg-query -W -f='${Status}\n' "$@" 2>/dev/null | grep -c 'install ok installed')
	[ "$n" -eq $# ]
}

install_deps() {
	local t0=$SECONDS tools="qemu-system-x86 busybox-static cpio build-essential"

	if [ "${FHOOK_NO_INSTALL:-0}" = 1 ]; then
		K61=$(ls /usr/src | sed -n 's/^linux-headers-\(6\.1\.0-[0-9]*-amd64\)$/\1/p' | sort -V | tail -n 1)
		K612=$(ls /usr/src | sed -n 's/^linux-headers-\(6\.12\.[0-9]*+deb12-amd64\)$/\1/p' | sort -V | tail -n 1)
	else
		export DEBIAN_FRONTEND=noninteractive
		# The image packages' hooks would build an initrd we do not need.
		export INITRD=No
		if ! apt-get update -qq > "$BUILD/apt.log" 2>&1; then
			log "apt-get update failed (see $BUILD/apt.log); using the lists we have"
		fi
		pick_kernels
		if [ -z "$K61" ] || [ -z "$K612" ]; then
			log "no 6.1 / 6.12 kernel found with apt-cache"
			return 1
		fi
		local pkgs="linux-image-$K61 linux-headers-$K61 linux-image-$K612-unsigned linux-headers-$K612 $tools"
		# shellcheck disable=SC2086
		if ! installed $pkgs; then
			log "apt-get install $pkgs"
			# shellcheck disable=SC2086
			if ! apt-get install -y -q --no-install-recommends $pkgs >> "$BUILD/apt.log" 2>&1; then
				log "apt-get install failed, see $BUILD/apt.log"
				tail -n 20 "$BUILD/apt.log" >&2
				return 1
			fi
		fi
	fi
	log "kernels: $K61 and $K612 (installs took $((SECONDS - t0)) s)"
	[ -n "$K61" ] && [ -n "$K612" ]
}

# build_modules KVER: out-of-tree build in build/KVER/src.
build_modules() {
	local kver=$1 dir=$BUILD/$1/src

	rm -rf "$dir"
	mkdir -p "$dir"
	cp "$HERE"/fhook_redirect/* "$dir"/
	make -C "/usr/src/linux-headers-$kver" M="$dir" modules > "$BUILD/$kver/build.log" 2>&1 &&
		! grep -E 'warning:|error:' "$BUILD/$kver/build.log" > /dev/null
}

# add_user_space ROOT: the user-space fhook command, libfhook and the attach
# tests' program in /u, with the shared libraries they load at the paths the
# loader looks for them, and a user "fh" (uid 1000): the guest checks
# fhook's attach against yama's ptrace_scope, which this host's kernel lacks.
# Nothing when the user-space build is not there (make test builds it).
add_user_space() {
	local root=$1 top=$HERE/.. f l
	local files="$top/build/fhook $top/build/libfhook.so $top/build/tests/attach/att_prog"

	for f in $files; do
		[ -e "$f" ] || return 0
	done
	mkdir -p "$root/u" "$root/etc"
	cp $files "$root/u/"
	for l in $(ldd $files | sed -n 's/.*=> \(\/[^ ]*\) .*/\1/p; s/^[[:space:]]*\(\/[^ ]*\) .*/\1/p' |
		   sort -u); do
		mkdir -p "$root$(dirname "$l")"
		cp -L "$l" "$root$l"
	done
	echo 'root:x:0:0::/:/bin/sh' > "$root/etc/passwd"
	echo 'fh:x:1000:1000::/tmp:/bin/sh' >> "$root/etc/passwd"
	printf 'root:x:0:\nfh:x:1000:\n' > "$root/etc/group"
}

# make_initramfs KVER MODE: busybox, /init, the modules and two device nodes.
make_initramfs() {
	local kver=$1 root=$BUILD/$1/root a

	rm -rf "$root"
	mkdir -p "$root"/{bin,sbin,dev,proc,sys,tmp,fhook}
	cp /bin/busybox "$root/bin/busybox"
	for a in $("$root/bin/busybox" --list); do
		[ "$a" = busybox ] || ln -s busybox "$root/bin/$a"
	done
	# The kernel opens /dev/console before devtmpfs exists; the second
	# serial port carries the results.
	mknod -m 600 "$root/dev/console" c 5 1
	mknod -m 660 "$root/dev/ttyS1" c 4 65
	mknod -m 666 "$root/dev/null" c 1 3
	install -m 755 "$HERE/scripts/guest-init.sh" "$root/init"
	echo "$2" > "$root/mode"
	cp "$BUILD/$kver"/src/*.ko "$root/fhook/"
	[ "$2" = test ] && add_user_space "$root"
	(cd "$root" && find . | cpio -o -H newc --quiet | gzip -1) > "$BUILD/$kver/initramfs.cpio.gz"
}

# boot KVER: results in build/KVER/results.txt, console in console.log.
# An Oops or a soft lockup panics the guest, and panic=-1 with -no-reboot
# ends QEMU at once instead of waiting for the timeout.
boot() {
	local kver=$1 d=$BUILD/$1 t0=$SECONDS rc

	rm -f "$d/results.txt"
	# thread=single: multi-threaded TCG lets a vCPU run a stale
	# translation of text that another vCPU just patched (README.md).
	timeout "$QEMU_TIMEOUT" qemu-system-x86_64 -accel tcg,thread=single \
		-m 512 -smp 2 \
		-display none -no-reboot \
		-kernel "/boot/vmlinuz-$kver" -initrd "$d/initramfs.cpio.gz" \
		-append "console=ttyS0 quiet panic=-1 oops=panic softlockup_panic=1" \
		-serial mon:stdio -serial "file:$d/results.txt" \
		< /dev/null > "$d/console.log" 2>&1
	rc=$?
	echo "$((SECONDS - t0))" > "$d/boot-seconds"
	return $rc
}

mkdir -p "$BUILD"
t_start=$SECONDS
if ! install_deps; then
	result FAIL install-deps
	summary
fi
result PASS install-deps

if [ "$MODE" = demo ]; then
	kvers="$K612"
else
	kvers="$K61 $K612"
fi

declare -A short
short[$K61]=6.1
short[$K612]=6.12
# Both builds at once; each leaves its exit status in build/KVER/built.
for k in $kvers; do
	mkdir -p "$BUILD/$k"
	rm -f "$BUILD/$k/initramfs.cpio.gz"
	(
		build_modules "$k" && make_initramfs "$k" "$MODE"
		echo $? > "$BUILD/$k/built"
	) &
done
wait
for k in $kvers; do
	if [ "$(cat "$BUILD/$k/built")" = 0 ]; then
		result PASS "${short[$k]} build-modules"
	else
		result FAIL "${short[$k]} build-modules"
		grep -E 'warning:|error:' "$BUILD/$k/build.log" | head -n 20 >&2
		rm -f "$BUILD/$k/initramfs.cpio.gz"
	fi
done

# Both guests at once: each is one QEMU process, bounded by timeout.
pids=()
for k in $kvers; do
	[ -e "$BUILD/$k/initramfs.cpio.gz" ] || continue
	boot "$k" &
	pids+=($!)
done
for p in "${pids[@]}"; do wait "$p"; done

for k in $kvers; do
	r=$BUILD/$k/results.txt
	[ -e "$BUILD/$k/initramfs.cpio.gz" ] || continue
	if [ "$MODE" = demo ]; then
		tr -d '\r' < "$r" | grep -v '^DONE$'
	else
		tr -d '\r' < "$r" | grep -E '^(PASS|FAIL) ' |
			while read -r s name; do echo "$s $name"; done > "$BUILD/$k/checks.txt"
		while read -r s name; do
			result "$s" "$name"
		done < "$BUILD/$k/checks.txt"
		# Failure details the guest wrote ("#   ..." lines).
		grep '^#   ' "$r" | head -n 40 >&2
	fi
	if grep -qx DONE <(tr -d '\r' < "$r"); then
		result PASS "${short[$k]} boot-and-finish ($(cat "$BUILD/$k/boot-seconds") s)"
	else
		result FAIL "${short[$k]} boot-and-finish (see $BUILD/$k/console.log)"
		tail -n 30 "$BUILD/$k/console.log" >&2
	fi
done
log "total $((SECONDS - t_start)) s"
summary
