#!/bin/sh
# backup.sh SRC DEST: copy SRC to DEST/SRC.bak
set -e
src=$1
dest=$2
mkdir -p "$dest"
cp "$src" "$dest/$src.bk"
