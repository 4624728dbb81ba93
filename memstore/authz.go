package memstore

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"maps"
	"path"
	"slices"
	"strings"
	"sync"

	"github.com/go-git/go-git/v5/plumbing"
	"github.com/go-git/go-git/v5/plumbing/object"
	"gopkg.in/yaml.v3"

	"github.com/selmem/selmem/memstore/access"
)

// The store enforces access for every caller: the principal travels in the
// context (access.WithPrincipal), and a context without one is the local
// owner (the command line, the scheduler, stdio). Workspaces' ACLs are read
// from workspace.yaml on the published branch, cached per tree.

// principalOf returns the principal ctx acts for and whether it is
// restricted (not the local owner).
func principalOf(ctx context.Context) (access.Principal, bool) {
	p, ok := access.FromContext(ctx)
	if !ok || p.IsLocal() {
		return p, false
	}
	return p, true
}

// denied wraps an access refusal as a store error: errors.Is(err,
// ErrDenied) and errors.As(err, **access.DeniedError) both hold, and its
// text is the refusal's, which says the role needed.
func denied(err error) error {
	var d *access.DeniedError
	if errors.As(err, &d) {
		return &Error{Kind: ErrDenied, Msg: d.Error(), Err: d}
	}
	return err
}

// aclCache holds workspaces' ACLs: by workspace.yaml blob (which survives
// writes elsewhere) and, for the newest tree asked about, by name. A write
// carries the by-name entries over to its new tree (carry), so that the
// next check does not read the trees again.
type aclCache struct {
	mu     sync.Mutex
	root   plumbing.Hash                // the tree byName and all describe
	byName map[string]wsEntry           // workspace -> what root holds of it
	all    map[string]access.ACL        // every workspace's ACL at root; nil until asked
	stale  map[string]bool              // workspaces of all to look up again
	byBlob map[plumbing.Hash]access.ACL // workspace.yaml blob hash -> ACL
}

// wsEntry is what a tree holds of one workspace.
type wsEntry struct {
	acl    access.ACL
	exists bool // workspaces/<ws> is in the tree
}

// maxACLEntries bounds the per-blob cache; it is cleared when full.
const maxACLEntries = 1 << 14

// at makes root the tree the per-name maps describe.
func (c *aclCache) at(root plumbing.Hash) {
	if c.root == root && c.byName != nil {
		return
	}
	c.root, c.byName, c.all, c.stale = root, map[string]wsEntry{}, nil, nil
	if len(c.byBlob) > maxACLEntries {
		clear(c.byBlob)
	}
}

// carry moves the cache from the tree old to the tree next of a commit
// made of changes, keeping every workspace the changes cannot have altered:
// those whose workspace.yaml, directory and existence they leave alone.
func (c *aclCache) carry(old, next plumbing.Hash, changes []change) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.root != old || c.byName == nil {
		return
	}
	touched := map[string]bool{}
	for _, ch := range changes {
		ws := workspaceOf(ch.Path)
		if ws == "" && (ch.Path == "" || ch.Path == "workspaces" || strings.HasPrefix(ch.Path, "workspaces/")) {
			c.root, c.byName, c.all, c.stale = plumbing.ZeroHash, nil, nil, nil
			return
		}
		if ws != "" && (ch.Delete || ch.Path == "workspaces/"+ws+"/"+access.WorkspaceFile || !c.byName[ws].exists) {
			touched[ws] = true
		}
	}
	for ws := range touched {
		delete(c.byName, ws)
		if c.all != nil {
			if c.stale == nil {
				c.stale = map[string]bool{}
			}
			c.stale[ws] = true
		}
	}
	c.root = next
}

// carryACLs carries the ACL cache over a commit just made (see carry),
// when it describes the commit's parent.
func (s *Store) carryACLs(parent *object.Commit, next plumbing.Hash, changes []change) {
	s.acls.mu.Lock()
	warm := s.acls.root == parent.TreeHash && s.acls.byName != nil
	s.acls.mu.Unlock()
	if !warm {
		return
	}
	if c, err := object.GetCommit(s.git.repo.Storer, next); err == nil {
		s.acls.carry(parent.TreeHash, c.TreeHash, changes)
	}
}

