// Package loadgen measures Iceberg REST catalogs side by side: it builds
// the same tables on each (through the REST API only), sends the same
// closed-loop load to each in interleaved rounds, and prints rates and
// latencies with the ratio of each catalog to a reference one. It speaks
// plain HTTP to any catalog URI, so it can compare this catalog with
// others (scripts/bench-peers.sh runs it against the Iceberg REST fixture).
package loadgen
