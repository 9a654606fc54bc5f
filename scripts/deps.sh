#!/bin/bash
# Install the Debian packages fhook needs to build and test (as root);
# quiet and quick when they are already there.  --check only says what
# is missing (what a plain `make` runs before compiling).
set -e
PKGS="gcc g++ make libc6-dev binutils libelf-dev libdw-dev libbz2-dev libcapstone-dev libiberty-dev pkg-config clang
      protobuf-compiler python3 libcap2-bin strace xz-utils sqlite3"
missing=""
for p in $PKGS; do
	dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" ||
		missing="$missing $p"
done
[ -z "$missing" ] && exit 0
if [ "${1:-}" = --check ]; then
	echo "fhook: missing packages:$missing; run \`make deps\` (as root) first" >&2
	exit 1
fi
if [ "$(id -u)" != 0 ]; then
	echo "fhook: missing packages:$missing (run as root to install them)" >&2
	exit 1
fi
echo "fhook: installing$missing"
export DEBIAN_FRONTEND=noninteractive
apt-get update -qq
apt-get install -y -qq $missing >/dev/null
