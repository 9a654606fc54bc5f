#!/bin/bash
# Every command's help: `fhook CMD -h` exits 0 and prints, on standard
# output, a usage that names every option the command takes.  The options
# are read from the source, so that an option added without its help fails
# here: the long ones from the command's `struct option` table and the
# names it compares with strcmp ("--why"), the short ones from its getopt
# string; a command's table is the one in cmd_CMD() of cli/*.c, or in a
# parser it calls (cli_ev_parse() for record and trace).  -h/--help itself
# is left out: running it is the test.  And every command `fhook` runs is
# listed by `fhook help`.
set -o pipefail
cd "$FHOOK_ROOT" || exit 2
F=$FHOOK_ROOT/build/fhook

check() {	# name, condition (as a command), message
	local name=$1; shift
	if "$@"; then echo "PASS $name"; else echo "FAIL $name: $*"; fi
}
eq() { [ "$1" = "$2" ] || { echo "  got:      $(printf %q "$1")"; echo "  expected: $(printf %q "$2")"; return 1; }; }

# Options a command parses but does not take, each with the reason.
declare -A REFUSED=(
	[record]="--format"	# shared with trace in cli_ev_parse(); record refuses it (replay's)
)

# The body of C function $1 in cli/*.c, from its definition to its closing brace.
body() {
	awk -v f="$1" '!on && $0 ~ "^[a-z].*[ *]" f "\\(" && !/;[ \t]*$/ { on = 1 }
		on { print } on && /^}/ { exit }' cli/*.c
}

# The functions of cli/*.c, but cmd_*() and main(), that parse options: a command calling one takes its options.
parsers=$(awk '/^[a-z].*[ *][a-z_0-9]+\(/ && !/;[ \t]*$/ { match($0, /[a-z_0-9]+\(/); fn = substr($0, RSTART, RLENGTH - 1) }
	/getopt/ && fn != "" && fn !~ /^cmd_/ && fn != "main" { print fn }' cli/*.c | sort -u)

# The options of function $1 (and of the parsers it calls), one a line: --long or -s; -h/--help left out.
options_of() {
	local b p
	b=$(body "$1")
	for p in $parsers; do
		grep -q "[^a-z_0-9]$p(" <<< "$b" && b+=$'\n'$(body "$p")
	done
	{
		grep -oE '\{ *"[a-z0-9-]+", *(no|required|optional)_argument' <<< "$b" |
			sed -E 's/\{ *"([a-z0-9-]+)".*/--\1/'
		grep -oE 'strcmp\([^,]*, *"--[a-z0-9-]+"\)' <<< "$b" | grep -oE -- '--[a-z0-9-]+'
		grep -oE 'getopt(_long)?\([^,]*, *[^,]*, *"[^"]*"' <<< "$b" |
			sed -E 's/.*"([^"]*)"$/\1/' | tr -d '+:' | grep -o . | sed 's/^/-/'
	} | grep -vxE -- '--help|-h' | sort -u
}

# is option $1 named in text $2 (not as a part of a longer name)?
named() { grep -qE -- "(^|[^a-zA-Z0-9-])$1([^a-zA-Z0-9-]|$)" <<< "$2"; }

out=$($F help); st=$?
check help_exit eq "$st" 0
cmds=$(sed -n '/^commands:/,/^$/p' <<< "$out" | sed -nE 's/^  ([a-z]+)( .*)?$/\1/p' | sort -u)
# every command the dispatcher knows is listed
ran=$(body main | grep -oE 'strcmp\(argv\[1\], *"[a-z][a-z-]*"\)' | sed -E 's/.*"(.*)".*/\1/' | sort -u)
missing=$(comm -23 <(echo "$ran") <(echo "$cmds") | tr '\n' ' ')
check help_lists_every_command eq "$missing" ""
# the extraction finds what it must, or every check below would pass for nothing
check help_extraction_sane eq "$(options_of cmd_record | grep -cxE -- '--pid|--duration|--event|-e|-p')" 5

for cmd in $cmds; do
	out=$($F $cmd -h 2> /tmp/fhook-help-err.$$); st=$?
	err=$(cat /tmp/fhook-help-err.$$); rm -f /tmp/fhook-help-err.$$
	check help_${cmd}_exit eq "$st${err:+: $err}" 0
	# fhook help -h: the list, whose usage is fhook's own
	check help_${cmd}_usage grep -q "usage: fhook $([ $cmd = help ] && echo '<command>' || echo $cmd)" <<< "$out"
	fn=cmd_$cmd
	[ -n "$(body $fn)" ] || continue	# cflags, version, help: no options
	missing=
	for o in $(options_of $fn); do
		[[ " ${REFUSED[$cmd]} " == *" $o "* ]] && continue
		named "$o" "$out" || missing+="$o "
	done
	check help_${cmd}_options eq "${missing% }" ""
done
