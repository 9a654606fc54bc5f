# Sourced by tests that compare call graphs: threads < GRAPH prints the
# graph's calls thread by thread (by id: the parent first, numbered from
# 1), without times or ids.
threads() {
	sed -n 's/^[^[]*\[ *\([0-9]*\)\] | \(.*\)$/\1 \2/p' |
		awk '{ tid = $1; sub(/^[0-9]+ /, ""); out[tid] = out[tid] $0 "\n" }
		     END { n = 0; for (t in out) ids[n++] = t + 0
			   for (i = 0; i < n; i++) for (j = i + 1; j < n; j++)
				if (ids[j] < ids[i]) { x = ids[i]; ids[i] = ids[j]; ids[j] = x }
			   for (i = 0; i < n; i++) printf "-- thread %d\n%s", i + 1, out[ids[i]] }'
}
