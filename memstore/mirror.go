package memstore

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"sort"
	"sync/atomic"

	"github.com/go-git/go-git/v5/plumbing"
	"github.com/go-git/go-git/v5/plumbing/object"
)

// embedBatch is the number of chunk texts sent to the embedder at once.
const embedBatch = 256

// Progress reports how many of total files a rebuild has indexed.
type Progress func(done, total int)

// mirror keeps an Index a view of the repository's HEAD: incrementally from
// the last indexed commit, or by a full rebuild when the index is empty,
// points at an unknown commit, or was built with another embedder. The same
// logic drives every backend. Callers hold the store's lock (Store.locked).
type mirror struct {
	store *Store
	idx   Index
	emb   Embedder
	log   *slog.Logger

	// turn is set while the store's write turn holds idx's Exclusive
	// (Store.writeTurn), which syncShared then does not take again.
	turn bool

	// indexed caches the commit the index is known to mirror; nil or zero
	// means "ask the index", which is what happens after any failure. It is
	// written under Store.mu and read without it by searches.
	indexed atomic.Pointer[plumbing.Hash]
}

// at returns the commit the index is known to mirror (zero when unknown).
func (m *mirror) at() plumbing.Hash {
	if h := m.indexed.Load(); h != nil {
		return *h
	}
	return plumbing.ZeroHash
}

// setAt records the commit the index mirrors; zero forgets it.
func (m *mirror) setAt(h plumbing.Hash) { m.indexed.Store(&h) }

// sync brings the index up to HEAD, telling progress (when not nil) how
// many of the files to index are done.
func (m *mirror) sync(ctx context.Context, progress Progress) (err error) {
	if sh, ok := m.idx.(SharedIndex); ok {
		return m.syncShared(ctx, sh, progress, plumbing.ZeroHash, nil)
	}
	defer func() {
		if err != nil {
			m.setAt(plumbing.ZeroHash)
		}
	}()
	head, err := m.store.git.headCommit()
	if err != nil {
		return err
	}
	if m.at() == head.Hash {
		return nil
	}
	from := m.at()
	if from.IsZero() {
		st, err := m.idx.State(ctx)
		if err != nil {
			return fmt.Errorf("read index state: %w", err)
		}
		if st.Embedder != m.emb.ID() || st.Dim != m.emb.Dim() || st.Commit == "" {
			return m.rebuild(ctx, head, progress)
		}
		from = plumbing.NewHash(st.Commit)
	}
	if from == head.Hash {
		m.setAt(from)
		return nil
	}
	old, err := object.GetCommit(m.store.git.repo.Storer, from)
	if err != nil {
		m.log.Info("index points at an unknown commit; rebuilding", logKeyCommit, from.String())
		return m.rebuild(ctx, head, progress)
	}
	return m.diffTo(ctx, old, head, progress)
}

// update indexes the changes of the commit that followed parent: directly
// when the index mirrors parent, else by a full sync from whatever commit the
// index holds.
func (m *mirror) update(ctx context.Context, parent plumbing.Hash, changes []change) (err error) {
	if sh, ok := m.idx.(SharedIndex); ok {
		return m.syncShared(ctx, sh, nil, parent, changes)
	}
	if current, _ := m.current(ctx); m.at() != parent || !current {
		m.setAt(plumbing.ZeroHash)
		return m.sync(ctx, nil)
	}
	defer func() {
		if err != nil {
			m.setAt(plumbing.ZeroHash)
		}
	}()
	head, err := m.store.git.headCommit()
	if err != nil {
		return err
	}
	return m.applyChanges(ctx, head, changes)
}

// syncShared brings an index that other replicas of the memory share up
// to HEAD, idempotently by commit: inside Exclusive it reads the commit the
// index holds and does nothing when that is HEAD or a descendant of it
// (another replica got there first), applies the commit's changes when it
// is their parent, the diff when it is another ancestor, and rebuilds only
// when the commit is still unknown after a fetch from the remote.
func (m *mirror) syncShared(ctx context.Context, sh SharedIndex, progress Progress, parent plumbing.Hash, changes []change) (err error) {
	defer func() {
		if err != nil {
			m.setAt(plumbing.ZeroHash)
		}
	}()
	exclusive := sh.Exclusive
	if m.turn {
		exclusive = func(ctx context.Context, fn func(ctx context.Context) error) error { return fn(ctx) }
	}
	return exclusive(ctx, func(ctx context.Context) error {
		head, err := m.store.git.headCommit()
		if err != nil {
			return err
		}
		st, err := m.idx.State(ctx)
		if err != nil {
			return fmt.Errorf("read index state: %w", err)
		}
		if st.Embedder != m.emb.ID() || st.Dim != m.emb.Dim() || st.Commit == "" {
			return m.rebuild(ctx, head, progress)
		}
		from := plumbing.NewHash(st.Commit)
		if from == head.Hash {
			m.setAt(head.Hash)
			return nil
		}
		if changes != nil && from == parent {
			return m.applyChanges(ctx, head, changes)
		}
		g := &m.store.git
		rel := g.relation(from, head.Hash)
		if rel == relUnknown && m.store.remote != nil {
			// Most likely a commit another replica pushed after ours.
			if _, ferr := m.store.fetchLocked(ctx, head.Hash); ferr == nil {
				rel = g.relation(from, head.Hash)
			} else {
				m.log.Warn("fetch the commit the shared index names", logKeyCommit, from.String(), logKeyErr, ferr)
			}
		}
		switch rel {
		case relDescendant:
			m.setAt(head.Hash) // the index is ahead: it holds everything up to HEAD
			return nil
		case relAncestor:
			old, err := object.GetCommit(g.repo.Storer, from)
			if err != nil {
				return err
			}
			return m.diffTo(ctx, old, head, progress)
		}
		m.log.Info("shared index points at a commit unknown here; rebuilding", logKeyCommit, from.String())
		return m.rebuild(ctx, head, progress)
	})
}

