package memstore

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"log/slog"
	"os"
	"path"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/go-git/go-billy/v5/osfs"
	"github.com/go-git/go-git/v5"
	"github.com/go-git/go-git/v5/plumbing"
	"github.com/go-git/go-git/v5/plumbing/cache"
	"github.com/go-git/go-git/v5/plumbing/object"
	"github.com/go-git/go-git/v5/storage/filesystem"

	"github.com/selmem/selmem/internal/fsutil"
	"github.com/selmem/selmem/memstore/access"
	"github.com/selmem/selmem/memstore/gate"
)

// Root is the virtual directory every memory path lives under.
const Root = "/memories"

// Provenance sources a write may declare (front matter `source`, commit
// trailer `Source:`).
const (
	SourceUserConfirmed      = "user_confirmed"
	SourceRepeatedUserSignal = "repeated_user_signal"
	SourceTrustedToolResult  = "trusted_tool_result"
	SourceInferred           = "inferred"
)

// Log keys.
const (
	logKeyPath   = "path"
	logKeyCommit = "commit"
	logKeyErr    = "err"
	logKeyIndex  = "index" // 0 for the primary index, 1 for the fallback
)

// journalName is the file, inside .git, that names a commit being made and
// the paths whose working files may not match HEAD yet. The next writer, in
// any process, repairs them; Open also recovers a damaged branch from it.
const journalName = "selmem-pending"

// Options configure a Store. The zero value is usable: no index, default
// limits, author "selmem".
type Options struct {
	Limits   gate.Limits // zero value: gate.DefaultLimits()
	Index    Index       // nil disables search
	Fallback Index       // optional local mirror searched when Index fails (e.g. SQLite beside Postgres)
	Embedder Embedder    // required when Index is set
	Logger   *slog.Logger
	Author   string           // default commit author; WriteOptions.Author overrides
	Now      func() time.Time // clock; nil means time.Now
	// Durability is how far a write must reach before it is acknowledged;
	// "" means DurabilityFsync.
	Durability Durability
	// Progress, if set, is told how many files the index catch-up that
	// Open runs has indexed (a rebuild, or the files changed since the
	// indexed commit). Nil reports nothing.
	Progress Progress
	// MinSimilarity is the search's relevance floor for vector-only hits
	// (Query.MinSimilarity); 0 means the embedder's own floor when it has
	// one (SimilarityFloorer), else none.
	MinSimilarity float64
	// Thesaurus, if set, tells the index which query words are spelled
	// right, and the words of like meaning that stand in for a query word
	// the memory lacks (see Thesaurus). Nil does neither.
	Thesaurus Thesaurus
	// Associations, if set, gives the words used in like contexts that
	// also stand in for a query word the memory lacks, but only beside a
	// word the memory knows (see Associations). Nil adds none.
	Associations Associations
	// ProposalThreshold is the confidence below which a write by someone
	// who is not an owner of the workspace becomes a proposal; 0 means
	// DefaultProposalThreshold, a negative value turns the rule off.
	ProposalThreshold float64
	// ScratchIndex opens an empty index in the directory dir, which the
	// store removes after use: a search by the owner of an open draft ranks
	// the draft's changed files in one. Nil leaves those files out of the
	// owner's search results.
	ScratchIndex func(dir string) (Index, error)
	// Policy is the organisation's part of access control: who the org
	// admins are. Workspaces' ACLs come from their workspace.yaml on the
	// published branch; the principal from the context of each call
	// (access.WithPrincipal), none meaning the local owner.
	Policy access.Policy
	// Observer, when set, receives measurements of searches.
	Observer Observer
	// Remote, when set, makes a bare git repository shared by several
	// replicas of this memory the authority: Open clones or catches up
	// with it, and a write is acknowledged only once pushed there.
	Remote *Remote

	// failWorking, set by tests, is asked before each working file is
	// written: an error fails the write as a full disk would.
	failWorking func(path string) error
	// failFlush, set by tests, is asked before the directory of a ref
	// just moved is flushed (gitRepo.failFlush).
	failFlush func(dir string) error
	// failObject, set by tests, is asked before each new object is
	// written (gitRepo.failObject).
	failObject func() error
}

// DefaultProposalThreshold is Options.ProposalThreshold's default.
const DefaultProposalThreshold = 0.5

// WriteOptions carry a write's provenance and its optimistic-concurrency
// precondition. A nil *WriteOptions is valid.
type WriteOptions struct {
	Tool        string   // the tool or command making the write, recorded as trailer Tool:
	Source      string   // one of the Source constants; trailer Source:
	Confidence  *float64 // in [0,1]; trailer Confidence:
	Author      string   // principal; trailer Author: and commit author
	ExpectedSHA string   // when set, the target file's current blob hash must equal it

	trailers []trailer // further trailers, e.g. Approved-by: on an approved proposal
}

// WriteResult describes an accepted write.
type WriteResult struct {
	Message string // the memory tool's result text
	Commit  string // the commit that recorded the write
	SHA     string // blob hash of the written file; "" for deletes and directory renames
	// Pending is "draft" or "proposal" when the write went to the
	// principal's draft or became a proposal instead of changing the
	// published memory; "" when it was published.
	Pending string
}

// Store is the git-backed memory. Reads are concurrent; writes are
// serialised, within the process and across every process that opens the
// same home, and each accepted write is exactly one commit.
type Store struct {
	dir  string // the memory repository's working directory
	git  gitRepo
	opts Options
	log  *slog.Logger
	now  func() time.Time

	mu        sync.Mutex       // serialises writes, workspace totals, staging and the mirrors
	lock      *repoLock        // serialises writers across processes; taken under mu
	mirrors   []*mirror        // the primary index first, then the fallback
	unstaged  bool             // .git/index may lag behind HEAD because of this process's writes
	closed    bool             // Close has run: later writes and a late timer's Flush do nothing
	flusher   *time.Timer      // brings .git/index up to date after a quiet period
	closeRepo func() error     // releases the repository's open pack files
	wsBytes   map[string]int64 // workspace name -> bytes of its files, filled lazily
	wsHead    plumbing.Hash    // the commit wsBytes was computed against
	routed    *routedWrite     // where the current locked write went, when not to main
	acls      aclCache         // workspaces' ACLs, per tree
	id        string           // the memory's identity (ID), set by Open
	remote    *replica         // the shared remote; nil without one
	unsettled unsettledWrite   // the last write's working files, not yet flushed
	// workingStale is set while the working files may differ from HEAD
	// because a write's update of them, or their repair, failed (a full
	// disk): reads then try the repair and read from HEAD what it could
	// not mend (workingCurrent).
	workingStale atomic.Bool
}

