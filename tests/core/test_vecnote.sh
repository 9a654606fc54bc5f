#!/bin/bash
# A handler whose bytes changed after its object was proven (here: an
# immediate of counting_handler, in a copy of build/tests/core/test_vecnote)
# no longer hashes as its note says: it keeps the vector registers' save,
# and still runs right.  A note whose records or sizes are garbage proves
# nothing and harms nothing.
set -o pipefail
cd "${FHOOK_ROOT:-$(dirname "$0")/../..}" || exit 2
. tests/check.sh
P=$PWD/${FHOOK_BUILD:-build}/tests/core/test_vecnote
[ -x "$P" ] || { echo "SKIP vecnote_tampered: $P not built"; exit 0; }
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

# the file offset of counting_handler's "addq $0x5a5a5a": its imm32's first byte
off=$(python3 - "$P" <<'PY'
import subprocess, sys
p = sys.argv[1]
sym = [l.split() for l in subprocess.run(["nm", p], capture_output=True, text=True).stdout.splitlines()]
addr = next(int(s[0], 16) for s in sym if len(s) == 3 and s[2] == "counting_handler")
segs = subprocess.run(["readelf", "-lW", p], capture_output=True, text=True).stdout.splitlines()
for l in segs:
    f = l.split()
    if f and f[0] == "LOAD":
        o, va, sz = int(f[1], 16), int(f[2], 16), int(f[4], 16)
        if va <= addr < va + sz:
            data = open(p, "rb").read()
            fo = o + addr - va
            i = data.index(b"\x5a\x5a\x5a\x00", fo, fo + 64)
            print(i)
            break
PY
)
if [ -z "$off" ]; then
	echo "FAIL vecnote_tampered: counting_handler's immediate not found"
	exit 0
fi
cp "$P" "$tmp/prog"
printf '\x5b' | dd of="$tmp/prog" bs=1 seek="$off" conv=notrunc status=none
timeout 60 "$tmp/prog" tampered > "$tmp/out" 2>&1
rc=$?
grep -E '^(PASS|FAIL|SKIP)' "$tmp/out" | sed 's/^\(PASS\|FAIL\|SKIP\) /\1 vecnote_tampered\//'
[ $rc = 0 ] || echo "FAIL vecnote_tampered/exit: status $rc"

# malformed notes prove nothing and read nothing past themselves: every
# record's mask count made huge; the note's descriptor size near 4 GiB
python3 - "$P" "$tmp" <<'PY'
import subprocess, sys, struct
p, tmp = sys.argv[1], sys.argv[2]
data = open(p, "rb").read()
for l in subprocess.run(["readelf", "-SW", p], capture_output=True, text=True).stdout.splitlines():
    if ".note.fhook.vecfree" in l:
        off = int(l.split("]")[1].split()[3], 16)
for name, at, val in (("masks", off + 12 + 8 + 4, 0xffffffff), ("descsz", off + 4, 0xfffffffd)):
    d = bytearray(data)
    struct.pack_into("<I", d, at, val)
    open(tmp + "/" + name, "wb").write(d)
PY
for g in masks descsz; do
	chmod +x "$tmp/$g"
	timeout 60 "$tmp/$g" garbage > "$tmp/out.$g" 2>&1
	check "garbage_${g}_exits" eq "$(grep -c '^FAIL' "$tmp/out.$g"):$(tail -1 "$tmp/out.$g")" \
		"5:PASS no_decoder_loaded"
	check "garbage_${g}_nothing_proven" eq \
		"$(grep -o '^FAIL [a-z_]*_saves_vectors' "$tmp/out.$g" | tr '\n' ' ')" \
		"FAIL empty_saves_vectors FAIL relocated_field_saves_vectors FAIL branching_saves_vectors FAIL fregs_registers_saves_vectors FAIL frame_pointer_saves_vectors "
	check "garbage_${g}_args_intact" eq "$(grep -c '^PASS .*_args_intact_' "$tmp/out.$g")" 39
done
