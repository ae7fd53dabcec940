#!/usr/bin/env bash
# Stops an Azurite started by azurite-start.sh: azurite-stop.sh PID DIR
kill "$1" 2>/dev/null
for _ in $(seq 1 20); do kill -0 "$1" 2>/dev/null || break; sleep 0.5; done
kill -9 "$1" 2>/dev/null
rm -rf "$2"