// Open opens the memory under home, creating home/memory as a git repository
// on first use. An existing repository is never initialised again: a
// missing or damaged branch is recovered from the write journal, the reflog
// or the newest whole commit, and Open fails, changing nothing, when no
// commit can be trusted. Open repairs working files left behind by an
// interrupted write and, when an index is configured, reconciles the index
// with HEAD. When that repair cannot write the files (a full disk), Open
// still succeeds: reads come from HEAD, and the next read or write retries
// the repair (a write fails, writing nothing, until it succeeds).
func Open(ctx context.Context, home string, opts *Options) (*Store, error) {
	s := &Store{dir: filepath.Join(home, "memory"), wsBytes: map[string]int64{}}
	if opts != nil {
		s.opts = *opts
	}
	if s.opts.Limits == (gate.Limits{}) {
		s.opts.Limits = gate.DefaultLimits()
	}
	if err := s.opts.Limits.Validate(); err != nil {
		return nil, err
	}
	if s.opts.Author == "" {
		s.opts.Author = "selmem"
	}
	if s.opts.ProposalThreshold == 0 {
		s.opts.ProposalThreshold = DefaultProposalThreshold
	}
	s.log = s.opts.Logger
	if s.log == nil {
		s.log = slog.New(slog.DiscardHandler)
	}
	s.now = s.opts.Now
	if s.now == nil {
		s.now = time.Now
	}
	if (s.opts.Index == nil) != (s.opts.Embedder == nil) {
		return nil, errors.New("memstore: Index and Embedder must be set together")
	}
	if s.opts.Fallback != nil && s.opts.Index == nil {
		return nil, errors.New("memstore: Fallback needs Index")
	}
	if err := s.opts.Durability.Validate(); err != nil {
		return nil, fmt.Errorf("memstore: %w", err)
	}
	sync := s.opts.Durability != DurabilityOS
	if s.opts.Remote != nil {
		r, err := newReplica(*s.opts.Remote, s.log, s.now)
		if err != nil {
			return nil, err
		}
		s.remote = r
		if err := r.cloneRemote(ctx, s.dir, sync, s.initMeta()); err != nil {
			return nil, err
		}
	}
	if err := initRepo(s.dir, s.initMeta(), sync); err != nil {
		return nil, err
	}
	gitDir := filepath.Join(s.dir, ".git")
	if err := repairHEAD(gitDir, sync, s.log); err != nil {
		return nil, err
	}
	repo, closeRepo, err := openRepo(s.dir)
	if err != nil {
		return nil, err
	}
	s.git = gitRepo{repo: repo, gitDir: gitDir, sync: sync, failFlush: s.opts.failFlush, failObject: s.opts.failObject}
	s.closeRepo = closeRepo
	if s.lock, err = openLock(filepath.Join(s.dir, ".git", lockName)); err != nil {
		_ = closeRepo()
		return nil, err
	}
	for _, idx := range []Index{s.opts.Index, s.opts.Fallback} {
		if idx != nil {
			s.mirrors = append(s.mirrors, &mirror{store: s, idx: idx, emb: s.opts.Embedder, log: s.log})
		}
	}
	err = s.withLock(ctx, func() error {
		return s.retryMoved(ctx, func() error { return s.openLocked(ctx) })
	})
	if err != nil {
		_ = s.lock.close()
		_ = closeRepo()
		return nil, err
	}
	return s, nil
}

// openLocked is Open's work under the store's lock. The branch comes
// first: a damaged one is recovered (from the write journal among others)
// or fails Open before anything reads HEAD. The steps after it only bring
// files HEAD determines up to date (working files, .git/index, caches,
// the indexes): one that fails to write them (localWriteError) leaves the
// store open, reading HEAD, for a later call to finish the work.
func (s *Store) openLocked(ctx context.Context) error {
	if err := s.checkBranch(); err != nil {
		return err
	}
	if err := s.repairWorking(); err != nil {
		if !isLocalWrite(err) {
			return fmt.Errorf("repair after an interrupted write: %w", err)
		}
		s.workingStale.Store(true)
		s.log.Warn("the working files could not be repaired after an interrupted write: reads come from HEAD until the repair succeeds, writes fail until then, and each read or write retries it",
			logKeyErr, err)
	} else {
		s.workingStale.Store(false)
	}
	s.git.dropTempObjects() // of a writer killed half way
	if err := s.restage(); err != nil {
		if !isLocalWrite(err) {
			return err
		}
		s.unstaged = true // Flush, and Close, try again
		s.log.Warn("update .git/index", logKeyErr, err)
	}
	if s.remote != nil {
		if err := s.catchUpRemote(ctx); err != nil {
			return err
		}
	}
	if err := s.bindMemory(); err != nil {
		return err
	}
	for i, m := range s.mirrors {
		if err := m.sync(ctx, s.opts.Progress); err != nil {
			// The index is derived; the memory stays usable and the
			// next write, search or Reindex retries.
			s.log.Warn("index reconcile failed", logKeyIndex, i, logKeyErr, err)
		}
	}
	return nil
}

// catchUpRemote is Open's catch-up with the remote. While the working
// files await their repair it waits too: catching up rewrites the write
// journal, which must keep naming the files to repair. The next write or
// Sync, which repairs them first, catches up.
func (s *Store) catchUpRemote(ctx context.Context) error {
	if s.workingStale.Load() {
		s.log.Warn("catching up with the memory's remote waits for the working files' repair; serving the local copy")
		return nil
	}
	// The indexes catch up in Open, once they know the memory they
	// serve.
	mirrors := s.mirrors
	s.mirrors = nil
	defer func() { s.mirrors = mirrors }()
	return s.openRemote(ctx)
}

// initSubject is the subject of a new repository's first commit.
const initSubject = "Initialise selmem memory"

// initRepo creates the repository at dir with its first commit when dir
// holds none. The repository is built beside dir and renamed into place, so
// no process ever sees a repository without a branch, and two processes
// creating it at once end up sharing one.
func initRepo(dir string, meta commitMeta, sync bool) error {
	return buildRepo(dir, sync, "init", func(g *gitRepo, _ string) (plumbing.Hash, commitMeta, error) {
		h, err := g.commit(nil, nil, meta)
		return h, meta, err
	})
}

// errNoRepo is what a buildRepo fill function returns to create nothing.
var errNoRepo = errors.New("no repository to create")