// applyChanges indexes changes, the whole difference between the commit the
// index mirrors and head.
func (m *mirror) applyChanges(ctx context.Context, head *object.Commit, changes []change) error {
	var files []fileRef
	for _, c := range changes {
		if c.Delete {
			if err := m.idx.DeletePath(ctx, virtual(c.Path)); err != nil {
				return err
			}
			continue
		}
		files = append(files, fileRef{rel: c.Path, content: c.Content})
	}
	if err := m.index(ctx, head.Hash.String(), files, nil); err != nil {
		return err
	}
	if err := m.idx.SetState(ctx, m.state(head)); err != nil {
		return err
	}
	m.setAt(head.Hash)
	return nil
}

func (m *mirror) state(head *object.Commit) IndexState {
	return IndexState{Commit: head.Hash.String(), Embedder: m.emb.ID(), Dim: m.emb.Dim()}
}

// diffTo indexes the files that changed from old to head and records head.
func (m *mirror) diffTo(ctx context.Context, old, head *object.Commit, progress Progress) error {
	if err := m.applyDiff(ctx, old, head, progress); err != nil {
		return err
	}
	if err := m.idx.SetState(ctx, m.state(head)); err != nil {
		return err
	}
	m.setAt(head.Hash)
	return nil
}

// applyDiff indexes the files that changed between two commits.
func (m *mirror) applyDiff(ctx context.Context, old, head *object.Commit, progress Progress) error {
	a, err := old.Tree()
	if err != nil {
		return err
	}
	b, err := head.Tree()
	if err != nil {
		return err
	}
	changes, err := object.DiffTreeWithOptions(ctx, a, b, nil)
	if err != nil {
		return fmt.Errorf("diff %s..%s: %w", old.Hash, head.Hash, err)
	}
	var upserts []fileRef
	for _, c := range changes {
		if c.From.Name != "" && c.From.Name != c.To.Name {
			if err := m.idx.DeletePath(ctx, virtual(c.From.Name)); err != nil {
				return err
			}
		}
		if c.To.Name == "" {
			if err := m.idx.DeletePath(ctx, virtual(c.From.Name)); err != nil {
				return err
			}
			continue
		}
		upserts = append(upserts, fileRef{rel: c.To.Name, hash: c.To.TreeEntry.Hash})
	}
	return m.index(ctx, head.Hash.String(), upserts, progress)
}

// rebuild empties the index and indexes every file at head, with the
// index's search structures dropped during the load when it is a BulkIndex.
func (m *mirror) rebuild(ctx context.Context, head *object.Commit, progress Progress) (err error) {
	st := m.state(head)
	if err := m.idx.Reset(ctx, IndexState{Embedder: st.Embedder, Dim: st.Dim}); err != nil {
		return fmt.Errorf("reset index: %w", err)
	}
	if bulk, ok := m.idx.(BulkIndex); ok {
		if err := bulk.DropSearchIndexes(ctx); err != nil {
			return fmt.Errorf("drop search indexes: %w", err)
		}
		defer func() {
			if berr := bulk.BuildSearchIndexes(ctx); berr != nil {
				err = errors.Join(err, fmt.Errorf("build search indexes: %w", berr))
			}
		}()
	}
	tree, err := head.Tree()
	if err != nil {
		return err
	}
	files, err := subtreeFiles(tree, "")
	if err != nil {
		return err
	}
	refs := make([]fileRef, 0, len(files))
	for rel, h := range files {
		refs = append(refs, fileRef{rel: rel, hash: h})
	}
	sort.Slice(refs, func(i, j int) bool { return refs[i].rel < refs[j].rel })
	if err := m.index(ctx, st.Commit, refs, progress); err != nil {
		return err
	}
	if err := m.idx.SetState(ctx, st); err != nil {
		return err
	}
	m.setAt(head.Hash)
	return nil
}

