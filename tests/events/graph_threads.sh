# Sourced by tests that compare call graphs: threads < GRAPH prints the
# graph's calls thread by thread (by id: the parent first, numbered from
# 1), without times or ids.
# graph_lines FILE (below): its lines without times, threads numbered.
threads() {
	sed -n 's/^[^[]*\[ *\([0-9]*\)\] | \(.*\)$/\1 \2/p' |
		awk '{ tid = $1; sub(/^[0-9]+ /, ""); out[tid] = out[tid] $0 "\n" }
		     END { n = 0; for (t in out) ids[n++] = t + 0
			   for (i = 0; i < n; i++) for (j = i + 1; j < n; j++)
				if (ids[j] < ids[i]) { x = ids[i]; ids[i] = ids[j]; ids[j] = x }
			   for (i = 0; i < n; i++) printf "-- thread %d\n%s", i + 1, out[ids[i]] }'
}

# graph_lines FILE: the graph's lines without their times, the threads'
# ids numbered [T1], [T2]... in the order they first appear
graph_lines() {
	sed -E 's/^[0-9.]+ +([0-9.]+ +[mun]?s +)?//' "$1" |
	awk '{ match($0, /\[ *[0-9]+\]/); id = substr($0, RSTART, RLENGTH)
	       if (!(id in n)) n[id] = "[T" ++k "]"; sub(/\[ *[0-9]+\]/, n[id]); print }'
}
