#!/bin/bash
# $(fhook cflags) with g++: each site's record goes into its function's COMDAT
# group (GCC 12 leaves them outside every group, and C++ libraries fail to
# link), the code is what GCC made, and a C++ object with shared inline
# functions links and runs traced (fhook record and report exiting 0).
set -o pipefail
cd "${FHOOK_ROOT:-$(dirname "$0")/../..}" || exit 2
. tests/check.sh
CHECK_PREFIX=gcc_as
B=${FHOOK_BUILD:-build}
FHOOK=$B/fhook
if [ ! -x "$FHOOK" ] || ! command -v g++ >/dev/null; then
	echo "SKIP gcc_as: $FHOOK or g++ missing"
	exit 0
fi
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
flags=$("$FHOOK" cflags)
case "$flags" in
*-B*) echo "PASS gcc_as/cflags ($flags)" ;;
*) echo "FAIL gcc_as/cflags: '$flags' names no assembler front end"; exit 0 ;;
esac
cat >"$tmp/h.h" <<'CC'
#include <vector>
inline int twice(int x) { return 2 * x; }
template <class T> T sum(const std::vector<T> &v) { T s = 0; for (auto x : v) s += twice(x); return s; }
CC
printf '#include "h.h"\nint fa() { std::vector<int> v{1, 2}; return sum(v); }\n' >"$tmp/a.cc"
printf '#include "h.h"\nint fa();\nint main() { std::vector<int> v{3}; return sum(v) + fa() - 12; }\n' >"$tmp/b.cc"
for f in a b; do
	# -O0: every inline function and template instance is a COMDAT of its own
	g++ -O0 $flags -c -o "$tmp/$f.o" "$tmp/$f.cc" || { echo "FAIL gcc_as/compile: $f.cc"; exit 0; }
	g++ -O0 -fpatchable-function-entry=5 -c -o "$tmp/$f.plain.o" "$tmp/$f.cc"
done
# every COMDAT function's record is in its group
grouped=$(readelf -gW "$tmp/a.o" | grep -c ' __patchable_function_entries$')
comdat=$(readelf -gW "$tmp/a.o" | grep -cE '^ +\[ *[0-9]+\] +\.text\.')
if [ "$grouped" -ge 1 ] && [ "$grouped" = "$comdat" ]; then
	echo "PASS gcc_as/groups ($grouped groups of code hold their function's record)"
else
	echo "FAIL gcc_as/groups: $grouped records in $comdat groups of code"
fi
# the code is GCC's, byte for byte
if cmp -s <(objdump -d "$tmp/a.o" | tail -n +4) <(objdump -d "$tmp/a.plain.o" | tail -n +4); then
	echo "PASS gcc_as/same-code"
else
	echo "FAIL gcc_as/same-code: the front end changed the code"
fi
# it links, runs, and every function with a site is traced
if g++ -o "$tmp/p" "$tmp/a.o" "$tmp/b.o" && "$tmp/p"; then
	n=$("$FHOOK" record -o "$tmp/p.rec" -- "$tmp/p" 2>&1 | sed -nE 's/^fhook: record: ([0-9]+) events.*/\1/p')
	st=$?
	report=$("$FHOOK" report -s name "$tmp/p.rec" 2>/dev/null)
	rst=$?
	# sum<int>, by its short name (docs/events.md, C++ names)
	f=$(grep -cE ' sum$' <<< "$report")
	if [ $st = 0 ] && [ $rst = 0 ] && [ -n "$n" ] && [ "$n" -gt 0 ] && [ "$f" = 1 ]; then
		echo "PASS gcc_as/traced ($n events)"
	else
		echo "FAIL gcc_as/traced: record exit $st, report exit $rst, $n events; $("$FHOOK" report "$tmp/p.rec" 2>&1 | head -5)"
	fi
else
	echo "FAIL gcc_as/link: the objects do not link or run"
fi

# The proof of handlers that leave the vector registers alone: a note in
# the object lists the notrace leaves that do (by size and hash), not the
# others; an object whose functions all have a site is left as `as` wrote it.
cat >"$tmp/v.c" <<'C'
#define NOTRACE __attribute__((patchable_function_entry(0, 0)))
static long n;
NOTRACE void leaf(void) { n++; }
NOTRACE void leaf2(long x) { n += x; }
NOTRACE double fp(double x) { return x * 3; }
void ext(void);
NOTRACE void calls(void) { ext(); __asm__ volatile(""); }
/* by hand: a store over the return address; a jump capstone reads as 16-bit */
__asm__(".type over_ret, @function\nover_ret:\n\tleaq ext(%rip), %rax\n"
	"\tmovq %rax, (%rsp)\n\tret\n.size over_ret, .-over_ret\n"
	".type jmp16, @function\njmp16:\n\t.byte 0x66, 0xe9, 0, 0, 0, 0\n\tret\n"
	".size jmp16, .-jmp16\n");