// workspaceAt returns what the tree root holds of workspace ws. It runs
// under s.acls.mu.
func (s *Store) workspaceAt(root plumbing.Hash, ws string) (wsEntry, error) {
	c := &s.acls
	c.at(root)
	if e, ok := c.byName[ws]; ok {
		return e, nil
	}
	w := treeWalker{store: s.git.repo.Storer, trees: map[plumbing.Hash][]byte{}}
	wsTree, err := w.entryAt(root, []string{"workspaces", ws})
	if err != nil {
		return wsEntry{}, err
	}
	acl, err := s.aclOfSubtree(&w, ws, wsTree)
	if err != nil {
		return wsEntry{}, err
	}
	e := wsEntry{acl: acl, exists: !wsTree.IsZero()}
	c.byName[ws] = e
	return e, nil
}

// workspaceSource returns what the tree root holds of each workspace,
// cached.
func (s *Store) workspaceSource(root plumbing.Hash) func(ws string) (wsEntry, error) {
	return func(ws string) (wsEntry, error) {
		s.acls.mu.Lock()
		defer s.acls.mu.Unlock()
		return s.workspaceAt(root, ws)
	}
}

// aclAt returns the ACL source of the tree root: the acl: of
// workspaces/<ws>/workspace.yaml in it. A workspace without the file, or
// absent, has the empty ACL; a malformed file grants nothing either (only
// org admins and the local owner have a role there) and is logged.
func (s *Store) aclAt(root plumbing.Hash) access.ACLSource {
	src := s.workspaceSource(root)
	return func(ws string) (access.ACL, error) {
		e, err := src(ws)
		return e.acl, err
	}
}

// aclSource returns the ACL source of tree; see aclAt.
func (s *Store) aclSource(tree *object.Tree) access.ACLSource { return s.aclAt(tree.Hash) }

// aclOfSubtree reads the ACL of workspace ws whose directory is the tree
// sub (zero when absent). ACLs are cached by the blob of workspace.yaml,
// which a write elsewhere in the workspace does not change. It runs under
// s.acls.mu.
func (s *Store) aclOfSubtree(w *treeWalker, ws string, sub plumbing.Hash) (access.ACL, error) {
	if sub.IsZero() {
		return access.ACL{}, nil
	}
	blob, err := w.entry(sub, access.WorkspaceFile)
	if err != nil || blob.IsZero() {
		return access.ACL{}, err
	}
	if acl, ok := s.acls.byBlob[blob]; ok {
		return acl, nil
	}
	content, err := s.git.blob(blob)
	if err != nil {
		return access.ACL{}, err
	}
	acl, err := access.ParseACL(content)
	if err != nil {
		s.log.Warn("workspace.yaml is malformed: only org admins have a role in the workspace",
			"workspace", ws, logKeyErr, err)
		acl = access.ACL{}
	}
	if s.acls.byBlob == nil {
		s.acls.byBlob = map[plumbing.Hash]access.ACL{}
	}
	s.acls.byBlob[blob] = acl
	return acl, nil
}

// allACLs returns every workspace's ACL in the tree root. The map is
// shared: callers must not change it.
func (s *Store) allACLs(root plumbing.Hash) (map[string]access.ACL, error) {
	c := &s.acls
	c.mu.Lock()
	defer c.mu.Unlock()
	c.at(root)
	if c.all != nil {
		if len(c.stale) > 0 {
			// Callers hold earlier maps outside the lock: never change one.
			c.all = maps.Clone(c.all)
		}
		for ws := range c.stale {
			e, err := s.workspaceAt(root, ws)
			if err != nil {
				return nil, err
			}
			if e.exists {
				c.all[ws] = e.acl
			} else {
				delete(c.all, ws)
			}
		}
		c.stale = nil
		return c.all, nil
	}
	w := treeWalker{store: s.git.repo.Storer, trees: map[plumbing.Hash][]byte{}}
	wsDir, err := w.entryAt(root, []string{"workspaces"})
	if err != nil {
		return nil, err
	}
	all := map[string]access.ACL{}
	if !wsDir.IsZero() {
		raw, err := w.tree(wsDir)
		if err != nil {
			return nil, err
		}
		err = eachEntry(wsDir, raw, func(name string, dir bool, h plumbing.Hash) error {
			if !dir {
				return nil
			}
			acl, err := s.aclOfSubtree(&w, name, h)
			all[name] = acl
			c.byName[name] = wsEntry{acl: acl, exists: true}
			return err
		})
		if err != nil {
			return nil, err
		}
	}
	c.all = all
	return all, nil
}

