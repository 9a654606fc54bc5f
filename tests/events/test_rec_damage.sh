#!/bin/bash
# The recording reader against damaged files: a real recording
# (two processes, threads, strings, entries and exits) cut at every block
# boundary and in the middle of every block, and with every block's header
# corrupted (type and length), is read by `fhook replay` in every format and
# by `fhook report` (formats in turn): never a crash or a hang (exit 0 or 1, within a time
# bound), and a recording cut at a block boundary keeps the events of its
# whole blocks.  Deterministic; libFuzzer's random mutations are in
# fuzz/test_fuzz_records.sh.
set -o pipefail
cd "${FHOOK_ROOT:-$(dirname "$0")/../..}" || exit 2
F=$PWD/build/fhook
RP=$PWD/build/tests/events/rec_prog
T=$(mktemp -d)
trap 'rm -rf "$T"' EXIT
if [ ! -x "$RP" ] || ! command -v python3 >/dev/null; then
	echo "SKIP rec_damage: $RP not built, or no python3"
	exit 0
fi
timeout 60 $F record -o $T/r.rec -- $RP tree > /dev/null 2>&1 || { echo "FAIL rec_damage/record"; exit 0; }
timeout 60 $F record -e 'f takes_str s:string' -o $T/s.rec -- $RP strings > /dev/null 2>&1

# the damaged copies: cut_<off> (at a block boundary and mid-block), hdr_<i>_<kind>
python3 - "$T" <<'PY'
import os, struct, sys
T = sys.argv[1]
for name in ("r", "s"):
    data = open(f"{T}/{name}.rec", "rb").read()
    hdr = struct.unpack_from("<I", data, 12)[0]
    off, i, cuts = hdr, 0, set()
    blocks = []
    while off + 8 <= len(data):
        typ, ln = struct.unpack_from("<II", data, off)
        blocks.append((off, typ, ln))
        off += 8 + ((ln + 7) & ~7)
    for off, typ, ln in blocks:
        cuts.add(off)
        cuts.add(off + 4)
        cuts.add(off + 8 + ln // 2)
    for c in sorted(cuts):
        open(f"{T}/{name}_cut_{c}", "wb").write(data[:c])
    for i, (off, typ, ln) in enumerate(blocks):
        for kind, val in (("type", struct.pack("<I", 0xdead)), ("len0", struct.pack("<I", 0)),
                          ("lenbig", struct.pack("<I", 0x7ffffff0)),
                          ("lenodd", struct.pack("<I", ln + 3)), ("lenless", struct.pack("<I", max(ln - 8, 0)))):
            d = bytearray(data)
            pos = off if kind == "type" else off + 4
            d[pos:pos + 4] = val
            open(f"{T}/{name}_hdr_{i}_{kind}", "wb").write(bytes(d))
        # the payload's first bytes corrupted
        d = bytearray(data)
        for k in range(min(ln, 16)):
            d[off + 8 + k] ^= 0xa5
        open(f"{T}/{name}_body_{i}", "wb").write(bytes(d))
    print(len(blocks), file=open(f"{T}/{name}.nblocks", "w"))
PY
n=0 bad=0 k=0
fmts=(json chrome graph perfetto)
for f in $T/r_* $T/s_*; do
	# text for every file, the other formats in turn (bounded time)
	k=$((k + 1))
	for fmt in text ${fmts[$((k % 4))]}; do
		timeout 20 $F replay --format $fmt -o $T/out "$f" > /dev/null 2>$T/err
		st=$?
		n=$((n + 1))
		if [ $st -gt 1 ]; then
			bad=$((bad + 1))
			[ $bad -le 5 ] && echo "  $(basename $f) --format $fmt: exit $st $(head -c 200 $T/err)"
		fi
	done
	[ $((k % 3)) = 0 ] || continue
	timeout 20 $F report "$f" > /dev/null 2>$T/err
	st=$?
	n=$((n + 1))
	if [ $st -gt 1 ]; then
		bad=$((bad + 1))
		[ $bad -le 5 ] && echo "  $(basename $f) report: exit $st $(head -c 200 $T/err)"
	fi
done
if [ $bad = 0 ]; then
	echo "PASS rec_damage/no_crash ($n reads of $(ls $T/r_* $T/s_* | wc -l) damaged files)"
else
	echo "FAIL rec_damage/no_crash: $bad of $n reads crashed or hung"
fi

# cut at a block boundary: the events before it are all there
full=$(timeout 20 $F replay $T/r.rec 2>/dev/null | wc -l)
prev=0 ok=1
for f in $(ls $T/r_cut_* | sort -t_ -k3 -n); do
	lines=$(timeout 20 $F replay "$f" 2>/dev/null | wc -l)
	if [ "$lines" -lt "$prev" ] || [ "$lines" -gt "$full" ]; then
		ok=0
		echo "  $(basename $f): $lines lines after $prev (of $full)"
	fi
	prev=$lines
done
[ $ok = 1 ] && echo "PASS rec_damage/cut_keeps_whole_blocks" || echo "FAIL rec_damage/cut_keeps_whole_blocks"
exit 0