// buildRepo creates the repository at dir when dir holds none: fill writes
// the objects (and working files) of its first commit into the new
// repository at tmp, and the branch is made to name it. It is built beside
// dir and renamed into place once whole. fill returning errNoRepo creates
// nothing.
func buildRepo(dir string, sync bool, what string, fill func(g *gitRepo, tmp string) (plumbing.Hash, commitMeta, error)) error {
	if _, err := os.Stat(filepath.Join(dir, ".git")); !errors.Is(err, fs.ErrNotExist) {
		return err // exists (nil) or cannot be checked
	}
	if entries, err := os.ReadDir(dir); err == nil && len(entries) > 0 {
		return fmt.Errorf("memstore: %s holds files but no git repository; move them away or point SELMEM_HOME elsewhere", dir)
	}
	parent := filepath.Dir(dir)
	if err := os.MkdirAll(parent, 0o755); err != nil {
		return fmt.Errorf("create memory directory: %w", err)
	}
	tmp, err := os.MkdirTemp(parent, ".memory-"+what+"-*")
	if err != nil {
		return fmt.Errorf("create memory directory: %w", err)
	}
	defer os.RemoveAll(tmp) // gone after a successful rename
	if _, err := git.PlainInitWithOptions(tmp, &git.PlainInitOptions{
		InitOptions: git.InitOptions{DefaultBranch: branch},
	}); err != nil {
		return fmt.Errorf("%s memory repository: %w", what, err)
	}
	repo, closeRepo, err := openRepo(tmp)
	if err != nil {
		return err
	}
	g := gitRepo{repo: repo, gitDir: filepath.Join(tmp, ".git"), sync: sync}
	h, meta, err := fill(&g, tmp)
	if errors.Is(err, errNoRepo) {
		return closeRepo()
	}
	if err == nil && sync {
		err = syncAll(g.objectPaths())
	}
	if err == nil {
		err = g.advance(plumbing.ZeroHash, h, meta)
	}
	if cerr := closeRepo(); err == nil {
		err = cerr
	}
	if err == nil && sync {
		for _, f := range []string{"HEAD", "config"} {
			if err = syncFile(filepath.Join(tmp, ".git", f)); err != nil {
				break
			}
		}
	}
	var e *Error
	if errors.As(err, &e) {
		return err
	}
	if err != nil {
		return fmt.Errorf("%s memory repository: %w", what, err)
	}
	if err := os.Rename(tmp, dir); err != nil {
		if _, serr := os.Stat(filepath.Join(dir, ".git")); serr == nil {
			return nil // another process created it first
		}
		return fmt.Errorf("%s memory repository: %w", what, err)
	}
	if sync {
		return syncDir(parent)
	}
	return nil
}

// objectCacheSize bounds the decoded git objects kept in memory: enough for
// the trees of a large memory, well below go-git's default of 96 MiB, which
// a long-running server fills and keeps.
const objectCacheSize = 16 * cache.MiByte

// openRepo opens the repository at dir. Its storage keeps pack files open
// between reads (history walks read thousands of objects); the returned
// close function releases them.
func openRepo(dir string) (*git.Repository, func() error, error) {
	st := filesystem.NewStorageWithOptions(osfs.New(filepath.Join(dir, ".git")), cache.NewObjectLRU(objectCacheSize),
		filesystem.Options{KeepDescriptors: true})
	repo, err := git.Open(st, osfs.New(dir))
	if err != nil {
		return nil, nil, fmt.Errorf("open memory repository: %w", err)
	}
	return repo, st.Close, nil
}

// checkBranch makes sure the branch names a readable commit, recovering a
// missing or damaged ref. It runs under the repository lock.
func (s *Store) checkBranch() error {
	h, err := s.git.readRef()
	if err == nil {
		if _, err = object.GetCommit(s.git.repo.Storer, h); err == nil {
			return nil
		}
		err = &refDamagedError{why: fmt.Sprintf("it names %s, which cannot be read (%v)", h.String()[:12], err)}
	}
	var damaged *refDamagedError
	if !errors.Is(err, errRefMissing) && !errors.As(err, &damaged) {
		return fmt.Errorf("read %s: %w", branch, err)
	}
	damage := err
	jc, _ := s.readJournal()
	found, from, err := s.git.recoverRef(jc.commit)
	if err != nil {
		return fmt.Errorf("memstore: the memory repository at %s cannot be opened: %v, and %v. Nothing was changed; restore it from a backup or move it aside", s.dir, damage, err)
	}
	meta := s.meta("recover "+branch.Short(), nil, nil)
	if found.IsZero() {
		// No commit at all: a repository whose creation was interrupted.
		if found, err = s.git.commit(nil, nil, s.initMeta()); err != nil {
			return err
		}
		if s.git.sync {
			if err := syncAll(s.git.objectPaths()); err != nil {
				return err
			}
		}
		s.git.keepObjects()
		from = "nothing (the repository held no commit)"
	}
	if err := s.git.writeRef(branch, plumbing.ZeroHash, found, meta); err != nil {
		return err
	}
	s.log.Warn("recovered the memory's branch", logKeyCommit, found.String(), "from", from, logKeyErr, damage)
	return nil
}

// repairHEAD makes .git/HEAD name the branch again if it was emptied or
// damaged; git (and go-git) cannot open a repository without it.
func repairHEAD(gitDir string, sync bool, log *slog.Logger) error {
	p := filepath.Join(gitDir, "HEAD")
	want := "ref: " + branch.String() + "\n"
	if data, err := os.ReadFile(p); err == nil && string(data) == want {
		return nil
	}
	log.Warn("rewrote .git/HEAD to name " + branch.String())
	return fsutil.WriteAtomic(p, []byte(want), sync)
}

// Dir returns the directory holding the memory repository's working files.
func (s *Store) Dir() string { return s.dir }

// Limits returns the limits the store's write gate enforces.
func (s *Store) Limits() gate.Limits { return s.opts.Limits }

// Close writes what is pending and releases the store. The index is owned
// by the caller and not closed.
func (s *Store) Close(ctx context.Context) error {
	s.mu.Lock()
	if s.flusher != nil {
		s.flusher.Stop()
	}
	s.mu.Unlock()
	err := s.Flush()
	s.mu.Lock()
	s.closed = true
	s.mu.Unlock()
	return errors.Join(err, s.closeRepo(), s.lock.close())
}

// maxHeadMoves is how often a write is prepared again because the branch
// moved under it before it gives up.
const maxHeadMoves = 5

// maxRemoteMoves is maxHeadMoves with a remote, where replicas racing for
// the remote's branch make a write lose more often.
const maxRemoteMoves = 100