// readRaw returns the raw content of the object h of type t (for a tree,
// its entries undecoded).
func readRaw(st interface {
	EncodedObject(plumbing.ObjectType, plumbing.Hash) (plumbing.EncodedObject, error)
}, t plumbing.ObjectType, h plumbing.Hash) ([]byte, error) {
	o, err := st.EncodedObject(t, h)
	if err != nil {
		return nil, err
	}
	r, err := o.Reader()
	if err != nil {
		return nil, err
	}
	defer r.Close()
	return io.ReadAll(r)
}

// headRoot returns the tree hash of the published branch's commit, without
// decoding the tree.
func (s *Store) headRoot() (plumbing.Hash, error) {
	c, err := s.git.headCommit()
	if err != nil {
		return plumbing.ZeroHash, err
	}
	return c.TreeHash, nil
}

// ReadableFilter returns what the principal in ctx may read, in the form
// the index backends apply inside their queries: everything for the local
// owner, else the workspaces the principal has a role in at the published
// branch's head, the principal's own user directory, and org/.
func (s *Store) ReadableFilter(ctx context.Context) (access.Filter, error) {
	p, restricted := principalOf(ctx)
	if !restricted {
		return access.Filter{All: true}, nil
	}
	root, err := s.headRoot()
	if err != nil {
		return access.Filter{}, err
	}
	all, err := s.allACLs(root)
	if err != nil {
		return access.Filter{}, err
	}
	return s.opts.Policy.Readable(p, all), nil
}

// Check reports whether the principal in ctx may do act on the virtual
// path p under the ACLs at the published branch's head: nil, or an
// ErrDenied error wrapping the *access.DeniedError that says the role
// needed. It is for callers that serve memory content without reading it
// through the store (resources, notifications, artifacts) or before costly
// work; every Store method checks for itself. For any action but ActRead,
// a workspace that does not exist yet counts as the person's own (writing
// into it creates it).
func (s *Store) Check(ctx context.Context, act access.Action, p string) error {
	pr, restricted := principalOf(ctx)
	if !restricted {
		return nil
	}
	rel, err := gatePath(p, s.opts.Limits)
	if err != nil {
		return err
	}
	root, err := s.headRoot()
	if err != nil {
		return err
	}
	src := s.aclAt(root)
	if act != access.ActRead {
		src = s.prospective(pr, root)
	}
	return denied(s.opts.Policy.Check(pr, act, virtual(rel), src))
}

// authorize decides, for the principal in ctx, whether it may do act on
// every one of the repository-relative paths rels, under the ACLs of the
// tree root. It returns the principal and, for a restricted one, the ACL
// source used (for filtering listings); refusals are ErrDenied errors
// wrapping an *access.DeniedError. The local owner is never refused and
// costs nothing.
func (s *Store) authorize(ctx context.Context, root plumbing.Hash, act access.Action, rels ...string) (access.Principal, access.ACLSource, error) {
	p, restricted := principalOf(ctx)
	if !restricted {
		return p, nil, nil
	}
	src := s.aclAt(root)
	for _, rel := range rels {
		if err := s.opts.Policy.Check(p, act, virtual(rel), src); err != nil {
			return p, nil, denied(err)
		}
	}
	return p, src, nil
}

