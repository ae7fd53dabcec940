// Package fault holds a fault-injection test of the catalog: real replicas
// of the built binary over one durable Postgres cluster, a kill -9 of a
// replica and an immediate Postgres restart under concurrent commits, with
// the recorded history checked for linearizability by porcupine. It runs
// only with CATALOG_TEST_FAULT=1 (scripts/test.sh sets it); the package has
// no non-test code.
package fault
