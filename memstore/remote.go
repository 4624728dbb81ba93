package memstore

import (
	"bytes"
	"cmp"
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"strings"
	"sync"
	"time"

	"github.com/go-git/go-git/v5/plumbing"
	"github.com/go-git/go-git/v5/plumbing/format/packfile"
	"github.com/go-git/go-git/v5/plumbing/object"
	"github.com/go-git/go-git/v5/plumbing/protocol/packp"
	"github.com/go-git/go-git/v5/plumbing/protocol/packp/capability"
	"github.com/go-git/go-git/v5/plumbing/protocol/packp/sideband"
	"github.com/go-git/go-git/v5/plumbing/revlist"
	"github.com/go-git/go-git/v5/plumbing/storer"
	"github.com/go-git/go-git/v5/plumbing/transport"
	"github.com/go-git/go-git/v5/plumbing/transport/client"
)

// Remote is a bare git repository, shared by several replicas of one
// memory, that is the authority for the memory's branch: a write is
// acknowledged only once it has been pushed there.
type Remote struct {
	URL    string        // a bare repository: file://, http(s)://, git://
	Branch string        // "" means "main"
	Poll   time.Duration // how often Follow fetches without a notification; 0 means 30s
	Feed   ChangeFeed    // optional: notifications of new commits (pgindex in team set-ups)
}

// DefaultPoll is Remote.Poll's default.
const DefaultPoll = 30 * time.Second

// SyncResult is what a Sync changed.
type SyncResult struct {
	From, To string   // the local branch's commit before and after; equal when nothing moved
	Paths    []string // virtual /memories/... paths changed
}

// RemoteStatus describes a store's replication.
type RemoteStatus struct {
	URL, Branch           string
	LocalHead, RemoteHead string    // RemoteHead as of the last successful fetch/push
	LastContact           time.Time // last successful fetch or push
	LastError             string    // "" when the last contact succeeded
	Behind                int       // commits the local branch lacks of RemoteHead (-1 unknown)
}

// remoteTimeout bounds one exchange with the remote.
const remoteTimeout = 30 * time.Second

// errRemoteMoved reports a push the remote refused because its branch no
// longer names the commit the write was prepared on.
var errRemoteMoved = errors.New("the remote branch moved")

// errMaybeLanded reports a push whose answer was lost while the remote's
// branch moved past the commit it was made on: it may have landed, with
// another replica's commits on top. Fetch the branch to tell.
var errMaybeLanded = errors.New("the remote branch moved, and the push's answer was lost")

// errPushUnknown is a push whose request may have reached the remote but
// whose answer did not come back, and the remote could not be asked
// afterwards: whether the branch moved is not known.
type errPushUnknown struct{ err error }

func (e *errPushUnknown) Error() string {
	return "the push's answer was lost and the remote cannot be asked: " + e.err.Error()
}
func (e *errPushUnknown) Unwrap() error { return e.err }

// neverSent reports whether err, a failed request to the remote, failed
// before any of it was sent: the connection could not be made.
func neverSent(err error) bool {
	var ue *plumbing.UnexpectedError
	if errors.As(err, &ue) {
		err = ue.Err
	}
	var op *net.OpError
	return errors.As(err, &op) && op.Op == "dial"
}

// replica is the store's side of a Remote: the transport to it and what
// the last exchange learned.
type replica struct {
	cfg    Remote
	ep     *transport.Endpoint
	ref    plumbing.ReferenceName // the branch on the remote
	client transport.Transport
	log    *slog.Logger
	now    func() time.Time

	mu          sync.Mutex
	head        plumbing.Hash // the remote branch as of the last contact
	known       bool          // head is known (a contact succeeded)
	lastContact time.Time
	lastError   string
	pushCaps    *capability.List // receive-pack's capabilities, once known
}

// newReplica checks cfg and prepares the transport.
func newReplica(cfg Remote, log *slog.Logger, now func() time.Time) (*replica, error) {
	if cfg.URL == "" {
		return nil, errors.New("memstore: Remote.URL is empty")
	}
	if cfg.Branch == "" {
		cfg.Branch = "main"
	}
	if cfg.Poll <= 0 {
		cfg.Poll = DefaultPoll
	}
	ref := plumbing.NewBranchReferenceName(cfg.Branch)
	if strings.ContainsAny(cfg.Branch, " ~^:?*[\\") || strings.Contains(cfg.Branch, "..") {
		return nil, fmt.Errorf("memstore: Remote.Branch %q is not a valid branch name", cfg.Branch)
	}
	ep, err := transport.NewEndpoint(cfg.URL)
	if err != nil {
		return nil, fmt.Errorf("memstore: Remote.URL: %w", err)
	}
	c, err := client.NewClient(ep)
	if err != nil {
		return nil, fmt.Errorf("memstore: Remote.URL: %w", err)
	}
	return &replica{cfg: cfg, ep: ep, ref: ref, client: c, log: log, now: now}, nil
}