// authorizeRead is authorize for a read at the published branch's head.
func (s *Store) authorizeRead(ctx context.Context, rels ...string) (access.Principal, access.ACLSource, error) {
	if _, restricted := principalOf(ctx); !restricted {
		return authorizeLocal(ctx)
	}
	root, err := s.headRoot()
	if err != nil {
		return access.Principal{}, nil, err
	}
	return s.authorize(ctx, root, access.ActRead, rels...)
}

func authorizeLocal(ctx context.Context) (access.Principal, access.ACLSource, error) {
	p, _ := access.FromContext(ctx)
	return p, nil, nil
}

// visibleFunc returns whether a listing shows the repository-relative path
// rel to p; nil (everything) for the local owner.
func (s *Store) visibleFunc(p access.Principal, src access.ACLSource) func(rel string) bool {
	if src == nil {
		return nil
	}
	return func(rel string) bool { return s.opts.Policy.Visible(p, virtual(rel), src) }
}

// prospective is the ACL source for a write by p at the tree root: a
// workspace that does not exist yet has p as its owner when p is a person
// (creating it makes them its owner); every other is as the tree says.
func (s *Store) prospective(p access.Principal, root plumbing.Hash) access.ACLSource {
	src := s.workspaceSource(root)
	return func(ws string) (access.ACL, error) {
		e, err := src(ws)
		if err == nil && !e.exists && p.Kind == access.KindPerson {
			return access.ACL{Owners: []string{p.User}}, nil
		}
		return e.acl, err
	}
}

// mayTouch is the check a write makes before it looks at what its paths
// hold: a principal who may not even read a path is refused there, with
// the role a write needs, so that no later message tells them whether the
// path exists. A principal who may read but not write passes; the write's
// own check (authorizeWrite) refuses it, or routes it elsewhere.
func (s *Store) mayTouch(ctx context.Context, tree *object.Tree, rels ...string) error {
	p, restricted := principalOf(ctx)
	if !restricted {
		return nil
	}
	src := s.prospective(p, tree.Hash)
	for _, rel := range rels {
		vp := virtual(rel)
		werr := s.opts.Policy.Check(p, access.ActWrite, vp, src)
		if werr == nil {
			continue
		}
		if s.opts.Policy.Check(p, access.ActRead, vp, src) != nil {
			return denied(werr)
		}
	}
	return nil
}

// mayMaintain refuses maintenance of the whole memory (reindexing) to a
// principal who is neither the local owner nor an org admin.
func (s *Store) mayMaintain(ctx context.Context) error {
	_, _, err := s.authorize(ctx, plumbing.ZeroHash, access.ActWrite, "")
	return err
}

// errServiceConfirmed refuses a service principal's claim of user_confirmed.
var errServiceConfirmed = &Error{Kind: ErrInvalid,
	Msg:  "Error: a service token cannot vouch for content as a user: source user_confirmed is refused.",
	Hint: "Use source trusted_tool_result or inferred; nothing was written."}

