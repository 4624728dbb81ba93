package memstore

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"strings"
	"testing/fstest"

	"github.com/go-git/go-git/v5/plumbing"
	"github.com/go-git/go-git/v5/plumbing/object"

	"github.com/selmem/selmem/memstore/access"
	"github.com/selmem/selmem/memstore/gate"
)

// A draft is a principal's private branch of one workspace,
// refs/drafts/<user>/<workspace>. Its commits hold the whole memory's tree:
// the published tree at some point with the draft's changes. Beside the
// draft's tree (D) the store keeps a base tree (B), the published version
// each changed file was edited from: a file is changed in the draft when D
// and B differ on it. The first time the draft changes a file, B takes that
// file's published version, so what others published earlier is never
// mistaken for a conflict; a publish is then a three-way merge of B, D and
// the published tree, file by file.
//
// A draft's first commit is the published commit it was opened at (B = D).
// Every later draft commit carries the trailers Draft: <workspace> and
// Draft-base: <commit whose tree is B>; a new base commit (whose parent is
// the published commit of the time) is also a parent of the draft commit
// that introduces it, so git keeps every object a draft needs.

const (
	draftsPrefix     = "refs/drafts/"
	trailerDraft     = "Draft"
	trailerDraftBase = "Draft-base"
)

// draftRef is the ref of user's draft of workspace ws.
func draftRef(user, ws string) plumbing.ReferenceName {
	return plumbing.ReferenceName(draftsPrefix + user + "/" + ws)
}

// draftState is an open draft.
type draftState struct {
	ref       plumbing.ReferenceName
	user, ws  string
	tip, base *object.Commit
}

// trailerOf returns the value of the trailer key in c's message.
func trailerOf(c *object.Commit, key string) string { return commitInfo(c).Trailers[key] }

// loadDraft returns user's open draft of ws; nil when there is none.
func (s *Store) loadDraft(user, ws string) (*draftState, error) {
	if checkRefPart("user", user) != nil || checkRefPart("workspace", ws) != nil {
		return nil, nil // no draft can be named so
	}
	ref := draftRef(user, ws)
	h, err := s.git.readNamedRef(ref)
	if errors.Is(err, errRefMissing) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	tip, err := object.GetCommit(s.git.repo.Storer, h)
	if err != nil {
		return nil, fmt.Errorf("read %s: %w", ref, err)
	}
	d := &draftState{ref: ref, user: user, ws: ws, tip: tip, base: tip}
	if b := trailerOf(tip, trailerDraftBase); plumbing.IsHash(b) {
		if d.base, err = object.GetCommit(s.git.repo.Storer, plumbing.NewHash(b)); err != nil {
			return nil, fmt.Errorf("read the base of %s: %w", ref, err)
		}
	}
	return d, nil
}

// changes returns the files the draft changes.
func (d *draftState) changes() (map[string]fileDiff, error) {
	bt, err := d.base.Tree()
	if err != nil {
		return nil, err
	}
	dt, err := d.tip.Tree()
	if err != nil {
		return nil, err
	}
	return changedFiles(bt, dt, "workspaces/"+d.ws)
}

// draftViewCommit returns an in-memory commit (never a ref's) whose tree is
// the published commit head with the draft's changes: what the draft's
// owner reads and edits. It writes tree objects; it runs under the store's
// lock.
func (s *Store) draftViewCommit(head *object.Commit, d *draftState) (*object.Commit, error) {
	diffs, err := d.changes()
	if err != nil {
		return nil, err
	}
	root := head.TreeHash
	edits := &treeEdit{}
	for _, p := range sortedPaths(diffs) {
		edits.add(strings.Split(p, "/"), regularEntry(diffs[p].theirs))
	}
	if !edits.empty() {
		if root, err = s.git.writeEdits(root, edits); err != nil {
			return nil, err
		}
	}
	if root.IsZero() {
		if root, err = s.git.writeTree(nil); err != nil {
			return nil, err
		}
	}
	c := &object.Commit{Author: head.Author, Committer: head.Committer, Message: "draft view\n",
		TreeHash: root, ParentHashes: []plumbing.Hash{head.Hash}}
	obj := &plumbing.MemoryObject{}
	if err := c.Encode(obj); err != nil {
		return nil, err
	}
	return object.DecodeCommit(s.git.repo.Storer, obj)
}