/*
 * %rcx, a handler's fregs: never the value it came with (rcx_in, a
 * partial write, a conditional one, a path that did not write it (also
 * one followed after a path that did), a read
 * in the write's own source or address), but all of it once written
 * (rcx_own, with the zeroing idiom and a plain move)
 */
#define FN(name, body) ".type " #name ", @function\n" #name ":\n" body "\tret\n" \
	".size " #name ", .-" #name "\n"
__asm__(FN(rcx_own, "\txorl %ecx, %ecx\n\taddq $1, %rcx\n\tmovl $7, %ecx\n\tmovq %rcx, %rax\n")
	FN(rcx_in, "\tmovq %rcx, %rax\n")
	FN(rcx_cl, "\tmovb $1, %cl\n\tmovq %rcx, %rax\n")
	FN(rcx_cmov, "\tcmovzq %rax, %rcx\n\tmovq %rcx, %rax\n")
	FN(rcx_join, "\ttestq %rdi, %rdi\n\tjz 1f\n\tmovl $5, %ecx\n1:\tmovq %rcx, %rax\n")
	FN(rcx_merge, "\ttestq %rdi, %rdi\n\tjz 2f\n\tmovl $5, %ecx\n\tjmp 1f\n2:\tjmp 1f\n"
		      "1:\tmovq %rcx, %rax\n")
	FN(rcx_self, "\tmovq %rcx, %rcx\n")
	FN(rcx_addr, "\tleaq 8(%rcx), %rcx\n"));
/*
 * ... whose words it may load (the note says which: [lo, hi) of them),
 * but not take its address, store or add to it, index with it or reach
 * outside a struct ftrace_regs (40 words); once %rcx is its own, a load
 * through it is none of fregs'
 */
__asm__(FN(fregs_arg, "\tmovq 0x70(%rcx), %rax\n")
	FN(fregs_two, "\tmovl 0x60(%rcx), %eax\n\taddq 0x50(%rcx), %rax\n")
	FN(fregs_lea, "\tleaq 0x70(%rcx), %rax\n")
	FN(fregs_store, "\tmovq %rax, 0x70(%rcx)\n")
	FN(fregs_rmw, "\taddq $1, 0x70(%rcx)\n")
	FN(fregs_index, "\tmovq (%rax,%rcx,8), %rax\n")
	FN(fregs_past, "\tmovq 0x13c(%rcx), %rax\n")
	FN(fregs_neg, "\tmovq -8(%rcx), %rax\n")
	FN(fregs_owned, "\tmovl $5, %ecx\n\tmovq 8(%rcx), %rax\n")
	FN(fregs_cmp, "\tcmpq $0, 0x70(%rcx)\n\tsete %al\n")
	/* read-modify-write, whatever the decoder says of their access, and bt's offset */
	FN(fregs_rol, "\trolq 0x70(%rcx)\n")
	FN(fregs_cmpxchg, "\tlock cmpxchgq %rdx, 0x68(%rcx)\n")
	FN(fregs_movbe, "\tmovbeq %rax, 0x38(%rcx)\n")
	FN(fregs_bt, "\tbtq %rax, 0x38(%rcx)\n")
	/* a frame ret cannot see past, a far return, the direction flag left set */
	FN(enter_ret, "\tenter $8, $0\n")
	FN(far_ret, "\tlret\n")
	FN(std_ret, "\tstd\n"));
/* a loop back to its entry, the first bytes of its section: a branch to offset 0 */
__asm__(".pushsection .text.loop0, \"ax\", @progbits\n"
	FN(loop0, "1:\tsubq $1, %rdi\n\tjnz 1b\n") ".popsection\n");