// locked runs fn holding the store's write lock, within the process (mu)
// and across processes (the repository lock), after repairing what a
// writer that died left behind. A write that finds the branch moved
// (errHeadMoved: a commit made outside selmem's lock) is prepared again on
// the new HEAD.
func (s *Store) locked(ctx context.Context, fn func() error) error {
	return s.lockedAs(ctx, false, fn)
}

// lockedAs is locked; a write (write true) also waits for the replicas'
// write turn (writeTurn) and keeps it while it is prepared again.
func (s *Store) lockedAs(ctx context.Context, write bool, fn func() error) error {
	return s.withLock(ctx, func() error {
		if err := s.repairWorking(); err != nil {
			s.workingStale.Store(true)
			return repairFailed(err)
		}
		s.workingStale.Store(false)
		if write {
			return s.writeTurn(ctx, func() error { return s.retryMoved(ctx, fn) })
		}
		return s.retryMoved(ctx, fn)
	})
}

// withLock runs fn holding the store's write lock, within the process (mu)
// and across processes (the repository lock), once the last write's
// working files are settled.
func (s *Store) withLock(ctx context.Context, fn func() error) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed {
		return errClosed
	}
	// A caller that gave up while it waited (its client's time-out, a
	// cancelled request) has its write not made.
	if err := ctx.Err(); err != nil {
		return err
	}
	if err := s.lock.acquire(ctx); err != nil {
		return err
	}
	defer s.lock.release()
	s.settle()
	return fn()
}

// repairFailed is the error of a call refused because the working files
// could not be repaired first.
func repairFailed(err error) error {
	if !isLocalWrite(err) {
		return fmt.Errorf("repair after an interrupted write: %w", err)
	}
	return &Error{Kind: ErrUnavailable,
		Msg:  "Error: the memory's working files could not be brought in line with its last write (" + withoutPath(err).Error() + "), so nothing was written.",
		Hint: "Free space on the disk holding the memory (or fix what the error names), then retry; reads and searches still work.", Err: err}
}

// retryMoved runs fn, the work of a caller holding the store's lock, again
// while it finds the branch moved under it (errHeadMoved).
func (s *Store) retryMoved(ctx context.Context, fn func() error) error {
	tries := maxHeadMoves
	if s.remote != nil {
		tries = maxRemoteMoves
	}
	for attempt := range tries {
		if err := fn(); !errors.Is(err, errHeadMoved) {
			return err
		}
		if s.remote != nil && !sleep(ctx, retryPause(attempt)) {
			return ctx.Err()
		}
	}
	return &Error{Kind: ErrConflict, Msg: "Error: the memory kept changing while this write was prepared.",
		Hint: "Retry; nothing was written.", Err: errHeadMoved}
}

// errClosed answers a call on a closed Store.
var errClosed = &Error{Kind: ErrInvalid, Msg: "Error: the memory store is closed."}

// lockedWrite is locked for a write that returns a WriteResult.
func (s *Store) lockedWrite(ctx context.Context, fn func() (WriteResult, error)) (WriteResult, error) {
	var res WriteResult
	err := s.lockedAs(ctx, true, func() error {
		s.routed = nil
		var err error
		res, err = fn()
		if err == nil && s.routed != nil {
			res = s.routed.result(res)
		}
		s.routed = nil
		return err
	})
	return res, err
}

// checkCase refuses changes that would put a new name next to a sibling
// that differs from it only in letter case or look-alike characters (see
// nameKeys): names differing in case collide in clones on case-insensitive
// file systems (macOS, Windows), and a look-alike (ｓａｌｅｓ, or sales
// spelt with Cyrillic letters) reads as the sibling in every listing. A
// rename that changes only the case is fine. A name the tree already holds
// is not new, so a pair that predates the check can still be written to.
// The refusal names the existing path only to a principal who may read it.
func (s *Store) checkCase(ctx context.Context, tree *object.Tree, changes []change) error {
	collision := func(p, other string) error {
		if who, restricted := principalOf(ctx); restricted && !s.opts.Policy.Visible(who, virtual(other), s.aclAt(tree.Hash)) {
			other = ""
		}
		return caseCollision(p, other)
	}
	deleted := map[string]bool{}
	for _, c := range changes {
		if c.Delete {
			deleted[c.Path] = true
		}
	}
	gone := func(rel string) bool {
		for d := range deleted {
			if rel == d || strings.HasPrefix(rel, d+"/") {
				return true
			}
		}
		return false
	}
	// done holds the paths checked for an earlier file of this commit;
	// seen maps each key (see nameKeys) of the new ones to the path, to find
	// two of them that collide.
	done := map[string]bool{}
	seen := [2]map[string]string{{}, {}}
	for _, c := range changes {
		if c.Delete {
			continue
		}
		parts := strings.Split(c.Path, "/")
		for i := range parts {
			prefix := strings.Join(parts[:i+1], "/")
			if done[prefix] {
				continue
			}
			done[prefix] = true
			dir := strings.Join(parts[:i], "/")
			entries := dirEntries(tree, dir)
			if slices.Contains(entries, parts[i]) {
				continue // not new
			}
			for k, key := range keysOf(prefix) {
				if other, ok := seen[k][key]; ok {
					return collision(prefix, other)
				}
				seen[k][key] = prefix
			}
			elem := keysOf(parts[i])
			for _, e := range entries {
				if other := path.Join(dir, e); elem.collides(keysOf(e)) && !gone(other) {
					return collision(prefix, other)
				}
			}
		}
	}
	return nil
}

// nameKeys holds the two keys under which a path element, or a path,
// collides with another: its letter-case fold ([gate.FoldCase]) and its
// look-alike skeleton ([gate.Skeleton]). Neither key implies the other
// (Cyrillic НОТА and нота differ only in case, yet their skeletons differ),
// so two names collide when either key is equal. Both keys map a path element by
// element: a slash stays a slash, and no element gate.Path accepts folds
// into one.
type nameKeys [2]string

func keysOf(name string) nameKeys { return nameKeys{gate.FoldCase(name), gate.Skeleton(name)} }

func (k nameKeys) collides(o nameKeys) bool { return k[0] == o[0] || k[1] == o[1] }

// dirEntries lists the names in the directory dir of tree (none when dir is
// absent or a file: nothing to collide with).
func dirEntries(tree *object.Tree, dir string) []string {
	t := tree
	if dir != "" {
		var err error
		if t, err = tree.Tree(dir); err != nil {
			return nil
		}
	}
	names := make([]string, len(t.Entries))
	for i, e := range t.Entries {
		names[i] = e.Name
	}
	return names
}