// authored returns w with the principal in ctx as its author when w names
// none.
func (s *Store) authored(ctx context.Context, w *WriteOptions) *WriteOptions {
	out := WriteOptions{}
	if w != nil {
		out = *w
	}
	if out.Author == "" {
		out.Author = s.principal(ctx).User
	}
	return &out
}

// writeDraft commits changes, made on the draft view head, onto the open
// draft d.
func (s *Store) writeDraft(ctx context.Context, d destination, head *object.Commit, changes []change, subject, tool string, w *WriteOptions) (string, error) {
	main, err := s.git.headCommit()
	if err != nil {
		return "", err
	}
	if _, err := s.checkChanges(ctx, head, main.Hash, changes); err != nil {
		return "", err
	}
	view, err := head.Tree()
	if err != nil {
		return "", err
	}
	mainTree, err := main.Tree()
	if err != nil {
		return "", err
	}
	draft := d.draft
	diffs, err := draft.changes()
	if err != nil {
		return "", err
	}
	// Files this write changes for the first time in the draft are based
	// on their published version.
	baseRoot := draft.base.TreeHash
	baseEdits := &treeEdit{}
	for _, c := range changes {
		files := []string{c.Path}
		if c.Delete {
			if below, err := filesBelow(view, c.Path); err == nil && len(below) > 0 {
				files = sortedPaths(below)
			}
		}
		for _, f := range files {
			if _, ok := diffs[f]; ok {
				continue
			}
			m, err := fileHash(mainTree, f)
			if err != nil {
				return "", err
			}
			baseEdits.add(strings.Split(f, "/"), regularEntry(m))
		}
	}
	if !baseEdits.empty() {
		if baseRoot, err = s.git.writeEdits(baseRoot, baseEdits); err != nil {
			return "", err
		}
	}
	base := draft.base.Hash
	var parents = []plumbing.Hash{draft.tip.Hash}
	if baseRoot != draft.base.TreeHash {
		if base, err = s.git.commitTree(baseRoot, []plumbing.Hash{main.Hash}, s.meta("draft base of "+d.ws, nil, nil)); err != nil {
			return "", err
		}
		parents = append(parents, base)
	}
	root, err := s.git.applyChanges(draft.tip.TreeHash, changes)
	if err != nil {
		return "", err
	}
	next, err := s.commitDraft(ctx, draft, root, base, parents, subject, &tool, w)
	if err != nil {
		return "", err
	}
	s.routed = &routedWrite{kind: toDraft, ws: d.ws}
	return next.String(), nil
}

// commitDraft writes a draft commit of the tree root based on base and
// moves the draft's ref to it.
func (s *Store) commitDraft(ctx context.Context, draft *draftState, root, base plumbing.Hash, parents []plumbing.Hash, subject string, tool *string, w *WriteOptions) (plumbing.Hash, error) {
	meta := s.meta(subject, tool, s.authored(ctx, w))
	meta.Trailers = append(meta.Trailers, trailer{trailerDraft, draft.ws}, trailer{trailerDraftBase, base.String()})
	next, err := s.git.commitTree(root, parents, meta)
	if err == nil {
		err = s.moveRef(draft.ref, draft.tip.Hash, next, meta)
	}
	if err != nil {
		s.git.dropObjects()
		return plumbing.ZeroHash, err
	}
	return next, nil
}

// Draft is an open draft.
type Draft struct {
	User      string
	Workspace string
	Commit    string   // the draft's newest commit
	Files     []string // virtual paths the draft adds, changes or deletes
}

// draftDenied is the error for a principal who may not draft or publish.
func draftDenied(p access.Principal, ws, action string, have access.Role) error {
	d := &access.DeniedError{Principal: p.String(), Path: virtual("workspaces/" + ws), Action: action, Need: "a steward of workspace " + ws, Have: have}
	return &Error{Kind: ErrDenied, Msg: d.Error(), Hint: "A viewer's writes become proposals for an owner to approve.", Err: d}
}

// needRole checks, under the store's lock, that the principal in ctx has at
// least role need in ws on the published branch.
func (s *Store) needRole(ctx context.Context, ws, action string, need access.Role) (access.Principal, error) {
	p := s.principal(ctx)
	if err := checkRefPart("workspace", ws); err != nil {
		return p, err
	}
	if err := checkRefPart("user", p.User); err != nil {
		return p, err
	}
	tree, err := s.git.headTree()
	if err != nil {
		return p, err
	}
	role, err := s.roleIn(p, tree, ws)
	if err != nil {
		return p, err
	}
	if role < need {
		if need == access.RoleSteward {
			return p, draftDenied(p, ws, action, role)
		}
		article := "a "
		if need == access.RoleOwner {
			article = "an "
		}
		d := &access.DeniedError{Principal: p.String(), Path: virtual("workspaces/" + ws), Action: action, Need: article + need.String() + " of workspace " + ws, Have: role}
		return p, &Error{Kind: ErrDenied, Msg: d.Error(), Err: d}
	}
	return p, nil
}

