#!/bin/sh
# count.sh FILE: print the number of lines of FILE.
if [ $# -ne 1 ]; then
	echo "usage: count.sh FILE" >&2
	exit 2
fi
wc -l < "$1" | tr -d ' '