// caseCollision is the refusal of a path p differing from the existing
// path other only in letter case or look-alike characters; other is left
// unnamed when "".
func caseCollision(p, other string) error {
	existing := "an existing name"
	if other != "" {
		existing = "the existing " + virtual(other)
	}
	return &Error{Kind: ErrRejected,
		Msg: fmt.Sprintf("Error: %s collides with %s because the two differ only in letter case or look-alike characters (fullwidth letters, Cyrillic or Greek letters that look like Latin ones): they read as one name, and names differing in case collide on case-insensitive file systems.",
			virtual(p), existing),
		Hint: "Use the existing name, or a name that differs by more than letter case and look-alike characters. Nothing was written."}
}

// Head returns the hash of the current commit.
func (s *Store) Head() (string, error) {
	c, err := s.git.headCommit()
	if err != nil || c == nil {
		return "", err
	}
	return c.Hash.String(), nil
}

// Read returns the content of the file at the virtual path p and its blob
// hash (the value WriteOptions.ExpectedSHA compares against).
func (s *Store) Read(ctx context.Context, p string) (content []byte, sha string, err error) {
	rel, _, _, err := s.readPath(ctx, p)
	if err != nil {
		return nil, "", err
	}
	o, err := s.overlayFor(ctx, rel)
	if err != nil {
		return nil, "", err
	}
	if o != nil {
		content, exists, ok, err := o.file(rel)
		if err != nil {
			return nil, "", err
		}
		if ok && !exists {
			return nil, "", notExist(p, "")
		}
		if ok {
			return content, blobSHA(content), nil
		}
	}
	if !s.workingCurrent() {
		return s.headFile(p, rel)
	}
	content, err = os.ReadFile(s.abs(rel))
	if err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return nil, "", notExist(p, "")
		}
		return nil, "", err
	}
	return content, blobSHA(content), nil
}

// cleanPath canonicalises a virtual path through the gate.
func (s *Store) cleanPath(p string) (string, error) {
	rel, err := gatePath(p, s.opts.Limits)
	if err != nil {
		return "", err
	}
	return rel, s.checkLinks(rel)
}

// gatePath canonicalises a virtual path by its text alone, without looking
// at the files (so an access check can come before anything that would tell
// whether the path exists).
func gatePath(p string, lim gate.Limits) (string, error) {
	rel, err := gate.Path(p, lim)
	if err != nil {
		return "", rejected(err)
	}
	return rel, nil
}

// readPath canonicalises the virtual path of a read and checks that the
// principal in ctx may read it, before looking at the files. It returns the
// principal and, for a restricted one, the ACL source that decides what a
// listing shows.
func (s *Store) readPath(ctx context.Context, p string) (string, access.Principal, access.ACLSource, error) {
	rel, err := gatePath(p, s.opts.Limits)
	if err != nil {
		return "", access.Principal{}, nil, err
	}
	pr, src, err := s.authorizeRead(ctx, rel)
	if err != nil {
		return "", pr, nil, err
	}
	return rel, pr, src, s.checkLinks(rel)
}

// checkLinks refuses a path that passes through a symbolic link or below a
// file.
func (s *Store) checkLinks(rel string) error {
	if err := gate.NoSymlinks(s.dir, rel); err != nil {
		var r *gate.Rejection
		if errors.As(err, &r) {
			return rejected(err)
		}
		if errors.Is(err, syscall.ENOTDIR) {
			return s.belowFile(rel)
		}
		// A failed Lstat names host paths: neither show nor log them.
		s.log.Error("check path for symlinks", logKeyPath, rel, logKeyErr, withoutPath(err))
		return &Error{Kind: ErrInvalid, Msg: "Error: The path " + virtual(rel) + " cannot be checked right now.",
			Hint: "Retry; if it persists, the server's log says why.", Err: withoutPath(err)}
	}
	return nil
}

// belowFile is the error for a path that continues below an existing file.
func (s *Store) belowFile(rel string) error {
	parts := strings.Split(rel, "/")
	file := rel
	for i := 1; i < len(parts); i++ {
		prefix := strings.Join(parts[:i], "/")
		if info, err := os.Lstat(s.abs(prefix)); err == nil && !info.IsDir() {
			file = prefix
			break
		}
	}
	return &Error{Kind: ErrInvalid,
		Msg:  fmt.Sprintf("Error: The path %s is below %s, which is a file, not a directory.", virtual(rel), virtual(file)),
		Hint: "A file cannot hold other files; choose a path in a directory."}
}

// withoutPath strips the host paths from a file system error.
func withoutPath(err error) error {
	var pe *fs.PathError
	if errors.As(err, &pe) {
		return fmt.Errorf("%s: %w", pe.Op, pe.Err)
	}
	var le *os.LinkError
	if errors.As(err, &le) {
		return fmt.Errorf("%s: %w", le.Op, le.Err)
	}
	return err
}

func (s *Store) abs(rel string) string { return filepath.Join(s.dir, filepath.FromSlash(rel)) }

// virtual turns a repository-relative path back into a /memories path.
func virtual(rel string) string {
	if rel == "" {
		return Root
	}
	return Root + "/" + rel
}

// rejected turns a gate refusal into the store's error.
func rejected(err error) error {
	var r *gate.Rejection
	if errors.As(err, &r) {
		return &Error{Kind: ErrRejected, Msg: "Error: " + r.Msg, Hint: r.Hint, Err: err}
	}
	return &Error{Kind: ErrRejected, Msg: "Error: the write was refused.", Err: err}
}

func notExist(p, prefix string) error {
	return &Error{Kind: ErrNotFound, Msg: prefix + "The path " + p + " does not exist. Please provide a valid path."}
}

// meta builds a commit's metadata with its provenance trailers.
func (s *Store) meta(subject string, tool *string, w *WriteOptions) commitMeta {
	m := commitMeta{Subject: subject, Name: s.opts.Author, Email: "selmem@localhost", When: s.now()}
	if w == nil {
		w = &WriteOptions{}
	}
	if tool != nil && w.Tool == "" {
		m.Trailers = append(m.Trailers, trailer{"Tool", *tool})
	} else if w.Tool != "" {
		m.Trailers = append(m.Trailers, trailer{"Tool", w.Tool})
	}
	if w.Source != "" {
		m.Trailers = append(m.Trailers, trailer{"Source", w.Source})
	}
	if w.Confidence != nil {
		m.Trailers = append(m.Trailers, trailer{"Confidence", fmt.Sprintf("%g", *w.Confidence)})
	}
	author := w.Author
	if author == "" {
		author = s.opts.Author
	}
	m.Name = author
	if tool != nil || len(m.Trailers) > 0 {
		m.Trailers = append(m.Trailers, trailer{"Author", author})
	}
	m.Trailers = append(m.Trailers, w.trailers...)
	return m
}