// OpenDraft opens the principal's draft of workspace ws at the published
// commit: from then on their writes to ws go to the draft, and their reads
// of ws see it over the published workspace; nobody else sees it. It needs
// the steward role. Opening a draft that is open already marks it as based
// on the current published version: at publish, the draft's version of each
// file it changes wins over what was published meanwhile (how a conflict
// is resolved after merging the versions by hand).
func (s *Store) OpenDraft(ctx context.Context, ws string) (WriteResult, error) {
	return s.lockedWrite(ctx, func() (WriteResult, error) {
		p, err := s.needRole(ctx, ws, "open a draft of", access.RoleSteward)
		if err != nil {
			return WriteResult{}, err
		}
		main, err := s.git.headCommit()
		if err != nil {
			return WriteResult{}, err
		}
		d, err := s.loadDraft(p.User, ws)
		if err != nil {
			return WriteResult{}, err
		}
		if d != nil {
			return s.rebaseDraft(ctx, d, main)
		}
		ref := draftRef(p.User, ws)
		if err := s.moveRef(ref, plumbing.ZeroHash, main.Hash, s.meta("open draft of "+ws, nil, s.authored(ctx, nil))); err != nil {
			return WriteResult{}, err
		}
		return WriteResult{Commit: main.Hash.String(), Pending: "draft", Message: fmt.Sprintf(
			"Opened your draft of workspace %s: your writes to it now go to the draft, which only you see, until memory_publish or memory_draft_discard.", ws)}, nil
	})
}

// rebaseDraft makes every file the draft changes count as based on its
// current published version.
func (s *Store) rebaseDraft(ctx context.Context, d *draftState, main *object.Commit) (WriteResult, error) {
	diffs, err := d.changes()
	if err != nil {
		return WriteResult{}, err
	}
	mainTree, err := main.Tree()
	if err != nil {
		return WriteResult{}, err
	}
	root := d.base.TreeHash
	edits := &treeEdit{}
	var moved []string
	for _, p := range sortedPaths(diffs) {
		m, err := fileHash(mainTree, p)
		if err != nil {
			return WriteResult{}, err
		}
		if m == diffs[p].base {
			continue
		}
		moved = append(moved, virtual(p))
		edits.add(strings.Split(p, "/"), regularEntry(m))
	}
	if len(moved) == 0 {
		return WriteResult{Commit: d.tip.Hash.String(), Pending: "draft",
			Message: fmt.Sprintf("Your draft of workspace %s is already open and nothing it changes was published meanwhile.", d.ws)}, nil
	}
	if root, err = s.git.writeEdits(root, edits); err != nil {
		return WriteResult{}, err
	}
	base, err := s.git.commitTree(root, []plumbing.Hash{main.Hash}, s.meta("draft base of "+d.ws, nil, nil))
	if err != nil {
		return WriteResult{}, err
	}
	next, err := s.commitDraft(ctx, d, d.tip.TreeHash, base, []plumbing.Hash{d.tip.Hash, base}, "rebase draft of "+d.ws, nil, nil)
	if err != nil {
		return WriteResult{}, err
	}
	return WriteResult{Commit: next.String(), Pending: "draft", Message: fmt.Sprintf(
		"Your draft of workspace %s is already open; it now counts as based on the published versions of %s: at memory_publish your versions replace them.",
		d.ws, strings.Join(moved, ", "))}, nil
}

