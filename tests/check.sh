# Sourced by test scripts (after cd to the tree): one "PASS name" or
# "FAIL name: why" line per check, named $CHECK_PREFIX/name.
check() {	# name, condition (as a command)
	local name=${CHECK_PREFIX:+$CHECK_PREFIX/}$1; shift
	if "$@"; then echo "PASS $name"; else echo "FAIL $name: $*"; fi
}
eq() { [ "$1" = "$2" ] || { echo "  got:      $(printf %q "$1")"; echo "  expected: $(printf %q "$2")"; return 1; }; }
