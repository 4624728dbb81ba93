package memstore

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"net/url"
	"os"
	"path"
	"path/filepath"
	"sort"
	"sync"
	"time"

	"github.com/go-git/go-git/v5/plumbing"
	"github.com/go-git/go-git/v5/plumbing/filemode"
	"github.com/go-git/go-git/v5/plumbing/object"

	"github.com/selmem/selmem/internal/fsutil"
	"github.com/selmem/selmem/memstore/gate"
)

// logKeyRemote is the log key of a remote's commit.
const logKeyRemote = "remote"

// cloneRemote creates the repository at dir as a clone of the remote's
// branch when dir holds none and the remote has the branch. Like initRepo it
// builds the repository beside dir and renames it into place (buildRepo). It does
// nothing when dir already holds a repository or the remote's branch does
// not exist (initRepo then creates one, which Open pushes). A remote that
// cannot be reached is an error: there is nothing to read yet, and a memory
// created here would never join the remote's history.
func (r *replica) cloneRemote(ctx context.Context, dir string, sync bool, meta commitMeta) error {
	return buildRepo(dir, sync, "clone", func(g *gitRepo, tmp string) (plumbing.Hash, commitMeta, error) {
		head, err := r.fetch(ctx, g, plumbing.ZeroHash)
		if isLocalWrite(err) {
			return head, meta, &Error{Kind: ErrUnavailable,
				Msg:  "Error: this home could not store the memory its remote sent (" + withoutPath(err).Error() + ").",
				Hint: "Free space on the disk holding the home (or fix what the error names), then start again.", Err: err}
		}
		if err != nil {
			return head, meta, &Error{Kind: ErrUnavailable,
				Msg:  "Error: the memory's remote repository cannot be reached, and this home holds no copy of the memory yet.",
				Hint: "Check remote.url and that the git server is up, then start again.", Err: err}
		}
		if head.IsZero() {
			return head, meta, errNoRepo // an empty remote: Open creates the memory and pushes it
		}
		meta.Subject = "clone " + r.cfg.Branch
		c, err := object.GetCommit(g.repo.Storer, head)
		if err == nil {
			err = checkFetched(ctx, nil, c)
		}
		if err != nil {
			return head, meta, err
		}
		return head, meta, checkout(g, tmp, head)
	})
}

// fetchedLimits are the path limits checkFetched applies: generous, since
// they are for what selmem writes and another replica may allow more.
var fetchedLimits = gate.Limits{MaxDepth: 256, MaxNameBytes: 1024}

// checkFetched refuses to, a commit fetched from the remote, when a file
// it adds or changes since from (nil: any file) has a path or a mode the
// write gate never lets a write make: a hidden element (.git included), a
// "..", a control character, a symlink or a submodule. Anyone who can
// push to the remote with plain git can make such a commit; taking it in
// would put the file in the working tree, or fail later with a message
// that names nothing. The refusal names the commit, for whoever keeps the
// remote to mend.
func checkFetched(ctx context.Context, from, to *object.Commit) error {
	var old *object.Tree
	if from != nil {
		var err error
		if old, err = from.Tree(); err != nil {
			return err
		}
	}
	tree, err := to.Tree()
	if err != nil {
		return err
	}
	why, err := refusedIn(ctx, old, tree, "")
	if err != nil || why == "" {
		return err
	}
	return &Error{Kind: ErrConflict,
		Msg:  fmt.Sprintf("Error: the remote's commit %s holds a file selmem does not take in: %s", to.Hash.String()[:12], why),
		Hint: "Nothing was changed here. Whoever keeps the remote removes the file with git in a new commit; until then this replica serves its copy and its writes fail."}
}