// checkACLChange refuses to publish a draft that changes the workspace's
// ACL unless p owns the workspace: the steward who may publish may not
// change who has which role.
func (s *Store) checkACLChange(p access.Principal, ws string, diffs map[string]fileDiff) error {
	rel := "workspaces/" + ws + "/" + access.WorkspaceFile
	d, ok := diffs[rel]
	if !ok {
		return nil
	}
	tree, err := s.git.headTree()
	if err != nil {
		return err
	}
	if role, err := s.roleIn(p, tree, ws); err != nil || role == access.RoleOwner {
		return err
	}
	acl := func(h plumbing.Hash) (access.ACL, error) {
		if h.IsZero() {
			return access.ACL{}, nil
		}
		content, err := s.git.blob(h)
		if err != nil {
			return access.ACL{}, err
		}
		return access.ParseACL(content)
	}
	published, err := acl(d.base)
	if err != nil {
		return nil // a broken base ACL: the merge decides
	}
	drafted, err := acl(d.theirs)
	if err == nil && drafted.Equal(published) {
		return nil
	}
	denied := &access.DeniedError{Principal: p.String(), Path: virtual(rel), Action: "change the ACL in", Need: "an owner of workspace " + workspaceOf(rel), Have: access.RoleSteward}
	return &Error{Kind: ErrDenied, Msg: denied.Error(),
		Hint: "Restore the acl: of workspace.yaml in your draft, or ask an owner to change it.", Err: denied}
}

// existingDraft returns user's open draft of ws and its changes, or an
// error saying there is none.
func (s *Store) existingDraft(user, ws string) (*draftState, map[string]fileDiff, error) {
	d, err := s.loadDraft(user, ws)
	if err != nil {
		return nil, nil, err
	}
	if d == nil {
		return nil, nil, noDraft(ws)
	}
	diffs, err := d.changes()
	return d, diffs, err
}

// noDraft is the error for a principal with no open draft of ws.
func noDraft(ws string) error {
	return &Error{Kind: ErrNotFound, Msg: "Error: you have no open draft of workspace " + ws + ".",
		Hint: "memory_draft_open starts one."}
}

// Publish merges the principal's draft of ws onto the published branch as
// one commit authored by them, three ways, file by file, and closes the
// draft. A file changed differently on both sides since the draft began is
// a conflict: then nothing changes and the error (a *ConflictError inside
// an ErrConflict) holds each conflicting file with both versions. It needs
// the steward role.
func (s *Store) Publish(ctx context.Context, ws, message string) (WriteResult, error) {
	return s.lockedWrite(ctx, func() (WriteResult, error) {
		p, err := s.needRole(ctx, ws, "publish to", access.RoleSteward)
		if err != nil {
			return WriteResult{}, err
		}
		d, diffs, err := s.existingDraft(p.User, ws)
		if err != nil {
			return WriteResult{}, err
		}
		if err := s.checkACLChange(p, ws, diffs); err != nil {
			return WriteResult{}, err
		}
		subject := "publish " + ws
		if m := strings.Join(strings.Fields(message), " "); m != "" {
			// The message becomes the commit's subject: no secret there.
			if err := gate.Text("message", m); err != nil {
				return WriteResult{}, rejected(err)
			}
			subject += ": " + m
		}
		tool := "memory_publish"
		res, err := s.mergeOnto(ctx, diffs, "your draft of workspace "+ws,
			"Merge each file's two versions into your draft (your writes still go there), then call memory_draft_open to mark them resolved and memory_publish again; or memory_draft_discard.",
			subject, &WriteOptions{Tool: tool, Author: s.authored(ctx, nil).Author})
		if err != nil {
			return WriteResult{}, err
		}
		if err := s.dropRef(d.ref, d.tip.Hash); err != nil {
			s.log.Warn("close the published draft", "ref", d.ref.String(), logKeyErr, err)
		}
		if res.Commit == "" {
			res.Message = fmt.Sprintf("Nothing to publish: the published workspace %s already holds your draft; the draft is closed.", ws)
		} else {
			res.Message = fmt.Sprintf("Published %s of workspace %s as commit %s; the draft is closed.", res.Message, ws, res.Commit[:12])
		}
		return res, nil
	})
}

// mergeOnto merges diffs onto the published branch as one commit with
// subject and w, or refuses with a conflict error naming what (see merge).
// res.Message is the number of files written; res.Commit is empty when the
// published branch already holds every change.
func (s *Store) mergeOnto(ctx context.Context, diffs map[string]fileDiff, what, hint, subject string, w *WriteOptions) (WriteResult, error) {
	main, err := s.git.headCommit()
	if err != nil {
		return WriteResult{}, err
	}
	mainTree, err := main.Tree()
	if err != nil {
		return WriteResult{}, err
	}
	changes, conflicts, err := s.merge(mainTree, diffs)
	if err != nil {
		return WriteResult{}, err
	}
	if len(conflicts) > 0 {
		return WriteResult{}, conflictError(what, conflicts, hint)
	}
	if len(changes) == 0 {
		return WriteResult{}, nil
	}
	commit, err := s.writeMain(ctx, main, changes, subject, w.Tool, w)
	if err != nil {
		return WriteResult{}, err
	}
	return WriteResult{Commit: commit, Message: fmt.Sprintf("%d file(s)", len(changes))}, nil
}

