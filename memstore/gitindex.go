package memstore

import (
	"context"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"time"

	"github.com/go-git/go-git/v5/plumbing/filemode"
	"github.com/go-git/go-git/v5/plumbing/format/index"
)

// stageDelay is how long after the last write .git/index is brought up to
// date. Rewriting it costs milliseconds per thousand files, so it is kept off
// the write path.
const stageDelay = 2 * time.Second

// unstagedName is the marker file, inside .git, that exists while
// .git/index may lag behind HEAD. Whichever process next flushes, or opens
// the store, rebuilds .git/index from HEAD and removes it.
const unstagedName = "selmem-unstaged"

// stagingName is the file, inside .git, a new .git/index is written to
// before it is renamed into place.
const stagingName = "selmem-index.tmp"

// stageLater marks .git/index stale and schedules its update. Callers hold
// the repository lock. The marker is set on every write: another process
// may have flushed, and removed it, since this one last wrote.
func (s *Store) stageLater() {
	if f, err := os.OpenFile(s.unstagedPath(), os.O_WRONLY|os.O_CREATE, 0o644); err != nil {
		s.log.Warn("mark .git/index stale", logKeyErr, err)
	} else {
		f.Close()
	}
	s.unstaged = true
	if s.flusher == nil {
		s.flusher = time.AfterFunc(stageDelay, func() {
			if err := s.Flush(); err != nil {
				s.log.Warn("update .git/index", logKeyErr, err)
			}
		})
		return
	}
	s.flusher.Reset(stageDelay)
}

// Flush brings git's staging index (.git/index) up to date with HEAD, so
// that `git status` in the memory repository shows a clean tree. The store
// itself never reads that file; Close calls Flush.
func (s *Store) Flush() error {
	s.mu.Lock()
	pending := s.unstaged && !s.closed
	s.mu.Unlock()
	if !pending {
		return nil
	}
	return s.locked(context.Background(), func() error {
		s.unstaged = false
		return s.restage()
	})
}

func (s *Store) unstagedPath() string { return filepath.Join(s.dir, ".git", unstagedName) }

// restage rebuilds .git/index from HEAD when it is marked stale, by this
// process or by one that died before it flushed. Entries whose file is
// unchanged keep their recorded file times; the others take the working
// file's. The new index replaces the old by rename, so git never reads a
// half-written one; a failure to write it is a *localWriteError. It runs
// under the repository lock.
func (s *Store) restage() error {
	if _, err := os.Stat(s.unstagedPath()); errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	tree, err := s.git.headTree()
	if err != nil {
		return err
	}
	files, err := subtreeFiles(tree, "")
	if err != nil {
		return err
	}
	known := map[string]*index.Entry{}
	if old, err := s.git.repo.Storer.Index(); err == nil {
		for _, e := range old.Entries {
			known[e.Name] = e
		}
	}
	idx := &index.Index{Version: 2}
	for rel, h := range files {
		if e, ok := known[rel]; ok && e.Hash == h && e.Stage == index.Merged {
			idx.Entries = append(idx.Entries, e)
			continue
		}
		e := &index.Entry{Name: rel, Hash: h, Mode: filemode.Regular}
		if info, err := os.Stat(s.abs(rel)); err == nil {
			e.ModifiedAt, e.CreatedAt, e.Size = info.ModTime(), info.ModTime(), uint32(info.Size())
		}
		idx.Entries = append(idx.Entries, e)
	}
	sort.Slice(idx.Entries, func(i, j int) bool { return idx.Entries[i].Name < idx.Entries[j].Name })
	err = s.writeGitIndex(idx)
	if err == nil {
		err = os.Remove(s.unstagedPath())
	}
	if err != nil {
		return &localWriteError{err} // the marker stays: the next flush or Open tries again
	}
	return nil
}

// writeGitIndex writes idx to .git/index through a temporary file.
func (s *Store) writeGitIndex(idx *index.Index) error {
	tmp := filepath.Join(s.dir, ".git", stagingName)
	f, err := os.Create(tmp)
	if err != nil {
		return err
	}
	err = index.NewEncoder(f).Encode(idx)
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Rename(tmp, filepath.Join(s.dir, ".git", "index"))
	}
	if err != nil {
		_ = os.Remove(tmp)
	}
	return err
}