// refusedIn says why the first entry of tree below dir that old (nil:
// none) does not hold as it is would be refused (see checkFetched), or
// returns "". An entry's name is checked before its subtree is read.
func refusedIn(ctx context.Context, old, tree *object.Tree, dir string) (string, error) {
	for _, e := range tree.Entries {
		if err := ctx.Err(); err != nil {
			return "", err
		}
		var was *object.TreeEntry
		if old != nil {
			was, _ = old.FindEntry(e.Name)
		}
		if was != nil && was.Hash == e.Hash && was.Mode == e.Mode {
			continue
		}
		p := path.Join(dir, e.Name)
		if _, err := gate.Path(virtual(p), fetchedLimits); err != nil {
			return err.Error(), nil
		}
		switch e.Mode {
		case filemode.Regular, filemode.Executable:
		case filemode.Dir:
			sub, err := tree.Tree(e.Name)
			if err != nil {
				return "", err
			}
			var oldSub *object.Tree
			if was != nil && was.Mode == filemode.Dir {
				if oldSub, err = old.Tree(e.Name); err != nil {
					return "", err
				}
			}
			if why, err := refusedIn(ctx, oldSub, sub, p); why != "" || err != nil {
				return why, err
			}
		default:
			return fmt.Sprintf("%s is not a regular file (git mode %s).", virtual(p), e.Mode), nil
		}
	}
	return "", nil
}

// checkout writes every file of the commit h into the working directory dir.
func checkout(g *gitRepo, dir string, h plumbing.Hash) error {
	c, err := object.GetCommit(g.repo.Storer, h)
	if err != nil {
		return err
	}
	tree, err := c.Tree()
	if err != nil {
		return err
	}
	files, err := subtreeFiles(tree, "")
	if err != nil {
		return err
	}
	for rel, bh := range files {
		content, err := g.blob(bh)
		if err != nil {
			return err
		}
		p := filepath.Join(dir, filepath.FromSlash(rel))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			return err
		}
		if err := fsutil.WriteAtomic(p, content, g.sync); err != nil {
			return err
		}
	}
	return nil
}

// fetchLocked downloads what the remote's branch has that the local branch
// (at have) lacks, makes the objects durable, and returns the remote's
// commit. It runs under the store's lock.
func (s *Store) fetchLocked(ctx context.Context, have plumbing.Hash) (plumbing.Hash, error) {
	head, err := s.remote.fetch(ctx, &s.git, have)
	if err == nil && s.git.sync {
		if err = syncAll(s.git.objectPaths()); err != nil {
			err = &localWriteError{err}
		}
	}
	if err != nil {
		s.git.dropObjects()
		return plumbing.ZeroHash, err
	}
	s.git.keepObjects()
	return head, nil
}

// fetchFailed is the error of a fetch that failed: the remote could not be
// reached, or this home could not store what it sent (a full disk), which
// is no fault of the remote's.
func (s *Store) fetchFailed(what string, err error) error {
	if !isLocalWrite(err) {
		return s.remote.unavailable(what, err)
	}
	return &Error{Kind: ErrUnavailable,
		Msg:  "Error: " + what + ": this home could not store what the memory's remote sent (" + withoutPath(err).Error() + ").",
		Hint: "Free space on the disk holding the memory (or fix what the error names), then retry; reads and searches still work. Nothing was changed locally.", Err: err}
}

// pullLocked brings the local branch level with the remote's: a
// fast-forward when it is behind, a push when it is strictly ahead (commits
// made before the remote was configured), an error when the two diverged.
// It runs under the store's lock.
func (s *Store) pullLocked(ctx context.Context) (SyncResult, error) {
	for range maxHeadMoves {
		head, err := s.git.headCommit()
		if err != nil {
			return SyncResult{}, err
		}
		res := SyncResult{From: head.Hash.String(), To: head.Hash.String()}
		remote, err := s.fetchLocked(ctx, head.Hash)
		if err != nil {
			return res, s.fetchFailed("the memory could not be brought up to date", err)
		}
		rel := relDescendant // an empty remote: everything local is ahead
		if !remote.IsZero() {
			rel = s.git.relation(head.Hash, remote)
		}
		switch rel {
		case relSame:
			s.syncMirrors(ctx)
			return res, nil
		case relAncestor:
			paths, err := s.fastForward(ctx, head, remote)
			if err != nil {
				return res, err
			}
			res.To, res.Paths = remote.String(), paths
			return res, nil
		case relDescendant:
			objects, err := s.git.reachableObjects(remote, head.Hash)
			if err == nil {
				err = s.remote.push(ctx, &s.git, remote, head.Hash, objects)
			}
			if errors.Is(err, errRemoteMoved) || errors.Is(err, errMaybeLanded) {
				continue
			}
			var refused *errPushRefused
			if errors.As(err, &refused) {
				return res, &Error{Kind: ErrConflict, Msg: "Error: the memory's remote refused the local commits it lacks.",
					Hint: "The server's log (a hook, permissions) says why; nothing was changed locally.", Err: err}
			}
			if err != nil {
				return res, s.remote.unavailable("the local commits could not be pushed", err)
			}
			s.log.Info("pushed local commits the remote lacked", logKeyCommit, head.Hash.String(), logKeyRemote, remote.String())
			s.syncMirrors(ctx)
			if err := s.publish(ctx, head.Hash); err != nil {
				s.log.Warn("publish the new commit", logKeyErr, err)
			}
			return res, nil
		case relDiverged:
			return res, &Error{Kind: ErrConflict,
				Msg: fmt.Sprintf("Error: the memory's local branch (%s) and the remote's branch %s (%s) have diverged: each has commits the other lacks.",
					head.Hash.String()[:12], s.remote.cfg.Branch, remote.String()[:12]),
				Hint: "Nothing was changed. Keep one side: move this home's memory directory aside to start again from the remote, or push its branch to a new remote branch and merge by hand."}
		default:
			return res, fmt.Errorf("the remote's commit %s cannot be read after fetching it", remote.String()[:12])
		}
	}
	return SyncResult{}, &Error{Kind: ErrConflict, Msg: "Error: the memory's remote kept changing while this replica caught up.",
		Hint: "Retry; nothing was lost."}
}

