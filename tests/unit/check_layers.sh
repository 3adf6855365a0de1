#!/bin/sh
# SPDX-License-Identifier: MIT
# The layers of docs/ARCHITECTURE.md hold in the code:
#   (a) no file of src/ includes a public header of a higher layer, nor of
#       a sibling folder of its own layer;
#   (b) no object of the libraries calls a function of a higher layer (or
#       of a sibling folder), from nm: its undefined symbols against the
#       objects that define them.  Cycles between files of one folder are
#       the call_cycles test's (scripts/check-call-cycles);
#   (c) the agent links no doctor and no host object: none of the globals
#       that sonde-doctor and sonde-host define is in the agent binary.
#   check_layers.sh SRCDIR NM AGENT TARGET.a HOST.a DOCTOR.a
# A public header X.h belongs to the folder of src/*/X.c, else to the
# folder of the .c files that include it first (a module includes its own
# header first), the lowest when several match; the few headers neither
# rule places are listed below.
# A folder that is in no layer fails: add it to the order here and in
# docs/ARCHITECTURE.md.
src=$1 nm=$2 agent=$3 target=$4 host=$5 doctor=$6

# Lowest first; folders of one group are siblings: none uses another.
layers='core format,perfev,tracefs,synth machine record,doctor symbols,disasm profile,decode output agent cli'
# Headers with no implementation file of their own that includes them first.
headers='hash.h:core symbols.h:symbols'

ranks=$(i=0
	for g in $layers; do
		for l in $(echo "$g" | tr , ' '); do echo "$l:$i"; done
		i=$((i + 1))
	done | tr '\n' ' ')
status=0
fail() {
	echo "check_layers: $1 failed"
	exit 2
}

# (a) includes, of src/ and of the public headers themselves
bad=$(awk -v ranks="$ranks" -v table="$headers" '
	function folder(path,   p, n) { n = split(path, p, "/"); return p[n - 1] }
	function base(path,   p, n) { n = split(path, p, "/"); return p[n] }
	function lower(a, b) { return a == "" || rank[b] < rank[a] ? b : a }
	BEGIN {
		n = split(ranks, a, " ")
		for (i = 1; i <= n; i++) { split(a[i], b, ":"); rank[b[1]] = b[2] }
		n = split(table, a, " ")
		for (i = 1; i <= n; i++) { split(a[i], b, ":"); fixed[b[1]] = b[2] }
	}
	FNR == 1 {
		first = 1
		dir = folder(FILENAME)
		if (FILENAME ~ /\/include\/sonde\//)
			dir = "=" base(FILENAME) # its own layer, known at the end
		else if (FILENAME ~ /\.c$/ && dir in rank) {
			m = base(FILENAME); sub(/\.c$/, ".h", m)
			named[m] = lower(named[m], dir)
		}
	}
	/^#include/ {
		if (match($0, /<sonde\/[^>]+>/)) {
			h = substr($0, RSTART + 7, RLENGTH - 8)
			inc[++ni] = FILENAME "\t" dir "\t" h
			if (first && FILENAME ~ /\.c$/ && dir in rank)
				firstinc[h] = lower(firstinc[h], dir)
		}
		first = 0
	}
	function layer(h) {
		return h in named ? named[h] : h in firstinc ? firstinc[h] : h in fixed ? fixed[h] : ""
	}
	END {
		for (i = 1; i <= ni; i++) {
			split(inc[i], f, "\t")
			d = f[2]
			if (d ~ /^=/ && (d = layer(substr(d, 2))) == "") continue # reported below
			if (!(d in rank)) { print "  folder src/" d " is in no layer"; continue }
			if ((l = layer(f[3])) == "") { print "  <sonde/" f[3] "> has no layer"; continue }
			if (l != d && rank[l] >= rank[d])
				print "  " f[1] " (" d ") includes <sonde/" f[3] "> of src/" l
		}
	}' "$src"/src/*/*.c "$src"/src/*/*.h "$src"/include/sonde/*.h) || fail awk
bad=$(printf '%s\n' "$bad" | sed "s|$src/||" | sort -u)
if [ -n "$bad" ]; then
	echo "includes of a higher (or sibling) layer:"
	echo "$bad"
	status=1
fi

# (b) calls between layers; objects are named src_FOLDER_FILE.c.o
syms=$("$nm" -o "$target" "$host" "$doctor") || fail nm
bad=$(printf '%s\n' "$syms" | awk -v ranks="$ranks" '
	BEGIN {
		n = split(ranks, a, " ")
		for (i = 1; i <= n; i++) { split(a[i], b, ":"); rank[b[1]] = b[2] }
	}
	{
		# "lib.a:dir/src_record_capture.c.o:0000 T sym" or "lib.a:obj:  U sym"
		split($1, p, ":"); obj = p[2]; sub(/.*\//, "", obj)
		if (obj !~ /^src_/) next
		if ($2 == "U") { use[++nu] = obj "\t" $3; next }
		if (NF == 3 && $2 ~ /^[A-Z]$/) def[$3] = obj
	}
	function folder(o,   s) { s = substr(o, 5); return substr(s, 1, index(s, "_") - 1) }
	END {
		for (i = 1; i <= nu; i++) {
			split(use[i], u, "\t")
			if (!(u[2] in def)) continue
			from = folder(u[1]); to = folder(def[u[2]])
			if (from == to) continue
			if (!(from in rank)) { print "  folder src/" from " is in no layer"; continue }
			if (!(to in rank)) { print "  folder src/" to " is in no layer"; continue }
			if (rank[to] >= rank[from])
				print "  " u[1] " calls " u[2] " (" def[u[2]] ")"
		}
	}') || fail awk
bad=$(printf '%s\n' "$bad" | sort -u)
if [ -n "$bad" ]; then
	echo "calls into a higher (or sibling) layer:"
	echo "$bad"
	status=1
fi

# (c) the agent
libsyms=$("$nm" -g --defined-only "$host" "$doctor") || fail nm
agentsyms=$("$nm" --defined-only "$agent") || fail nm
[ -n "$agentsyms" ] || fail "nm (no symbols in $agent)"
bad=$({
	printf '%s\n' "$libsyms" | awk 'NF == 3 { print "lib " $3 }'
	printf '%s\n' "$agentsyms" | awk 'NF == 3 && $2 ~ /^[A-Z]$/ { print "agent " $3 }'
} | awk '$1 == "lib" { lib[$2] = 1; next } ($2 in lib) { print "  " $2 }' | sort -u)
if [ -n "$bad" ]; then
	echo "the agent links doctor or host code (it must link sonde-target only):"
	echo "$bad"
	status=1
fi
exit $status
