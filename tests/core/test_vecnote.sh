#!/bin/bash
# A handler whose bytes changed after its object was proven (here: an
# immediate of counting_handler, in a copy of build/tests/core/test_vecnote)
# no longer hashes as its note says: it keeps the vector registers' save,
# and still runs right.  A note whose records are garbage proves nothing
# and harms nothing.
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

# every record's mask count made huge: nothing proven, nothing read past the note
python3 - "$P" "$tmp/garbage" <<'PY'
import subprocess, sys, struct
p, out = sys.argv[1], sys.argv[2]
data = bytearray(open(p, "rb").read())
secs = subprocess.run(["readelf", "-SW", p], capture_output=True, text=True).stdout.splitlines()
for l in secs:
    if ".note.fhook.vecfree" in l:
        f = l.split("]")[1].split()
        off = int(f[3], 16)
        struct.pack_into("<I", data, off + 12 + 8 + 4, 0xffffffff)
open(out, "wb").write(data)
PY
chmod +x "$tmp/garbage"
timeout 60 "$tmp/garbage" > "$tmp/out2" 2>&1
rc=$?
check garbage_note_empty_saves eq "$(grep -c '^FAIL empty_saves_vectors' "$tmp/out2")" 1
check garbage_note_args_intact eq "$(grep -c '^PASS empty_args_intact' "$tmp/out2")" 1