// fastForward moves the local branch from head to to, a descendant of it
// whose objects are durable, and brings the working files and every index
// along, as a write does (journal first, so that a crash is repaired). It
// returns the virtual paths that changed. It runs under the store's lock.
func (s *Store) fastForward(ctx context.Context, head *object.Commit, to plumbing.Hash) ([]string, error) {
	next, err := object.GetCommit(s.git.repo.Storer, to)
	if err != nil {
		return nil, err
	}
	if err := checkFetched(ctx, head, next); err != nil {
		return nil, err
	}
	changes, err := s.treeChanges(ctx, head, next)
	if err != nil {
		return nil, err
	}
	if err := s.writeJournal(to, changes); err != nil {
		return nil, err
	}
	if s.git.sync {
		if err := syncAll([]string{s.journalPath(), s.git.gitDir}); err != nil {
			_ = os.Remove(s.journalPath())
			return nil, err
		}
	}
	meta := s.meta("fast-forward to "+s.remote.cfg.Branch, nil, nil)
	if err := s.git.advance(head.Hash, to, meta); err != nil {
		_ = os.Remove(s.journalPath())
		return nil, fmt.Errorf("fast-forward: %w", err)
	}
	s.updateWorking(to, changes)
	s.stageLater()
	s.syncMirrors(ctx)
	paths := make([]string, len(changes))
	for i, c := range changes {
		paths[i] = virtual(c.Path)
	}
	sort.Strings(paths)
	return paths, nil
}

// treeChanges lists the file changes from one commit to another, with the
// new contents.
func (s *Store) treeChanges(ctx context.Context, from, to *object.Commit) ([]change, error) {
	a, err := from.Tree()
	if err != nil {
		return nil, err
	}
	b, err := to.Tree()
	if err != nil {
		return nil, err
	}
	diff, err := object.DiffTreeWithOptions(ctx, a, b, nil)
	if err != nil {
		return nil, err
	}
	var out []change
	for _, c := range diff {
		if c.From.Name != "" && c.From.Name != c.To.Name {
			out = append(out, change{Path: c.From.Name, Delete: true})
		}
		if c.To.Name == "" {
			continue
		}
		content, err := s.git.blob(c.To.TreeEntry.Hash)
		if err != nil {
			return nil, err
		}
		out = append(out, change{Path: c.To.Name, Content: content})
	}
	return out, nil
}

// syncMirrors brings every index up to HEAD, logging failures (the index is
// derived; the next write, search or sync retries).
func (s *Store) syncMirrors(ctx context.Context) {
	for i, m := range s.mirrors {
		if err := m.sync(ctx, nil); err != nil {
			s.log.Warn("index update failed; the next write, search or sync reconciles it", logKeyIndex, i, logKeyErr, err)
		}
	}
}

// publish tells the other replicas, through the feed, that the memory
// reached commit.
func (s *Store) publish(ctx context.Context, commit plumbing.Hash) error {
	if s.remote == nil || s.remote.cfg.Feed == nil {
		return nil
	}
	return s.remote.cfg.Feed.Publish(ctx, commit.String())
}

