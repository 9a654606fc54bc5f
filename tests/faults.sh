# Sourced by the tests that bound page faults and the start-up's layout
# (after cd to the tree):
#   faults_build DIR    builds DIR/minflt (tests/minflt.c); false if cc fails
#   least N CMD...      the smallest of N counts CMD prints: page-cache state
#                       and timing only ever add faults
#   bounded NAME N BOUND TEXT
#                       "PASS NAME: TEXT" if N <= BOUND, else "FAIL NAME: TEXT"
faults_build() {
	cc -O2 -o "$1/minflt" tests/minflt.c
}
least() {
	local runs=$1 i n min=
	shift
	for ((i = 0; i < runs; i++)); do
		n=$("$@") || return 1
		[ -z "$min" ] || [ "$n" -lt "$min" ] && min=$n
	done
	echo "$min"
}
bounded() {
	if [ "$2" -le "$3" ]; then
		echo "PASS $1: $4"
	else
		echo "FAIL $1: $4"
	fi
}