// contact records a successful exchange that saw the remote branch at head.
func (r *replica) contact(head plumbing.Hash) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.head, r.known, r.lastContact, r.lastError = head, true, r.now(), ""
}

// failed records a failed exchange.
func (r *replica) failed(err error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.lastError = err.Error()
}

// unavailable is the error of a write or sync that could not reach the
// remote. It names neither the URL (it may hold credentials) nor host paths.
func (r *replica) unavailable(what string, err error) error {
	r.failed(err)
	return &Error{Kind: ErrUnavailable,
		Msg:  "Error: the memory's remote repository cannot be reached, so " + what + ".",
		Hint: "Retry when the remote is back; reads and searches still work. Nothing was changed locally.", Err: err}
}

// remoteHead asks the remote which commit its branch names (zero when the
// branch or the repository is empty).
func (r *replica) remoteHead(ctx context.Context) (plumbing.Hash, error) {
	ctx, cancel := context.WithTimeout(ctx, remoteTimeout)
	defer cancel()
	sess, _, head, err := r.advertised(ctx)
	if sess != nil {
		sess.Close()
	}
	return head, err
}

// advertised opens an upload-pack session and reads the remote's refs:
// the branch's commit, zero when the branch or the repository is empty
// (ar is nil then). The caller closes sess when it is not nil.
func (r *replica) advertised(ctx context.Context) (sess transport.UploadPackSession, ar *packp.AdvRefs, head plumbing.Hash, err error) {
	sess, err = r.client.NewUploadPackSession(r.ep, nil)
	if err != nil {
		return nil, nil, plumbing.ZeroHash, err
	}
	ar, err = sess.AdvertisedReferencesContext(ctx)
	if errors.Is(err, transport.ErrEmptyRemoteRepository) {
		r.contact(plumbing.ZeroHash)
		return sess, nil, plumbing.ZeroHash, nil
	}
	if err != nil {
		return sess, nil, plumbing.ZeroHash, err
	}
	head = ar.References[r.ref.String()]
	r.contact(head)
	return sess, ar, head, nil
}

// fetch downloads into g the objects of the remote branch that the commit
// have (zero: none) lacks, as loose objects recorded in g.created, and
// returns the commit the remote branch names (zero when it has none). The
// branch and every other ref of g are left alone: the caller moves the
// branch with the store's durable ref writer.
func (r *replica) fetch(ctx context.Context, g *gitRepo, have plumbing.Hash) (plumbing.Hash, error) {
	ctx, cancel := context.WithTimeout(ctx, remoteTimeout)
	defer cancel()
	sess, ar, head, err := r.advertised(ctx)
	if sess != nil {
		defer sess.Close()
	}
	if err != nil || head.IsZero() || head == have || (!have.IsZero() && g.relation(head, have) == relAncestor) {
		// Nothing to download: the remote is empty, level, or behind
		// (reachable from have, hence whole).
		return head, err
	}
	req := packp.NewUploadPackRequestFromCapabilities(ar.Capabilities)
	// A thin pack would hold deltas against objects outside it, which the
	// loose-object writer below cannot take.
	req.Capabilities.Delete(capability.ThinPack)
	if ar.Capabilities.Supports(capability.NoProgress) {
		_ = req.Capabilities.Set(capability.NoProgress)
	}
	req.Wants = []plumbing.Hash{head}
	if !have.IsZero() {
		req.Haves = []plumbing.Hash{have}
	}
	resp, err := sess.UploadPack(ctx, req)
	if errors.Is(err, transport.ErrEmptyUploadPackRequest) {
		r.contact(head)
		return head, nil
	}
	if err != nil {
		return plumbing.ZeroHash, err
	}
	defer resp.Close()
	var pack io.Reader = resp
	switch {
	case req.Capabilities.Supports(capability.Sideband64k):
		pack = sideband.NewDemuxer(sideband.Sideband64k, resp)
	case req.Capabilities.Supports(capability.Sideband):
		pack = sideband.NewDemuxer(sideband.Sideband, resp)
	}
	p, err := packfile.NewParserWithStorage(packfile.NewScanner(pack), looseStorer{EncodedObjectStorer: g.repo.Storer, g: g})
	if err != nil {
		return plumbing.ZeroHash, fmt.Errorf("read the fetched pack: %w", err)
	}
	if _, err := p.Parse(); err != nil {
		return plumbing.ZeroHash, fmt.Errorf("read the fetched pack: %w", err)
	}
	if _, err := object.GetCommit(g.repo.Storer, head); err != nil {
		return plumbing.ZeroHash, fmt.Errorf("the fetched pack lacks %s: %w", head.String()[:12], err)
	}
	r.contact(head)
	return head, nil
}

