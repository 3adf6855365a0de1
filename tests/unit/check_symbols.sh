#!/bin/sh
# SPDX-License-Identifier: MIT
# Every global symbol the sonde libraries define carries the sonde_ prefix:
# internals that cross files are named sonde_*, the rest are static, so a
# program linking the libraries can't collide with them.
#   check_symbols.sh NM LIB.a...
nm=$1
shift
# The sanitizers add their own globals (ASan's __odr_asan.NAME beside each
# of ours, coverage counters): those are the compiler's, not ours.
bad=$("$nm" -g --defined-only "$@" |
	awk 'NF == 3 && $3 !~ /^sonde_/ && $3 !~ /^__(odr_asan|asan|ubsan|sancov)/ { print "  " $2 " " $3 }' |
	sort -u)
if [ -n "$bad" ]; then
	echo "global symbols without the sonde_ prefix (make them static or name them sonde_*):"
	echo "$bad"
	exit 1
fi
exit 0