void traced(void) { n--; }
C
gcc -O2 $flags -c -o "$tmp/v.o" "$tmp/v.c" || echo "FAIL gcc_as/vec_compile"
gcc -O2 -fpatchable-function-entry=5 -c -o "$tmp/v.plain.o" "$tmp/v.c"
# records: size, nmask | fregs << 8, hash (2 words), masks: size:fregs of each
# function proven
size_of() { readelf -sW "$tmp/v.o" | awk -v f=$1 '$8 == f { print $3 }'; }
want=$({ for f in leaf leaf2 rcx_own loop0 fregs_owned; do echo "$(size_of $f):0"; done
	echo "$(size_of fregs_arg):14-15"; echo "$(size_of fregs_two):10-13"
	echo "$(size_of fregs_cmp):14-15"; } |
	sort | tr '\n' ' ')
got=$(python3 - "$tmp/v.o" <<'PY'
import subprocess, struct, sys
p = sys.argv[1]
d = open(p, "rb").read()
for l in subprocess.run(["readelf", "-SW", p], capture_output=True, text=True).stdout.splitlines():
    if ".note.fhook.vecfree" in l:
        f = l.split("]")[1].split()
        off, size = int(f[3], 16), int(f[4], 16)
        namesz, descsz, typ = struct.unpack_from("<III", d, off)
        desc, i, recs = off + 12 + ((namesz + 3) & ~3), 0, []
        while i < descsz:
            sz, nm = struct.unpack_from("<II", d, desc + i)
            fr = nm >> 8
            recs.append("%d:%s" % (sz, "%d-%d" % (fr & 0xff, fr >> 8) if fr else "0"))
            i += 16 + 8 * (nm & 0xff)
        print(" ".join(sorted(recs)) + " " + hex(typ))
PY
)
check vec_note_records eq "$got" "${want}0x76656366"
check vec_note_alloc eq "$(readelf -SW "$tmp/v.o" | grep -c 'vecfree  *NOTE .* A ')" 1
# the object is still the assembler's: code, relocations, symbols and
# sections (but for the one added), and the program links with the note
# in a PT_NOTE
for what in "objdump -dr" "readelf -rW" "readelf -sW"; do
	check "vec_same ($what)" eq \
		"$($what "$tmp/v.o" | tail -n +4 | sed 's/ at offset 0x[0-9a-f]*//' | md5sum)" \
		"$($what "$tmp/v.plain.o" | tail -n +4 | sed 's/ at offset 0x[0-9a-f]*//' | md5sum)"
done
sections() { readelf -SW "$1" | sed -n 's/^ *\[ *[0-9]*\] \([^ ]*\) *\([A-Z_]*\) .*/\1 \2/p'; }
check vec_same_sections eq "$(sections "$tmp/v.o" | grep -v vecfree)" "$(sections "$tmp/v.plain.o")"
printf 'void leaf(void); void ext(void) {} int main(void) { leaf(); return 0; }\n' >"$tmp/vm.c"
gcc -O2 -o "$tmp/vm" "$tmp/vm.c" "$tmp/v.o" -Wl,--gc-sections
check vec_note_linked eq "$(readelf -nW "$tmp/vm" | grep -c '^ *fhook ')" 1
# every function with a site: nothing to list, no note
printf 'int a(int x) { return x + 1; }\n' >"$tmp/p.c"
gcc -O2 $flags -c -o "$tmp/p1.o" "$tmp/p.c"
check vec_no_candidates eq "$(readelf -SW "$tmp/p1.o" | grep -c vecfree)" 0
# ... and no decoder is loaded for it, nor for GCC's cold parts (no site,
# never a handler)
printf 'int g(int x) { if (x < 0) throw x; return x * 2; }\n' >"$tmp/cold.cc"
if command -v strace >/dev/null; then
	strace -f -e trace=openat -o "$tmp/st" g++ -O2 $flags -c -o "$tmp/cold.o" "$tmp/cold.cc"
	check vec_cold_part eq "$(readelf -sW "$tmp/cold.o" | grep -c '_Z1gi.cold'):$(grep -c capstone "$tmp/st")" "1:0"
	strace -f -e trace=openat -o "$tmp/st" gcc -O2 $flags -c -o "$tmp/p1.o" "$tmp/p.c"
	check vec_no_decoder eq "$(grep -c capstone "$tmp/st")" 0
else
	echo "SKIP gcc_as/vec_no_decoder: no strace"
fi
# the assembler's failure is the front end's, and leaves no object behind
printf 'void bad(void) { __asm__("no_such_insn"); }\n' >"$tmp/bad.c"
gcc -O2 $flags -c -o "$tmp/bad.o" "$tmp/bad.c" 2>/dev/null
check vec_as_failure eq "$?:$(ls "$tmp" | grep -c 'bad.o')" "1:0"