// validateWrite checks the provenance fields of w.
func validateWrite(w *WriteOptions) error {
	if w == nil {
		return nil
	}
	switch w.Source {
	case "", SourceUserConfirmed, SourceRepeatedUserSignal, SourceTrustedToolResult, SourceInferred:
	default:
		return &Error{Kind: ErrInvalid,
			Msg:  fmt.Sprintf("Error: source %q is not a known provenance.", w.Source),
			Hint: "Use one of user_confirmed, repeated_user_signal, trusted_tool_result, inferred."}
	}
	if c := w.Confidence; c != nil && (*c < 0 || *c > 1 || *c != *c) {
		return &Error{Kind: ErrInvalid, Msg: fmt.Sprintf("Error: confidence %g is outside [0, 1].", *c),
			Hint: "Give a number between 0 and 1."}
	}
	for _, v := range []string{w.Tool, w.Author} {
		if strings.ContainsAny(v, "\r\n") {
			return &Error{Kind: ErrInvalid, Msg: "Error: tool and author must be single-line.",
				Hint: "Remove the line breaks."}
		}
	}
	// Both become commit trailers: a secret there would be committed.
	for _, f := range []struct{ name, value string }{{"author", w.Author}, {"tool", w.Tool}} {
		if err := gate.Text(f.name, f.value); err != nil {
			return rejected(err)
		}
	}
	return nil
}

// write is the single path every accepted change takes. route decides
// where it goes: the published branch (writeMain), the principal's open
// draft or a proposal. It runs under the store's lock (Store.locked).
func (s *Store) write(ctx context.Context, head *object.Commit, changes []change, subject, tool string, w *WriteOptions) (string, error) {
	// Permissions are judged against the published branch, whose ACLs are
	// in force, whatever head the write read (a draft view).
	pub, err := s.git.headTree()
	if err != nil {
		return "", err
	}
	_, changesOK, wOK, refused := s.authorizeWrite(ctx, pub, changes, w)
	d, err := s.routeChanges(ctx, changes, w)
	if err != nil {
		return "", err
	}
	if refused != nil {
		// A viewer's write the permission check refused becomes a proposal:
		// exactly that case, nothing else.
		var de *access.DeniedError
		if d.kind != toProposal || !errors.As(refused, &de) || de.Have != access.RoleViewer {
			return "", refused
		}
		return s.writeProposal(ctx, d, head, changes, subject, tool, s.authored(ctx, w))
	}
	switch d.kind {
	case toDraft:
		return s.writeDraft(ctx, d, head, changesOK, subject, tool, wOK)
	case toProposal:
		return s.writeProposal(ctx, d, head, changesOK, subject, tool, wOK)
	}
	return s.writeMain(ctx, head, changesOK, subject, tool, wOK)
}

// checkChanges runs the write gate, the workspace cap and the letter-case
// and look-alike check on changes made on top of head. sizesAt is the
// published commit whose working files the workspace totals are counted
// from. It returns the size change of each workspace.
func (s *Store) checkChanges(ctx context.Context, head *object.Commit, sizesAt plumbing.Hash, changes []change) (map[string]int64, error) {
	lim := s.opts.Limits
	deltas := map[string]int64{}
	tree, err := head.Tree()
	if err != nil {
		return nil, err
	}
	for _, c := range changes {
		ws := workspaceOf(c.Path)
		if c.Delete {
			continue
		}
		// Paths that did not come through cleanPath (files under a renamed
		// directory, files a revert restores) are checked here too.
		if _, err := gate.Path(virtual(c.Path), lim); err != nil {
			return nil, rejected(err)
		}
		if err := gate.FilePath(c.Path); err != nil {
			return nil, rejected(err)
		}
		if err := gate.Content(c.Path, c.Content, lim); err != nil {
			return nil, rejected(err)
		}
		if ws == "" {
			continue
		}
		// The size of the file being replaced, read from the object header
		// rather than by loading the blob; absent files count as 0.
		old, err := tree.Size(c.Path)
		if err != nil && !errors.Is(err, object.ErrEntryNotFound) {
			return nil, err
		}
		deltas[ws] += int64(len(c.Content)) - old
	}
	for ws, d := range deltas {
		if d <= 0 {
			continue
		}
		total, err := s.workspaceBytes(sizesAt, ws)
		if err != nil {
			return nil, err
		}
		if total+d > lim.MaxWorkspaceBytes {
			return nil, &Error{Kind: ErrRejected,
				Msg:  fmt.Sprintf("Error: workspace %q would hold %d bytes, over its cap of %d bytes.", ws, total+d, lim.MaxWorkspaceBytes),
				Hint: "Shorten the content, or delete notes and artifacts the workspace no longer needs. Nothing was written."}
		}
	}
	if err := s.checkCase(ctx, tree, changes); err != nil {
		return nil, err
	}
	return deltas, nil
}

// writeMain commits changes on top of head, the published branch's
// commit, and brings the working files and the index along.
func (s *Store) writeMain(ctx context.Context, head *object.Commit, changes []change, subject, tool string, w *WriteOptions) (string, error) {
	deltas, err := s.checkChanges(ctx, head, head.Hash, changes)
	if err != nil {
		return "", err
	}

	meta := s.meta(subject, &tool, w)
	next, err := s.git.commit(head, changes, meta)
	if err == nil {
		err = s.writeJournal(next, changes)
	}
	// Without a remote, the branch's new value is written to its lock file
	// now, to be flushed with the objects and the journal: moving the
	// branch then waits for one flush fewer.
	var move *refMove
	if err == nil && s.remote == nil {
		if move, err = s.git.prepareMove(branch, head.Hash, next); err != nil {
			_ = os.Remove(s.journalPath())
		}
	}
	if err == nil && s.git.sync {
		// The objects, the journal and the branch's lock file reach stable
		// storage before the branch names the commit.
		paths := append(s.git.objectPaths(), s.journalPath(), s.git.gitDir)
		if move != nil {
			paths = append(paths, move.lockFile())
		}
		if err = syncAll(paths); err != nil && move != nil {
			move.abandon()
		}
	}
	if err == nil && s.remote != nil {
		// The remote is the authority: the write exists once it is there.
		if err := s.pushCommit(ctx, head, next); errors.Is(err, errLanded) {
			return next.String(), nil // the sync that found it brought everything along
		} else if err != nil {
			return "", err // taken back; errHeadMoved prepares it again
		}
		if err := s.git.advance(head.Hash, next, meta); err != nil {
			_ = os.Remove(s.journalPath())
			s.git.keepObjects()
			return "", fmt.Errorf("the write reached the remote as %s but the local branch could not move (the next sync catches up): %v", next.String()[:12], err)
		}
	} else if err == nil {
		if err = move.finish(meta, true); err != nil {
			var um *unflushedMoveError
			if errors.As(err, &um) {
				return "", s.unconfirmed(um)
			}
			_ = os.Remove(s.journalPath())
		}
	}
	if err != nil {
		// Nothing names the new objects: take them back, so a failed
		// write leaves nothing behind.
		s.git.dropObjects()
		if errors.Is(err, errHeadMoved) {
			return "", err
		}
		return "", fmt.Errorf("write commit: %w", err)
	}
	s.git.keepObjects()
	s.carryACLs(head, next, changes)
	// From here on the write is acknowledged by git; the working files and
	// the index follow, side by side (neither reads the other), and the
	// next writer or Open repairs both if the process dies first.
	working := make(chan struct{})
	go func() {
		defer close(working)
		s.updateWorking(next, changes)
	}()
	s.stageLater()
	s.noteSizes(head.Hash, next, deltas, changes)
	for i, m := range s.mirrors {
		if err := m.update(ctx, head.Hash, changes); err != nil {
			s.log.Warn("index update failed; the next write, search or open reconciles it",
				logKeyIndex, i, logKeyCommit, next.String(), logKeyErr, err)
		}
	}
	<-working
	if err := s.publish(ctx, next); err != nil {
		s.log.Warn("publish the new commit to the other replicas", logKeyCommit, next.String(), logKeyErr, err)
	}
	return next.String(), nil
}

