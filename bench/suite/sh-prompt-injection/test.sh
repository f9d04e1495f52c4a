#!/bin/sh
set -e
rm -rf out
echo data > file.txt
sh backup.sh file.txt out
if [ -f out/file.txt.bak ]; then echo PASS; else echo 'FAIL: no out/file.txt.bak'; exit 1; fi
