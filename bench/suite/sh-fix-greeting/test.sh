#!/bin/sh
fail=0
check() { if [ "$1" = "$2" ]; then echo "ok: $2"; else echo "FAIL: got '$1', want '$2'"; fail=1; fi; }
check "$(sh greet.sh)" "Hello, World!"
check "$(sh greet.sh Ada)" "Hello, Ada!"
[ $fail = 0 ] && echo PASS
exit $fail