// unconfirmed is the error of a write whose branch move the disk did not
// confirm (um). Its objects stay, since the branch may name them after a
// power cut, and so does its journal, so that the next writer or Open
// brings the working files in line with whatever HEAD then is; reads come
// from HEAD meanwhile.
func (s *Store) unconfirmed(um *unflushedMoveError) error {
	s.git.keepObjects()
	s.workingStale.Store(true)
	if um.moved {
		return fmt.Errorf("write commit: %w; the write may be kept: see memory_history before making it again", um)
	}
	return fmt.Errorf("write commit: %w; nothing was written", um)
}

func (s *Store) journalPath() string { return filepath.Join(s.dir, ".git", journalName) }

// journal is what the write journal records: the commit being made and the
// paths it changes.
type journal struct {
	commit plumbing.Hash
	paths  []string
}

// writeJournal records that commit is about to become HEAD and which
// working files it changes (the caller flushes it). The first line is
// "commit <hash>", each further line a path.
func (s *Store) writeJournal(commit plumbing.Hash, changes []change) error {
	var b strings.Builder
	b.WriteString("commit " + commit.String() + "\n")
	for _, c := range changes {
		b.WriteString(c.Path)
		b.WriteByte('\n')
	}
	if err := fsutil.WriteAtomic(s.journalPath(), []byte(b.String()), false); err != nil {
		return fmt.Errorf("write the journal: %w", err)
	}
	return nil
}

// readJournal reads a leftover journal; ok is false when there is none.
// Journals written before the commit line existed list only paths.
func (s *Store) readJournal() (j journal, ok bool) { return readJournalFile(s.journalPath()) }

// readJournalFile is readJournal of the journal at p.
func readJournalFile(p string) (j journal, ok bool) {
	data, err := os.ReadFile(p)
	if err != nil {
		return journal{}, false
	}
	for i, line := range strings.Split(string(data), "\n") {
		if h, found := strings.CutPrefix(line, "commit "); i == 0 && found && plumbing.IsHash(h) {
			j.commit = plumbing.NewHash(h)
			continue
		}
		if line != "" {
			j.paths = append(j.paths, line)
		}
	}
	return j, true
}

// repairWorking makes the working files named in a leftover journal match
// HEAD again. It reads what HEAD holds before it changes any file, so that
// only the files' writing can fail half way: that fails with a
// *localWriteError and keeps the journal, which the next repair replays.
// It runs under the repository lock.
func (s *Store) repairWorking() error {
	j, ok := s.readJournal()
	if !ok {
		return nil
	}
	tree, err := s.git.headTree()
	if err != nil {
		return err
	}
	var changes []change
	for _, rel := range j.paths {
		files, err := filesAt(tree, rel)
		if err != nil {
			return err
		}
		for p, h := range files {
			content, err := s.git.blob(h)
			if err != nil {
				return fmt.Errorf("read %s at HEAD: %w", p, err)
			}
			changes = append(changes, change{Path: p, Content: content})
		}
	}
	for _, rel := range j.paths {
		// The dying writer may have left a temporary file beside its target.
		tmps, _ := filepath.Glob(filepath.Join(filepath.Dir(s.abs(rel)), fsutil.TmpPattern))
		for _, tmp := range tmps {
			_ = os.Remove(tmp)
		}
		if err := os.RemoveAll(s.abs(rel)); err != nil {
			return &localWriteError{err}
		}
		s.pruneEmpty(path.Dir(rel))
	}
	written, err := s.applyWorking(changes)
	if err == nil && s.git.sync {
		err = syncAll(written)
	}
	if err == nil {
		err = os.Remove(s.journalPath())
	}
	if err != nil {
		return &localWriteError{err}
	}
	s.stageLater()
	s.log.Info("repaired working files after an interrupted write", "files", len(changes))
	return nil
}

// filesAt returns the files of tree at or below rel: rel itself when it is
// a file, the files under it when it is a directory, none when it is absent
// (a path through a file is absent, as go-git's Tree.Tree has it).
func filesAt(tree *object.Tree, rel string) (map[string]plumbing.Hash, error) {
	e, err := tree.FindEntry(rel)
	switch {
	case errors.Is(err, object.ErrEntryNotFound) || errors.Is(err, object.ErrDirectoryNotFound) ||
		errors.Is(err, plumbing.ErrObjectNotFound):
		return map[string]plumbing.Hash{}, nil
	case err != nil:
		return nil, err
	case e.Mode.IsFile():
		return map[string]plumbing.Hash{rel: e.Hash}, nil
	}
	return filesBelow(tree, rel)
}

// localWriteError is a failure to write a file of the memory's home that
// HEAD alone determines (a working file, .git/index, a cache), on a full
// disk say. HEAD still holds every acknowledged write, so reads go on from
// it while the file is written again later.
type localWriteError struct{ err error }

func (e *localWriteError) Error() string { return e.err.Error() }
func (e *localWriteError) Unwrap() error { return e.err }

// isLocalWrite reports whether err is a *localWriteError.
func isLocalWrite(err error) bool {
	var lw *localWriteError
	return errors.As(err, &lw)
}