// looseStorer stores every object a fetched pack holds as a loose object
// through gitRepo.putObject, so that the objects can be flushed before the
// branch names them, or taken back, like a write's own objects. go-git's
// own pack writer is bypassed on purpose: the fetches of a replica are
// small, and its ref updates are never used.
type looseStorer struct {
	storer.EncodedObjectStorer
	g *gitRepo
}

// SetEncodedObject stores o; a failure is this home's (a full disk), not
// the remote's: a *localWriteError.
func (s looseStorer) SetEncodedObject(o plumbing.EncodedObject) (plumbing.Hash, error) {
	h, err := s.g.putObject(o)
	if err != nil {
		return h, &localWriteError{err}
	}
	return h, nil
}

// errPushRefused is a push the remote refused for a reason other than a
// moved branch (a hook, a missing object).
type errPushRefused struct{ err error }

func (e *errPushRefused) Error() string { return "the remote refused the push: " + e.err.Error() }
func (e *errPushRefused) Unwrap() error { return e.err }

// push moves the remote branch from old (zero: the branch does not exist)
// to next, sending objects: a compare-and-swap, since the update command
// carries old and the server applies it only when its branch still names
// old. It returns errRemoteMoved when the branch names another commit,
// an *errPushRefused when the server refused the update, and any other
// error when the remote could not be reached (the outcome is then
// unknown).
func (r *replica) push(ctx context.Context, g *gitRepo, old, next plumbing.Hash, objects []plumbing.Hash) error {
	ctx, cancel := context.WithTimeout(ctx, remoteTimeout)
	defer cancel()
	sess, err := r.client.NewReceivePackSession(r.ep, nil)
	if err != nil {
		return err
	}
	defer sess.Close()
	// The server's capabilities are learnt once; after that a push is one
	// request, the server checking old itself.
	r.mu.Lock()
	caps := r.pushCaps
	r.mu.Unlock()
	if caps == nil {
		ar, err := sess.AdvertisedReferencesContext(ctx)
		if err != nil {
			return err
		}
		if cur := ar.References[r.ref.String()]; cur != old {
			r.contact(cur)
			return errRemoteMoved
		}
		caps = ar.Capabilities
		r.mu.Lock()
		r.pushCaps = caps
		r.mu.Unlock()
	}
	req := packp.NewReferenceUpdateRequestFromCapabilities(caps)
	req.Commands = []*packp.Command{{Name: r.ref, Old: old, New: next}}
	var buf bytes.Buffer
	if _, err := packfile.NewEncoder(&buf, g.repo.Storer, false).Encode(objects, 0); err != nil {
		return &errPushRefused{fmt.Errorf("pack the commit: %w", err)}
	}
	req.Packfile = io.NopCloser(&buf)
	rs, err := sess.ReceivePack(ctx, req)
	// The server answered when its status report arrived; go-git returns
	// the report with its error when the report refuses the update.
	reported := rs != nil
	if reported {
		err = rs.Error()
	}
	if err == nil && reported {
		r.contact(next)
		return nil
	}
	// A refusal, a lost answer or no report at all: where the branch is
	// now tells which.
	cur, herr := r.remoteHead(ctx)
	switch {
	case herr != nil && (reported || neverSent(err)):
		return cmp.Or(err, herr) // refused, or never sent
	case herr != nil:
		return &errPushUnknown{cmp.Or(err, herr)}
	case cur == next && !reported:
		return nil // it landed; only its answer was lost
	case cur == next:
		// The server refused this update, yet the branch names the same
		// commit: another replica made the identical change on the same
		// head within the same second. That write is not this one, which
		// is prepared again on it (and a str_replace then finds its text
		// gone), so that two writes are never acknowledged as one.
		return errRemoteMoved
	case cur != old && !reported:
		return errMaybeLanded
	case cur != old:
		return errRemoteMoved
	case err != nil:
		return &errPushRefused{err}
	}
	return &errPushRefused{errors.New("the server did not report the update")}
}

// status returns what the last exchanges learned.
func (r *replica) status() (head plumbing.Hash, known bool, last time.Time, lastErr string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.head, r.known, r.lastContact, r.lastError
}

// ancestry is how two commits relate.
type ancestry int

const (
	relUnknown    ancestry = iota // one of them is not in the repository
	relSame                       // the same commit
	relAncestor                   // the first is an ancestor of the second
	relDescendant                 // the first is a descendant of the second
	relDiverged                   // neither contains the other
)