// authorizeWrite is the one permission check of every write, made in write
// on the changes about to be committed, under the store's lock. For the
// principal in ctx it checks:
//   - a service principal does not claim user_confirmed;
//   - every changed path may be written (steward or more in a workspace, the
//     user's own directory, org/ for admins);
//   - deleting a workspace's directory needs its owner;
//   - a change of the acl: of a workspace.yaml (writing, deleting or
//     renaming it) needs its owner, and a workspace.yaml must parse;
//   - a person who writes into a workspace that does not exist yet creates
//     it and becomes its owner: the same commit writes its workspace.yaml
//     with acl: {owners: [user]}, or, when they write workspace.yaml
//     themselves, it must name them among the owners.
//
// It returns the principal, the changes to commit (with a new workspace's
// workspace.yaml added) and the WriteOptions to record (the author is the
// principal). Refusals are ErrDenied errors wrapping *access.DeniedError,
// or ErrInvalid.
func (s *Store) authorizeWrite(ctx context.Context, tree *object.Tree, changes []change, w *WriteOptions) (access.Principal, []change, *WriteOptions, error) {
	p, restricted := principalOf(ctx)
	if !restricted {
		return p, changes, w, nil
	}
	if p.Kind == access.KindService && w != nil && w.Source == SourceUserConfirmed {
		return p, nil, nil, errServiceConfirmed
	}
	pol := s.opts.Policy
	exists := s.workspaceSource(tree.Hash)
	src := s.prospective(p, tree.Hash)
	touched := map[string]bool{} // workspaces whose workspace.yaml may change
	for _, c := range changes {
		vp := virtual(c.Path)
		if err := pol.Check(p, access.ActWrite, vp, src); err != nil {
			return p, nil, nil, denied(err)
		}
		a := access.Classify(vp)
		if a.Kind != access.AreaWorkspace {
			continue
		}
		if !c.Delete && a.Rest == "" {
			// A file beside the workspaces would be a workspace of no ACL
			// that no role could read or remove.
			return p, nil, nil, &Error{Kind: ErrInvalid,
				Msg:  fmt.Sprintf("Error: %s would be a file among the workspaces; a workspace is a directory.", vp),
				Hint: "Write inside a workspace: " + Root + "/workspaces/<workspace>/<file>. Nothing was written."}
		}
		if c.Delete && a.Rest == "" {
			if err := pol.Check(p, access.ActDeleteWorkspace, vp, src); err != nil {
				return p, nil, nil, denied(err)
			}
		}
		if a.Rest == "" || a.Rest == access.WorkspaceFile {
			touched[a.Workspace] = true
		}
	}
	var added []change
	for _, ws := range sortedKeys(touched) {
		yamlRel := "workspaces/" + ws + "/" + access.WorkspaceFile
		content, present := resulting(tree, changes, yamlRel)
		var next access.ACL
		if present {
			var err error
			if next, err = access.ParseACL(content); err != nil {
				return p, nil, nil, &Error{Kind: ErrInvalid,
					Msg:  fmt.Sprintf("Error: %s does not parse: %v.", virtual(yamlRel), err),
					Hint: "Fix the YAML; a broken workspace.yaml would leave only org admins with a role. Nothing was written."}
			}
		}
		cur, err := exists(ws)
		if err != nil {
			return p, nil, nil, err
		}
		old, created := cur.acl, !cur.exists
		if created && present && p.Kind == access.KindPerson && !pol.IsAdmin(p) && next.RoleOf(p) != access.RoleOwner {
			return p, nil, nil, &Error{Kind: ErrInvalid,
				Msg:  fmt.Sprintf("Error: workspace %s does not exist yet; the workspace.yaml that creates it must name you (%s) among its owners.", ws, p.User),
				Hint: "Add yourself to acl.owners. Nothing was written."}
		}
		if !old.Equal(next) {
			if err := pol.Check(p, access.ActSetACL, virtual(yamlRel), src); err != nil {
				return p, nil, nil, denied(err)
			}
		}
	}
	created, err := createdWorkspaces(exists, changes)
	if err != nil {
		return p, nil, nil, err
	}
	for _, ws := range created {
		if p.Kind != access.KindPerson || touched[ws] {
			continue
		}
		content, err := ownerYAML(p.User)
		if err != nil {
			return p, nil, nil, err
		}
		added = append(added, change{Path: "workspaces/" + ws + "/" + access.WorkspaceFile, Content: content})
	}
	var wo WriteOptions
	if w != nil {
		wo = *w
	}
	wo.Author = p.User
	if err := validateWrite(&wo); err != nil {
		return p, nil, nil, err
	}
	return p, append(slices.Clip(changes), added...), &wo, nil
}

// createdWorkspaces returns, sorted, the workspaces absent from the tree
// (as exists says) that changes write files into.
func createdWorkspaces(exists func(string) (wsEntry, error), changes []change) ([]string, error) {
	set := map[string]bool{}
	for _, c := range changes {
		ws := workspaceOf(c.Path)
		if ws == "" || c.Delete {
			continue
		}
		e, err := exists(ws)
		if err != nil {
			return nil, err
		}
		if !e.exists {
			set[ws] = true
		}
	}
	return sortedKeys(set), nil
}