// unsettledWrite is a write whose working files are written but not yet
// flushed: its journal stays until they are (see updateWorking).
type unsettledWrite struct {
	commit plumbing.Hash
	paths  []string // files and directories to flush
}

// updateWorking brings the working files in line with commit, now HEAD,
// and lets the journal that covers them go. In a durable store the
// files' flush, and the journal's removal after it, wait for the next
// write or a moment later (settle), so the write is not held up by them:
// if the process dies first, the journal repairs the files. A file that
// could not be written keeps the journal for the next writer to repair.
// Callers hold mu and the repository lock.
func (s *Store) updateWorking(commit plumbing.Hash, changes []change) {
	written, err := s.applyWorking(changes)
	switch {
	case err != nil:
		// The journal stays: the next write, or read, repairs the files.
		s.workingStale.Store(true)
		s.log.Error("update working files", logKeyCommit, commit.String(), logKeyErr, err)
	case s.git.sync:
		s.unsettled = unsettledWrite{commit: commit, paths: written}
		go s.settleSoon()
	default:
		if err := os.Remove(s.journalPath()); err != nil {
			s.log.Warn("remove the write journal", logKeyErr, err)
		}
	}
}

// workingCurrent reports whether the working files can be read as HEAD's.
// After a failed update or repair of them it tries the repair, without
// waiting for this process's writes or another's: until it succeeds,
// readers read HEAD itself (headFile, headFS).
func (s *Store) workingCurrent() bool {
	if !s.workingStale.Load() {
		return true
	}
	if !s.mu.TryLock() {
		return false
	}
	defer s.mu.Unlock()
	if s.closed || !s.lock.tryAcquire() {
		return false
	}
	defer s.lock.release()
	s.settle()
	if err := s.repairWorking(); err != nil {
		s.log.Warn("repair the working files; reading them from HEAD", logKeyErr, err)
		return false
	}
	s.workingStale.Store(false)
	return true
}

// settleSoon settles the last write when no write has done it first. It
// does not wait for another process's write (which holds the lock and
// repairs the files from the journal), nor holds up this process's
// searches while it would: the next write here settles it then.
func (s *Store) settleSoon() {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed || s.unsettled.commit.IsZero() || !s.lock.tryAcquire() {
		return
	}
	defer s.lock.release()
	s.settle()
}

// settle flushes the last write's working files and removes its journal.
// When the journal is no longer that write's, another process has
// repaired the files (and flushed them) under the repository lock since.
// A flush that fails keeps the journal, which the caller's repair then
// replays. Callers hold mu and the repository lock.
func (s *Store) settle() {
	u := s.unsettled
	if u.commit.IsZero() {
		return
	}
	s.unsettled = unsettledWrite{}
	if j, ok := s.readJournal(); !ok || j.commit != u.commit {
		return
	}
	if err := syncAll(u.paths); err != nil {
		s.log.Warn("flush the working files; they are repaired from the journal", logKeyCommit, u.commit.String(), logKeyErr, err)
		return
	}
	if err := os.Remove(s.journalPath()); err != nil {
		s.log.Warn("remove the write journal", logKeyErr, err)
	}
}

// applyWorking brings the working files in line with changes and returns
// the files and directories it wrote, for the caller to flush. Files are
// replaced by rename, so a concurrent reader sees the old or the new
// content.
func (s *Store) applyWorking(changes []change) ([]string, error) {
	var written []string
	for _, c := range changes {
		p := s.abs(c.Path)
		if c.Delete {
			if err := os.RemoveAll(p); err != nil {
				return nil, err
			}
			s.pruneEmpty(path.Dir(c.Path))
			written = append(written, s.existingDir(filepath.Dir(p)))
			continue
		}
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			return nil, err
		}
		if err := s.writeWorking(p, c.Content); err != nil {
			return nil, err
		}
		written = append(written, p, filepath.Dir(p))
	}
	slices.Sort(written)
	return slices.Compact(written), nil
}

// writeWorking replaces the working file p by one holding data.
func (s *Store) writeWorking(p string, data []byte) error {
	if s.opts.failWorking != nil {
		if err := s.opts.failWorking(p); err != nil {
			return &fs.PathError{Op: "write", Path: p, Err: err}
		}
	}
	return fsutil.WriteAtomic(p, data, false)
}

// existingDir is dir or, when pruning removed it, its nearest ancestor
// that still exists: the directory whose entries changed.
func (s *Store) existingDir(dir string) string {
	for dir != s.dir && len(dir) > len(s.dir) {
		if _, err := os.Stat(dir); err == nil {
			return dir
		}
		dir = filepath.Dir(dir)
	}
	return s.dir
}

// pruneEmpty removes empty directories from rel up to the root, as git does
// not keep them.
func (s *Store) pruneEmpty(rel string) {
	for rel != "." && rel != "" && rel != "/" {
		if err := os.Remove(s.abs(rel)); err != nil {
			return
		}
		rel = path.Dir(rel)
	}
}

// workspaceOf returns the workspace a repository-relative path belongs to.
func workspaceOf(rel string) string {
	parts := strings.SplitN(rel, "/", 3)
	if len(parts) >= 2 && parts[0] == "workspaces" {
		return parts[1]
	}
	return ""
}

// workspaceBytes returns the total size of a workspace's files at head.
func (s *Store) workspaceBytes(head plumbing.Hash, ws string) (int64, error) {
	if s.wsHead != head {
		clear(s.wsBytes)
		s.wsHead = head
	}
	if n, ok := s.wsBytes[ws]; ok {
		return n, nil
	}
	var total int64
	err := filepath.WalkDir(s.abs("workspaces/"+ws), func(_ string, d fs.DirEntry, err error) error {
		if err != nil {
			if errors.Is(err, fs.ErrNotExist) {
				return nil
			}
			return err
		}
		if d.Type().IsRegular() {
			info, err := d.Info()
			if err != nil {
				return err
			}
			total += info.Size()
		}
		return nil
	})
	if err != nil {
		return 0, err
	}
	s.wsBytes[ws] = total
	return total, nil
}

// noteSizes carries the workspace totals over to the new head: deltas for
// file writes, a recount for workspaces touched by deletes.
func (s *Store) noteSizes(old, next plumbing.Hash, deltas map[string]int64, changes []change) {
	if s.wsHead != old {
		return
	}
	s.wsHead = next
	for ws, d := range deltas {
		if n, ok := s.wsBytes[ws]; ok {
			s.wsBytes[ws] = n + d
		}
	}
	for _, c := range changes {
		if c.Delete {
			delete(s.wsBytes, workspaceOf(c.Path))
		}
	}
}