// fileRef names a file to index by its blob hash, or carries its content.
type fileRef struct {
	rel     string
	hash    plumbing.Hash
	content []byte
}

// index chunks, embeds and stores files, a batch of chunks at a time.
func (m *mirror) index(ctx context.Context, commit string, files []fileRef, progress Progress) error {
	var batch []pending
	var texts []string
	flush := func() error {
		vecs, err := m.emb.Embed(ctx, texts)
		if err != nil {
			return fmt.Errorf("embed: %w", err)
		}
		if len(vecs) != len(texts) {
			return fmt.Errorf("embed: %d vectors for %d texts", len(vecs), len(texts))
		}
		i := 0
		for _, p := range batch {
			for j := range p.chunks {
				p.chunks[j].Embedding = vecs[i]
				i++
			}
		}
		if err := m.write(ctx, batch); err != nil {
			return err
		}
		batch, texts = batch[:0], texts[:0]
		return nil
	}
	for n, f := range files {
		var chunks []Chunk
		if indexable(f.rel) {
			content := f.content
			if content == nil {
				var err error
				if content, err = m.blob(f.hash); err != nil {
					return err
				}
			}
			chunks = chunkFile(f.rel, content, commit)
		}
		batch = append(batch, pending{path: virtual(f.rel), chunks: chunks})
		for _, c := range chunks {
			texts = append(texts, c.Context+"\n"+c.Text)
		}
		if len(texts) >= embedBatch {
			if err := flush(); err != nil {
				return err
			}
		}
		if progress != nil {
			progress(n+1, len(files))
		}
	}
	if len(batch) > 0 {
		return flush()
	}
	return nil
}

// pending is a file's chunks, embedded, waiting to be written.
type pending struct {
	path   string
	chunks []Chunk
}

// write stores a batch of files: in one ReplaceMany when the index is a
// BatchIndex, else one Replace per file.
func (m *mirror) write(ctx context.Context, batch []pending) error {
	if b, ok := m.idx.(BatchIndex); ok {
		files := make(map[string][]Chunk, len(batch))
		for _, p := range batch {
			files[p.path] = p.chunks
		}
		if err := b.ReplaceMany(ctx, files); err != nil {
			return fmt.Errorf("index %d files from %s: %w", len(batch), batch[0].path, err)
		}
		return nil
	}
	for _, p := range batch {
		if err := m.idx.Replace(ctx, p.path, p.chunks); err != nil {
			return fmt.Errorf("index %s: %w", p.path, err)
		}
	}
	return nil
}

func (m *mirror) blob(h plumbing.Hash) ([]byte, error) { return m.store.git.blob(h) }

// current reports whether the index still records what the mirror
// caches. Another process on the home may have changed it since: reset it
// to rebuild (perhaps killed half way, leaving it part empty) or, for an
// index only this repository's processes write, moved it to another
// commit. A shared index names whatever commit the last replica to write
// indexed, so for it only a reset counts; syncShared reads its commit on
// every write. level reports whether the index holds exactly the commit
// the mirror caches: a shared index another replica moved ahead is current
// but not level.
func (m *mirror) current(ctx context.Context) (current, level bool) {
	at := m.at()
	if at.IsZero() {
		return false, false
	}
	st, err := m.idx.State(ctx)
	if err != nil || st.Commit == "" || st.Embedder != m.emb.ID() || st.Dim != m.emb.Dim() {
		return false, false
	}
	level = st.Commit == at.String()
	_, shared := m.idx.(SharedIndex)
	return shared || level, level
}

// Reindex rebuilds every index from scratch from HEAD.
// Only the local owner and org admins may.
func (s *Store) Reindex(ctx context.Context, progress Progress) error {
	if err := s.mayMaintain(ctx); err != nil {
		return err
	}
	if len(s.mirrors) == 0 {
		return errNoIndex
	}
	return s.locked(ctx, func() error {
		head, err := s.git.headCommit()
		if err != nil {
			return err
		}
		var errs []error
		for _, m := range s.mirrors {
			if err := m.rebuild(ctx, head, progress); err != nil {
				m.setAt(plumbing.ZeroHash)
				errs = append(errs, err)
			}
		}
		return errors.Join(errs...)
	})
}

// Reconcile brings every index up to HEAD, picking up commits made outside
// selmem and repairing after failed index updates.
// Only the local owner and org admins may.
func (s *Store) Reconcile(ctx context.Context) error {
	if err := s.mayMaintain(ctx); err != nil {
		return err
	}
	if len(s.mirrors) == 0 {
		return errNoIndex
	}
	return s.locked(ctx, func() error {
		var errs []error
		for _, m := range s.mirrors {
			m.setAt(plumbing.ZeroHash)
			errs = append(errs, m.sync(ctx, nil))
		}
		return errors.Join(errs...)
	})
}

var errNoIndex = &Error{Kind: ErrInvalid, Msg: "Error: search is not configured for this store.",
	Hint: "Configure an index backend (index.backend: sqlite) and restart."}
