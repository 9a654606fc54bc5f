# The memcg example's client side, sourced by demo.sh and attach_demo.sh:
# requests to the server running on the coprocess $in/$out, and the tables
# the demos compare.

# send one request; its answer (without the "--end--" line) in $reply
ask() {
	local line
	reply=
	echo "$1" >&"$in"
	while IFS= read -r -t 10 line <&"$out"; do
		[ "$line" = "--end--" ] && return 0
		reply+="$line"$'\n'
	done
	echo "demo: the server did not answer '$1'" >&2
	exit 1
}

show() {
	echo "# cat /sys/fs/cgroup/task/$1"
	ask "cat $1"
	printf '%s' "$reply"
}

orig=$'low 0\nhigh 0\nmax 0\noom 0\noom_kill 0\n'
new="This is from __memory_events_show_new"$'\n'"$orig"
declare -A got
