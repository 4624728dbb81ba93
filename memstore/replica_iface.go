package memstore

import "context"

// Stand-ins for the replication interfaces the replica branch defines in
// index.go; the lead removes this file when the branches merge.

// SharedIndex is an Index shared by several replicas of one memory, whose
// updates they serialise with Exclusive.
type SharedIndex interface {
	Index
	Exclusive(ctx context.Context, fn func(ctx context.Context) error) error
}

// ChangeFeed carries notifications of new commits between replicas.
type ChangeFeed interface {
	Publish(ctx context.Context, commit string) error
	Subscribe(ctx context.Context, fn func(commit string)) error
}
