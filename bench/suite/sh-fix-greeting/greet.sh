#!/bin/sh
# Prints a greeting for the name given, or for World.
name=${1:-World}
echo "Helo, $name!"