func sortedKeys(m map[string]bool) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	slices.Sort(out)
	return out
}

// resulting returns the content of the file rel after changes are applied
// to tree, and whether it exists then.
func resulting(tree *object.Tree, changes []change, rel string) ([]byte, bool) {
	content, present, err := readFile(tree, rel)
	if err != nil {
		present = false
	}
	for _, c := range changes {
		switch {
		case c.Path == rel && !c.Delete:
			content, present = c.Content, true
		case c.Delete && (c.Path == rel || strings.HasPrefix(rel, c.Path+"/")):
			content, present = nil, false
		}
	}
	return content, present
}

// ownerYAML is the workspace.yaml of a workspace that user creates.
func ownerYAML(user string) ([]byte, error) {
	var b bytes.Buffer
	enc := yaml.NewEncoder(&b)
	enc.SetIndent(2)
	err := enc.Encode(map[string]access.ACL{"acl": {Owners: []string{user}}})
	if err == nil {
		err = enc.Close()
	}
	return b.Bytes(), err
}

// entryAt returns the hash of the entry at parts below the tree root (zero
// when absent).
func (w *treeWalker) entryAt(root plumbing.Hash, parts []string) (plumbing.Hash, error) {
	h := root
	for _, name := range parts {
		var err error
		if h, err = w.entry(h, name); err != nil || h.IsZero() {
			return plumbing.ZeroHash, err
		}
	}
	return h, nil
}

// eachEntry calls fn for each entry of the raw tree h: its name, whether it
// is a directory, and its hash.
func eachEntry(h plumbing.Hash, raw []byte, fn func(name string, dir bool, hash plumbing.Hash) error) error {
	// Each entry is "<mode> <name>\x00" followed by a 20-byte hash.
	for len(raw) > 0 {
		sp := bytes.IndexByte(raw, ' ')
		nul := bytes.IndexByte(raw, 0)
		if sp < 0 || nul < sp || len(raw) < nul+1+20 {
			return fmt.Errorf("tree %s: malformed entry", h)
		}
		var out plumbing.Hash
		copy(out[:], raw[nul+1:nul+21])
		if err := fn(string(raw[sp+1:nul]), string(raw[:sp]) == "40000", out); err != nil {
			return err
		}
		raw = raw[nul+21:]
	}
	return nil
}

// changedPaths appends to out the repository-relative paths of the files
// that differ between the trees a and b (either may be zero), both rooted at
// dir.
func (w *treeWalker) changedPaths(a, b plumbing.Hash, dir string, out *[]string) error {
	if a == b {
		return nil
	}
	type side struct {
		hash plumbing.Hash
		dir  bool
	}
	entries := func(h plumbing.Hash) (map[string]side, error) {
		m := map[string]side{}
		if h.IsZero() {
			return m, nil
		}
		raw, err := w.tree(h)
		if err != nil {
			return nil, err
		}
		return m, eachEntry(h, raw, func(name string, d bool, x plumbing.Hash) error {
			m[name] = side{x, d}
			return nil
		})
	}
	ea, err := entries(a)
	if err != nil {
		return err
	}
	eb, err := entries(b)
	if err != nil {
		return err
	}
	names := map[string]bool{}
	for n := range ea {
		names[n] = true
	}
	for n := range eb {
		names[n] = true
	}
	for _, n := range sortedKeys(names) {
		x, y := ea[n], eb[n]
		if x == y {
			continue
		}
		p := path.Join(dir, n)
		var sa, sb plumbing.Hash
		if x.dir {
			sa = x.hash
		}
		if y.dir {
			sb = y.hash
		}
		if (!x.dir && !x.hash.IsZero()) || (!y.dir && !y.hash.IsZero()) {
			*out = append(*out, p)
		}
		if !sa.IsZero() || !sb.IsZero() {
			if err := w.changedPaths(sa, sb, p, out); err != nil {
				return err
			}
		}
	}
	return nil
}
