package memstore

// STAND-IN for branch ops: replaced by the replica and pgns branches at merge.

import (
	"context"
	"time"
)

type Remote struct {
	URL    string
	Branch string
	Poll   time.Duration
	Feed   ChangeFeed
}

type SyncResult struct {
	From, To string
	Paths    []string
}

type RemoteStatus struct {
	URL, Branch           string
	LocalHead, RemoteHead string
	LastContact           time.Time
	LastError             string
	Behind                int
}

func (s *Store) Sync(ctx context.Context) (SyncResult, error)        { return SyncResult{}, nil }
func (s *Store) Follow(ctx context.Context, fn func([]string)) error { <-ctx.Done(); return nil }
func (s *Store) RemoteStatus(ctx context.Context) (RemoteStatus, error) {
	return RemoteStatus{}, nil
}
