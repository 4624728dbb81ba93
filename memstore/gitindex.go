package memstore

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"time"

	"github.com/go-git/go-git/v5/plumbing"
	"github.com/go-git/go-git/v5/plumbing/filemode"
	"github.com/go-git/go-git/v5/plumbing/format/index"
)

// stageDelay is how long after the last write .git/index is brought up to
// date. Rewriting it costs milliseconds per thousand files, so it is kept off
// the write path.
const stageDelay = 2 * time.Second

// unstagedName is the marker file, inside .git, that exists while
// .git/index lags behind HEAD; Open rebuilds .git/index when it finds it.
const unstagedName = "selmem-unstaged"

// stageLater queues changes for .git/index. Callers hold s.mu.
func (s *Store) stageLater(changes []change) {
	if len(s.staged) == 0 {
		if err := os.WriteFile(s.unstagedPath(), nil, 0o644); err != nil {
			s.log.Warn("mark .git/index stale", logKeyErr, err)
		}
	}
	s.staged = append(s.staged, changes...)
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

// Flush brings git's staging index (.git/index) up to date with the writes
// made so far, so that `git status` in the memory repository shows a clean
// tree. The store itself never reads that file; Close calls Flush.
func (s *Store) Flush() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if len(s.staged) == 0 {
		return nil
	}
	changes := s.staged
	s.staged = nil
	if err := s.syncGitIndex(changes); err != nil {
		return err
	}
	return os.Remove(s.unstagedPath())
}

func (s *Store) unstagedPath() string { return filepath.Join(s.dir, ".git", unstagedName) }

// restage rebuilds .git/index from HEAD when a previous process died with
// staged changes pending.
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
	idx := &index.Index{Version: 2}
	for rel, h := range files {
		e := &index.Entry{Name: rel, Hash: h, Mode: filemode.Regular}
		if info, err := os.Stat(s.abs(rel)); err == nil {
			e.ModifiedAt, e.CreatedAt, e.Size = info.ModTime(), info.ModTime(), uint32(info.Size())
		}
		idx.Entries = append(idx.Entries, e)
	}
	sort.Slice(idx.Entries, func(i, j int) bool { return idx.Entries[i].Name < idx.Entries[j].Name })
	if err := s.git.repo.Storer.SetIndex(idx); err != nil {
		return err
	}
	return os.Remove(s.unstagedPath())
}

// syncGitIndex updates .git/index for the changed paths.
func (s *Store) syncGitIndex(changes []change) error {
	idx, err := s.git.repo.Storer.Index()
	if err != nil {
		idx = &index.Index{Version: 2}
	}
	for _, c := range changes {
		kept := idx.Entries[:0]
		for _, e := range idx.Entries {
			if e.Name != c.Path && !strings.HasPrefix(e.Name, c.Path+"/") {
				kept = append(kept, e)
			}
		}
		idx.Entries = kept
		if c.Delete {
			continue
		}
		e := &index.Entry{
			Name: c.Path,
			Hash: plumbing.ComputeHash(plumbing.BlobObject, c.Content),
			Mode: filemode.Regular,
			Size: uint32(len(c.Content)),
		}
		if info, err := os.Stat(s.abs(c.Path)); err == nil {
			e.ModifiedAt, e.CreatedAt = info.ModTime(), info.ModTime()
		}
		idx.Entries = append(idx.Entries, e)
	}
	sort.Slice(idx.Entries, func(i, j int) bool { return idx.Entries[i].Name < idx.Entries[j].Name })
	idx.Cache = nil // the cached tree extension no longer matches
	return s.git.repo.Storer.SetIndex(idx)
}