// openRemote brings a repository that Open found or created level with the
// remote. An unreachable remote is logged, not fatal: reads work from the
// local copy and writes fail until it is back.
func (s *Store) openRemote(ctx context.Context) error {
	res, err := s.pullLocked(ctx)
	if errors.Is(err, ErrUnavailable) {
		s.log.Warn("the memory's remote cannot be reached; serving the local copy, writes fail until it is back", logKeyErr, err)
		return nil
	}
	if err != nil {
		return err
	}
	if res.From != res.To {
		s.log.Info("caught up with the remote", logKeyCommit, res.To, "files", len(res.Paths))
	}
	return nil
}

// errLanded reports a write whose push landed although its answer was
// lost, and which other replicas' commits followed: the local branch is
// level with the remote, past the write's commit, and the write is made.
var errLanded = errors.New("the write landed on the remote before other replicas' commits")

// pushCommit pushes next, the write's commit made on head, to the remote,
// before the local branch moves. On failure the write is taken back (its
// objects and journal go). When the remote had moved, the local branch is
// brought level with it and errHeadMoved asks Store.locked to prepare the
// write again, through the write gate, on the new head; or, when the
// push's answer was lost and next is in the remote's history, errLanded
// says the write was made. When the answer was lost and the remote cannot
// be asked, the error says the write may have been made.
func (s *Store) pushCommit(ctx context.Context, head *object.Commit, next plumbing.Hash) error {
	objects, err := s.git.newObjects(head.Hash, next)
	if err == nil {
		err = s.remote.push(ctx, &s.git, head.Hash, next, objects)
	}
	if err == nil {
		return nil
	}
	var refused *errPushRefused
	var unknown *errPushUnknown
	maybe := errors.Is(err, errMaybeLanded)
	switch {
	case errors.As(err, &unknown):
		s.takeBack()
		s.remote.failed(err)
		return &Error{Kind: ErrUnavailable,
			Msg:  fmt.Sprintf("Error: the memory's remote repository cannot be reached, so whether the write was made (as commit %s) is not known: its answer was lost.", next.String()[:12]),
			Hint: "When the remote is back, look for the commit in memory_history before making the write again; the next sync brings it here if it was made.", Err: err}
	case !maybe && !errors.Is(err, errRemoteMoved) && !errors.As(err, &refused):
		s.takeBack()
		return s.remote.unavailable("the write was not made", err)
	}
	s.takeBack()
	res, perr := s.pullLocked(ctx)
	if perr != nil {
		return perr
	}
	if maybe && s.git.relation(next, plumbing.NewHash(res.To)) == relAncestor {
		return errLanded
	}
	if res.From == res.To && refused != nil {
		return &Error{Kind: ErrRejected, Msg: "Error: the memory's remote refused the write.",
			Hint: "The git server's log (a hook, permissions) says why. Nothing was written.", Err: err}
	}
	return errHeadMoved
}

// takeBack removes what a write that will not be acknowledged left: its
// objects and its journal.
func (s *Store) takeBack() {
	s.git.dropObjects()
	_ = os.Remove(s.journalPath())
}

// writeTurn runs fn, a write's attempts, in this replica's turn to write
// when the replicas share an index: inside the index's Exclusive, once the
// local branch is level with the remote's. Without turns, replicas racing
// for the remote's branch are not fair: one whose write just landed
// prepares its next write on the head it pushed and pushes at once, while
// one whose push lost must fetch and catch up first, and so keeps losing
// to the first for as long as that one has writes queued. In its turn a
// write lands at its first push, and the replicas' writes wait for each
// other in the order Exclusive grants it (Postgres queues the waiters of
// an advisory lock). Without a remote or a shared index, or when Exclusive
// cannot be had (the database is down), fn runs at once and the push's
// compare-and-swap alone keeps the writes apart.
func (s *Store) writeTurn(ctx context.Context, fn func() error) error {
	if s.remote == nil || len(s.mirrors) == 0 {
		return fn()
	}
	m := s.mirrors[0]
	sh, ok := m.idx.(SharedIndex)
	if !ok {
		return fn()
	}
	ran := false
	err := sh.Exclusive(ctx, func(context.Context) error {
		ran = true
		m.turn = true
		defer func() { m.turn = false }()
		if _, err := s.pullLocked(ctx); err != nil {
			return err
		}
		return fn()
	})
	if !ran && ctx.Err() == nil {
		s.log.Warn("the replicas' write turn cannot be taken; writing without it", logKeyErr, err)
		return fn()
	}
	return err
}

