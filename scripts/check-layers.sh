#!/bin/bash
# Check that calls and includes go one way, down the layers:
#
#   util <- arch <- kallsyms <- core <- fprobe, livepatch <- kprobes <- recorder <- events <- cli
#
# (fprobe and livepatch side by side: neither uses the other.)  Arch code
# reaches up only through the hooks lib/arch/hooks.h declares, which are
# function pointers, so no upward symbol appears in its objects.
#
# Two checks, one line each per violation, "PASS"/"FAIL" lines for the
# test runner:
#   includes  every #include "..." of lib/ and cli/ names a file of its
#             own layer or of a layer below;
#   symbols   every symbol an object of build/lib/ uses that another
#             object of the library defines is defined in its own layer
#             or below (nm of the built objects).
#
#   scripts/check-layers.sh [BUILD_DIR]
#   FHOOK_LAYERS_TREE=dir   check the sources of another tree (its own tests)
#   FHOOK_LAYERS_OBJS=list  check these objects (paths under BUILD_DIR/lib)
cd "${FHOOK_LAYERS_TREE:-$(dirname "$0")/..}" || exit 2
B=${1:-build}

level() {
	case $1 in
	util) echo 0 ;;
	arch) echo 1 ;;
	kallsyms) echo 2 ;;
	core) echo 3 ;;
	fprobe | livepatch) echo 4 ;;
	kprobes) echo 5 ;;
	recorder) echo 6 ;;
	events) echo 7 ;;
	cli) echo 8 ;;
	*) echo 99 ;;
	esac
}

# the layer of a path: lib/<layer>/..., cli/...
layer_of() {
	case $1 in
	lib/*) local r=${1#lib/}; echo "${r%%/*}" ;;
	cli/*) echo cli ;;
	include/fhook/internal/*) echo util ;;	# shared declarations, no code
	include/*) echo public ;;
	*) echo other ;;
	esac
}

allowed() {	# allowed FROM TO
	local from=$1 to=$2 lf lt
	[ "$to" = public ] && return 0
	[ "$from" = "$to" ] && return 0
	lf=$(level "$from")
	lt=$(level "$to")
	[ "$lt" -lt "$lf" ]
}

bad=0
nfiles=0
while IFS= read -r f; do
	nfiles=$((nfiles + 1))
	from=$(layer_of "$f")
	dir=$(dirname "$f")
	while IFS= read -r inc; do
		# resolve as the compiler does: next to the file, then -Iinclude -Ilib -Ilib/arch/<arch>
		target=
		for cand in "$dir/$inc" "include/$inc" "lib/$inc" lib/arch/*/"$inc"; do
			if [ -f "$cand" ]; then
				target=$(realpath --relative-to=. "$cand")
				break
			fi
		done
		[ -z "$target" ] && continue	# a system header
		to=$(layer_of "$target")
		if ! allowed "$from" "$to"; then
			echo "FAIL layers_include: $f includes $target ($from may not use $to)"
			bad=$((bad + 1))
		fi
	done < <(sed -n 's/^[[:space:]]*#[[:space:]]*include[[:space:]]*"\([^"]*\)".*/\1/p' "$f")
done < <(find lib cli -name '*.[chS]' | sort)
[ "$bad" = 0 ] && echo "PASS layers_includes ($nfiles files)"

# symbols: which layer defines each global symbol of the library (the
# objects the library is linked from, not stale ones of an older tree)
objs=
for o in ${FHOOK_LAYERS_OBJS:-$(make -s --no-print-directory B="$B" print-LIB_OBJS)}; do
	[ -f "$o" ] && objs="$objs $o"
done
# C library functions libfhook interposes are called as libc's, by core and above
interposed=" $(sed -n '/interposed/,/^local:/p' lib/libfhook.map |
	sed -n 's/^[[:space:]]*\([A-Za-z_][A-Za-z0-9_]*\);.*/\1/p' | tr '\n' ' ') "
if [ -z "$objs" ]; then
	echo "FAIL layers_symbols: no objects under $B/lib (build first)"
	exit 1
fi
declare -A def
for o in $objs; do
	l=$(layer_of "${o#$B/}")
	for s in $(nm --defined-only -g "$o" | awk '{print $3}'); do
		def[$s]=$l
	done
done
sbad=0
for o in $objs; do
	from=$(layer_of "${o#$B/}")
	for s in $(nm -u "$o" | awk '{print $2}'); do
		to=${def[$s]}
		[ -z "$to" ] && continue	# libc, liburcu...
		# core's interposers stand for libc to core and above; below, libc's
		# own entry (lib/util/libc.h) says so
		[[ $interposed == *" $s "* ]] && [ "$(level "$from")" -ge "$(level core)" ] && continue
		if ! allowed "$from" "$to"; then
			echo "FAIL layers_symbol: ${o#$B/} uses $s of lib/$to ($from may not call $to)"
			sbad=$((sbad + 1))
		fi
	done
done
[ "$sbad" = 0 ] && echo "PASS layers_symbols ($(wc -w <<< "$objs") objects)"
[ "$bad" = 0 ] && [ "$sbad" = 0 ]
