// Package cluster holds only tests, behind the build tag "cluster": a real
// three-node NATS cluster (nats-server processes run from deploy/nats's
// config) with countersign's api and deciders processes, under faults
// (kill -9 of a NATS node and of a decider process). Run it with
//
//	go test -race -count=1 -tags cluster -run TestCluster ./internal/checks/cluster/
//
// and -cluster.duration=5m for a longer soak.
package cluster
