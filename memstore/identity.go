package memstore

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/go-git/go-git/v5/plumbing/object"
	"github.com/google/uuid"

	"github.com/selmem/selmem/internal/fsutil"
)

// trailerMemoryID is the trailer of a repository's first commit naming
// the memory: a random UUID, made once when the repository is created, and
// shared by every clone of it.
const trailerMemoryID = "Memory-Id"

// initMeta is the metadata of a new repository's first commit: it carries
// a fresh Memory-Id trailer.
func (s *Store) initMeta() commitMeta {
	m := s.meta(initSubject, nil, nil)
	m.Trailers = append(m.Trailers, trailer{trailerMemoryID, uuid.NewString()})
	return m
}

// ID returns the memory's identity: the Memory-Id trailer of the first
// commit of its branch, or, for a repository created before selmem
// recorded one, that commit's hash. Replicas cloned from one repository
// share it; two memories created apart never do. Indexes shared by several
// memories (pgindex) keep each memory's rows apart by it.
func (s *Store) ID() string { return s.id }

// idCacheName is the file in .git keeping the memory's identity, so that
// opening a memory with a long history does not walk it every time (100,000
// commits take seconds). git clone does not copy it: a clone finds the
// identity in its history once.
const idCacheName = "selmem-memory-id"

// memoryID returns the identity of the repository g: the Memory-Id
// trailer of the root commit reached from the branch by first parents, or
// the root commit's hash when it has no such trailer. It is read from
// .git/selmem-memory-id when present; remember writes the file otherwise,
// and a failure to write it (a *localWriteError) comes with the identity.
func memoryID(g *gitRepo, remember bool) (string, error) {
	p := filepath.Join(g.gitDir, idCacheName)
	if b, err := os.ReadFile(p); err == nil {
		if id := strings.TrimSpace(string(b)); id != "" {
			return id, nil
		}
	}
	id, err := rootID(g)
	if err != nil || !remember {
		return id, err
	}
	if err := fsutil.WriteAtomic(p, []byte(id+"\n"), g.sync); err != nil {
		return id, &localWriteError{fmt.Errorf("cache the memory's identity: %w", err)}
	}
	return id, nil
}

// rootID finds the identity in the history of g's branch.
func rootID(g *gitRepo) (string, error) {
	h, err := g.readRef()
	if err != nil {
		return "", err
	}
	c, err := object.GetCommit(g.repo.Storer, h)
	for err == nil && len(c.ParentHashes) > 0 {
		c, err = object.GetCommit(g.repo.Storer, c.ParentHashes[0])
	}
	if err != nil {
		return "", fmt.Errorf("memstore: find the memory's first commit: %w", err)
	}
	if id := trailerValue(c.Message, trailerMemoryID); id != "" {
		return id, nil
	}
	return c.Hash.String(), nil
}

// bindMemory computes the store's identity and hands it to the indexes
// that keep memories apart (MemoryBinder), before any of them is used.
func (s *Store) bindMemory() error {
	id, err := memoryID(&s.git, true)
	if isLocalWrite(err) {
		// Only the cache is missing: the next Open looks the identity up again.
		s.log.Warn("the memory's identity could not be cached", logKeyErr, err)
	} else if err != nil {
		return err
	}
	s.id = id
	for _, idx := range []Index{s.opts.Index, s.opts.Fallback} {
		if b, ok := idx.(MemoryBinder); ok {
			if err := b.BindMemory(id); err != nil {
				return fmt.Errorf("memstore: bind the index to memory %s: %w", id, err)
			}
		}
	}
	return nil
}
