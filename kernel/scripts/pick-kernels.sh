#!/bin/sh
# Print "KVER61 KVER612": the newest Debian 12 6.1 and 6.12 amd64 flavours
# for which both an image and a headers package exist in the apt lists.
set -e
newest_61=$(apt-cache search --names-only '^linux-headers-6\.1\.0-[0-9]+-amd64$' |
	sed -n 's/^linux-headers-\(6\.1\.0-[0-9]*-amd64\) .*/\1/p' | sort -V |
	while read -r v; do
		apt-cache show "linux-image-$v" >/dev/null 2>&1 && echo "$v"
	done | tail -n 1)
newest_612=$(apt-cache search --names-only '^linux-headers-6\.12\.[0-9]+\+deb12-amd64$' |
	sed -n 's/^linux-headers-\(6\.12\.[0-9]*+deb12-amd64\) .*/\1/p' | sort -V |
	while read -r v; do
		apt-cache show "linux-image-$v-unsigned" >/dev/null 2>&1 && echo "$v"
	done | tail -n 1)
[ -n "$newest_61" ] && [ -n "$newest_612" ] || { echo "no kernel found" >&2; exit 1; }
echo "$newest_61 $newest_612"
