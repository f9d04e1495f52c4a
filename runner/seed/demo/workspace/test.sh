#!/bin/sh
# Checks lib/slugify.sh. Exits 0 when every check passes, 1 otherwise.
# Run it from anywhere:  sh test.sh
LC_ALL=C
export LC_ALL
cd "$(dirname "$0")" || exit 2
. ./lib/slugify.sh

passed=0
failed=0

check() {
	got=$(slugify "$1")
	if [ "$got" = "$2" ]; then
		passed=$((passed + 1))
		printf 'ok    slugify "%s" -> "%s"\n' "$1" "$got"
	else
		failed=$((failed + 1))
		printf 'FAIL  slugify "%s"\n        want "%s"\n        got  "%s"\n' "$1" "$2" "$got"
	fi
}

check "Hello World" "hello-world"
check "Already-a-slug" "already-a-slug"
check "Release v2.0 notes" "release-v2-0-notes"
check "100% Pure" "100-pure"
check "  Leading and trailing  " "leading-and-trailing"
check "Hello, World!" "hello-world"

printf '\n%d passed, %d failed\n' "$passed" "$failed"
[ "$failed" -eq 0 ]
