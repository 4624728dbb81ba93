package memstore

import (
	"context"
	"errors"
	"fmt"
	"os"
	"time"

	"github.com/selmem/selmem/internal/fsutil"
)

// lockName is the file, inside .git, that writers in every process lock
// (flock) while they read HEAD, commit and move the branch.
const lockName = "selmem.lock"

// lockWait is how long a writer waits for another process to release the
// repository's lock before giving up.
const lockWait = 60 * time.Second

// repoLock is an exclusive lock on the memory repository shared by every
// process that opens it. It is not reentrant, and one repoLock must not be
// used by two goroutines at once: Store.mu serialises its callers.
type repoLock struct {
	f *os.File
}

// openLock opens (creating) the lock file at p.
func openLock(p string) (*repoLock, error) {
	f, err := os.OpenFile(p, os.O_RDWR|os.O_CREATE, 0o644)
	if err != nil {
		return nil, fmt.Errorf("open repository lock: %w", err)
	}
	return &repoLock{f: f}, nil
}

// acquire takes the lock, waiting while another process holds it, until
// ctx ends or lockWait passes.
func (l *repoLock) acquire(ctx context.Context) error {
	err := fsutil.Lock(ctx, l.f, lockWait)
	switch {
	case errors.Is(err, fsutil.ErrLockTimeout):
		return &Error{Kind: ErrConflict,
			Msg:  fmt.Sprintf("Error: another selmem process has held the memory's write lock for over %s.", lockWait),
			Hint: "Retry in a moment; if it persists, look for a stuck selmem process (a long reindex holds the lock). Nothing was written."}
	case err != nil && ctx.Err() == nil:
		return fmt.Errorf("lock the memory repository: %w", err)
	}
	return err
}

// tryAcquire takes the lock if no other process holds it, without waiting.
func (l *repoLock) tryAcquire() bool {
	return fsutil.Lock(context.Background(), l.f, 0) == nil
}

// release drops the lock.
func (l *repoLock) release() { fsutil.Unlock(l.f) }

// close releases the lock and closes its file.
func (l *repoLock) close() error { return l.f.Close() }