// relation tells how the commits a and b relate. It walks back from both
// in lockstep, so that its cost is about the distance between them when
// one contains the other, not the length of the history.
func (g *gitRepo) relation(a, b plumbing.Hash) ancestry {
	if a == b {
		return relSame
	}
	for _, h := range []plumbing.Hash{a, b} {
		if _, err := object.GetCommit(g.repo.Storer, h); err != nil {
			return relUnknown
		}
	}
	type walk struct {
		todo   []plumbing.Hash
		seen   map[plumbing.Hash]bool
		target plumbing.Hash
	}
	fromB := &walk{todo: []plumbing.Hash{b}, seen: map[plumbing.Hash]bool{}, target: a} // finds a below b
	fromA := &walk{todo: []plumbing.Hash{a}, seen: map[plumbing.Hash]bool{}, target: b}
	step := func(w *walk) bool {
		if len(w.todo) == 0 {
			return false
		}
		h := w.todo[0]
		w.todo = w.todo[1:]
		if w.seen[h] {
			return false
		}
		w.seen[h] = true
		if h == w.target {
			return true
		}
		if c, err := object.GetCommit(g.repo.Storer, h); err == nil {
			w.todo = append(w.todo, c.ParentHashes...)
		}
		return false
	}
	for len(fromA.todo) > 0 || len(fromB.todo) > 0 {
		if step(fromB) {
			return relAncestor
		}
		if step(fromA) {
			return relDescendant
		}
	}
	return relDiverged
}

// countBetween returns how many commits are reachable from to but not from
// from (from an ancestor of to), or -1 when that cannot be told.
func (g *gitRepo) countBetween(from, to plumbing.Hash) int {
	if from == to {
		return 0
	}
	if g.relation(from, to) != relAncestor {
		return -1
	}
	seen := map[plumbing.Hash]bool{from: true}
	todo := []plumbing.Hash{to}
	n := 0
	for len(todo) > 0 {
		h := todo[len(todo)-1]
		todo = todo[:len(todo)-1]
		if seen[h] {
			continue
		}
		seen[h] = true
		n++
		c, err := object.GetCommit(g.repo.Storer, h)
		if err != nil {
			return -1
		}
		todo = append(todo, c.ParentHashes...)
	}
	return n
}

// newObjects lists the objects of the commit next that its parent's tree
// does not have: the commit, the trees along the changed paths and the
// changed files. The remote holds the parent whole, so these are what a
// push of next must send.
func (g *gitRepo) newObjects(parent, next plumbing.Hash) ([]plumbing.Hash, error) {
	c, err := object.GetCommit(g.repo.Storer, next)
	if err != nil {
		return nil, err
	}
	var oldRoot plumbing.Hash
	if !parent.IsZero() {
		p, err := object.GetCommit(g.repo.Storer, parent)
		if err != nil {
			return nil, err
		}
		oldRoot = p.TreeHash
	}
	out := []plumbing.Hash{next}
	seen := map[plumbing.Hash]bool{}
	var walk func(cur, old plumbing.Hash) error
	walk = func(cur, old plumbing.Hash) error {
		if cur == old || seen[cur] {
			return nil
		}
		seen[cur] = true
		out = append(out, cur)
		t, err := object.GetTree(g.repo.Storer, cur)
		if err != nil {
			return err
		}
		before := map[string]object.TreeEntry{}
		if !old.IsZero() {
			if ot, err := object.GetTree(g.repo.Storer, old); err == nil {
				for _, e := range ot.Entries {
					before[e.Name] = e
				}
			}
		}
		for _, e := range t.Entries {
			b, had := before[e.Name]
			if had && b.Hash == e.Hash {
				continue
			}
			if e.Mode.IsFile() {
				if !seen[e.Hash] {
					seen[e.Hash] = true
					out = append(out, e.Hash)
				}
				continue
			}
			var sub plumbing.Hash
			if had && !b.Mode.IsFile() {
				sub = b.Hash
			}
			if err := walk(e.Hash, sub); err != nil {
				return err
			}
		}
		return nil
	}
	if err := walk(c.TreeHash, oldRoot); err != nil {
		return nil, err
	}
	return out, nil
}

// reachableObjects lists every object reachable from to and not from
// from (zero: everything): what a push of several commits must send.
func (g *gitRepo) reachableObjects(from, to plumbing.Hash) ([]plumbing.Hash, error) {
	var stop []plumbing.Hash
	if !from.IsZero() {
		stop = []plumbing.Hash{from}
	}
	return revlist.Objects(g.repo.Storer, []plumbing.Hash{to}, stop)
}