// retryPause is how long a write whose push lost a race waits before it is
// prepared again, so that replicas racing for the remote spread out.
func retryPause(attempt int) time.Duration {
	n := min(attempt+1, 10)
	return time.Duration(rand.IntN(n*2+1)) * time.Millisecond
}

// Sync fetches the remote's branch and brings the local branch, the working
// files and every index level with it, under the store's lock. Without a
// remote it changes nothing.
func (s *Store) Sync(ctx context.Context) (SyncResult, error) {
	if s.remote == nil {
		h, err := s.Head()
		return SyncResult{From: h, To: h}, err
	}
	var res SyncResult
	err := s.locked(ctx, func() error {
		var err error
		res, err = s.pullLocked(ctx)
		return err
	})
	return res, err
}

// Follow keeps the store level with its remote until ctx is done: it syncs
// at once, on every notification of the remote's feed and every poll
// interval, and calls onChange (when not nil) with the virtual paths that
// changed whenever a sync moved the branch. Failures are logged and retried
// with backoff, never fatal. Without a remote it returns at once.
func (s *Store) Follow(ctx context.Context, onChange func(paths []string)) error {
	if s.remote == nil {
		return nil
	}
	poll := s.remote.cfg.Poll
	kick := make(chan struct{}, 1)
	notify := func(string) {
		select {
		case kick <- struct{}{}:
		default:
		}
	}
	var wg sync.WaitGroup
	defer wg.Wait()
	if feed := s.remote.cfg.Feed; feed != nil {
		wg.Go(func() {
			pause := time.Duration(0)
			for ctx.Err() == nil {
				if err := feed.Subscribe(ctx, notify); err != nil && ctx.Err() == nil {
					s.log.Warn("subscribe to the memory's change feed", logKeyErr, err)
				}
				pause = backoff(pause, poll)
				if !sleep(ctx, pause) {
					return
				}
				notify("") // notifications may have been missed
			}
		})
	}
	ticker := time.NewTicker(poll)
	defer ticker.Stop()
	pause := time.Duration(0)
	for {
		res, err := s.Sync(ctx)
		switch {
		case ctx.Err() != nil:
			return nil
		case err != nil:
			s.log.Warn("sync with the memory's remote failed; retrying", logKeyErr, err)
			pause = backoff(pause, poll)
			if !sleep(ctx, pause) {
				return nil
			}
			continue
		}
		pause = 0
		if res.From != res.To && onChange != nil {
			onChange(res.Paths)
		}
		select {
		case <-ctx.Done():
			return nil
		case <-ticker.C:
		case <-kick:
		}
	}
}

// backoff doubles pause, from 100ms up to limit.
func backoff(pause, limit time.Duration) time.Duration {
	return min(max(2*pause, 100*time.Millisecond), limit)
}

// sleep waits for d or until ctx is done, reporting whether d passed.
func sleep(ctx context.Context, d time.Duration) bool {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return false
	case <-t.C:
		return true
	}
}

// RemoteStatus reports the store's replication: the local and remote heads
// and the last contact with the remote. It does not contact the remote.
// Without a remote it returns the zero RemoteStatus.
func (s *Store) RemoteStatus(ctx context.Context) (RemoteStatus, error) {
	if s.remote == nil {
		return RemoteStatus{}, nil
	}
	head, known, last, lastErr := s.remote.status()
	st := RemoteStatus{URL: redactURL(s.remote.cfg.URL), Branch: s.remote.cfg.Branch,
		LastContact: last, LastError: lastErr, Behind: -1}
	local, err := s.git.readRef()
	if err != nil {
		return st, err
	}
	st.LocalHead = local.String()
	if known {
		if !head.IsZero() {
			st.RemoteHead = head.String()
			st.Behind = s.git.countBetween(local, head)
			if st.Behind < 0 && s.git.relation(local, head) == relDescendant {
				st.Behind = 0 // ahead: nothing lacking
			}
		} else {
			st.Behind = 0
		}
	}
	return st, nil
}

// redactURL hides a password in a remote's URL.
func redactURL(raw string) string {
	u, err := url.Parse(raw)
	if err != nil || u.User == nil {
		return raw
	}
	return u.Redacted()
}
