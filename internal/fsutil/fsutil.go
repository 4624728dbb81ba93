// Package fsutil holds the file-system steps that several packages must
// take the same careful way: replacing a file atomically (and durably when
// asked) and taking an exclusive flock that waits, bounded, for another
// process. It knows nothing of what the files hold.
package fsutil

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"time"
)

// TmpPattern names the temporary files WriteAtomic renames into place, so
// that a caller can find those a killed process left behind.
const TmpPattern = ".selmem-tmp-*"

// WriteAtomic writes data to a hidden temporary file beside p and renames
// it over p, so a reader sees the old file or the new one, never part of
// one. With sync, the file is flushed before the rename and the directory
// after it.
func WriteAtomic(p string, data []byte, sync bool) error {
	f, err := os.CreateTemp(filepath.Dir(p), TmpPattern)
	if err != nil {
		return err
	}
	tmp := f.Name()
	_, err = f.Write(data)
	if err == nil && sync {
		err = f.Sync()
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Rename(tmp, p)
	}
	if err != nil {
		_ = os.Remove(tmp)
		return err
	}
	if sync {
		return Sync(filepath.Dir(p))
	}
	return nil
}

// Sync flushes a file's content, or a directory's entries (a rename or a
// new file in it), to stable storage.
func Sync(p string) error {
	if skipDirSync(p) {
		return nil
	}
	d, err := os.Open(p)
	if err != nil {
		return err
	}
	err = d.Sync()
	if cerr := d.Close(); err == nil {
		err = cerr
	}
	return err
}

// ErrLockTimeout is a Lock that waited its whole time for another holder.
var ErrLockTimeout = errors.New("another process held the lock for the whole wait")

// Lock takes an exclusive flock on f, polling while another descriptor
// (in this process or another) holds it, until ctx ends (ctx.Err()) or
// wait passes (ErrLockTimeout). Each descriptor locks on its own, so two
// goroutines with their own descriptors exclude each other too.
func Lock(ctx context.Context, f *os.File, wait time.Duration) error {
	deadline := time.Now().Add(wait)
	pause := time.Millisecond
	for {
		busy, err := tryLock(f)
		if err != nil {
			return fmt.Errorf("flock %s: %w", filepath.Base(f.Name()), err)
		}
		if !busy {
			return nil
		}
		if time.Now().After(deadline) {
			return ErrLockTimeout
		}
		t := time.NewTimer(pause)
		select {
		case <-ctx.Done():
			t.Stop()
			return ctx.Err()
		case <-t.C:
		}
		pause = min(2*pause, 20*time.Millisecond)
	}
}

// Unlock drops a lock Lock took on f.
func Unlock(f *os.File) { unlock(f) }