// DiscardDraft deletes the principal's draft of ws; the published workspace
// is unchanged.
func (s *Store) DiscardDraft(ctx context.Context, ws string) (WriteResult, error) {
	return s.lockedWrite(ctx, func() (WriteResult, error) {
		p, err := s.needRole(ctx, ws, "discard a draft of", access.RoleSteward)
		if err != nil {
			return WriteResult{}, err
		}
		d, diffs, err := s.existingDraft(p.User, ws)
		if err != nil {
			return WriteResult{}, err
		}
		if err := s.dropRef(d.ref, d.tip.Hash); err != nil {
			return WriteResult{}, err
		}
		return WriteResult{Message: fmt.Sprintf("Discarded your draft of workspace %s (%d changed file(s)); the published workspace is unchanged.", ws, len(diffs))}, nil
	})
}

// Drafts lists the open drafts the principal in ctx may see: their own;
// every draft for the local principal and org admins.
func (s *Store) Drafts(ctx context.Context) ([]Draft, error) {
	p := s.principal(ctx)
	refs, err := s.git.listRefs(draftsPrefix)
	if err != nil {
		return nil, err
	}
	var out []Draft
	for _, name := range sortedRefs(refs) {
		user, ws, ok := strings.Cut(strings.TrimPrefix(name.String(), draftsPrefix), "/")
		if !ok || (user != p.User && !p.IsLocal() && !p.Admin) {
			continue
		}
		d, err := s.loadDraft(user, ws)
		if err != nil || d == nil {
			continue
		}
		diffs, err := d.changes()
		if err != nil {
			return nil, err
		}
		item := Draft{User: user, Workspace: ws, Commit: d.tip.Hash.String()}
		for _, f := range sortedPaths(diffs) {
			item.Files = append(item.Files, virtual(f))
		}
		out = append(out, item)
	}
	return out, nil
}

// sortedRefs returns the names of refs in order.
func sortedRefs(refs map[plumbing.ReferenceName]plumbing.Hash) []plumbing.ReferenceName {
	m := make(map[string]bool, len(refs))
	for name := range refs {
		m[name.String()] = true
	}
	var out []plumbing.ReferenceName
	for _, n := range sortedPaths(m) {
		out = append(out, plumbing.ReferenceName(n))
	}
	return out
}

// overlay is what the owner of an open draft reads of its workspace: the
// draft's version of each file it changes, the published version of the
// others.
type overlay struct {
	s       *Store
	ws      string
	changed map[string]fileDiff
}

// overlayFor returns the principal's overlay for the workspace rel is in;
// nil when they have no open draft of it or it changes nothing.
func (s *Store) overlayFor(ctx context.Context, rel string) (*overlay, error) {
	ws := workspaceOf(rel)
	if ws == "" {
		return nil, nil
	}
	d, err := s.loadDraft(s.principal(ctx).User, ws)
	if err != nil || d == nil {
		return nil, err
	}
	diffs, err := d.changes()
	if err != nil || len(diffs) == 0 {
		return nil, err
	}
	return &overlay{s: s, ws: ws, changed: diffs}, nil
}

// file returns the draft's version of the file rel; ok is false when the
// draft does not change rel.
func (o *overlay) file(rel string) (content []byte, exists, ok bool, err error) {
	d, ok := o.changed[rel]
	if !ok {
		return nil, false, false, nil
	}
	if d.theirs.IsZero() {
		return nil, false, true, nil
	}
	content, err = o.s.git.blob(d.theirs)
	return content, err == nil, true, err
}

// fsys returns the workspace's files as the draft's owner sees them, at
// their repository-relative paths.
func (o *overlay) fsys() (fs.FS, error) {
	tree, err := o.s.git.headTree()
	if err != nil {
		return nil, err
	}
	files, err := filesBelow(tree, "workspaces/"+o.ws)
	if err != nil {
		return nil, err
	}
	for p, d := range o.changed {
		files[p] = d.theirs
	}
	out := fstest.MapFS{}
	for p, h := range files {
		if h.IsZero() {
			continue
		}
		data, err := o.s.git.blob(h)
		if err != nil {
			return nil, err
		}
		out[p] = &fstest.MapFile{Data: data, Mode: 0o644}
	}
	return out, nil
}
