package memstore

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"path"
	"slices"
	"sort"
	"strings"

	"github.com/go-git/go-git/v5/plumbing"
	"github.com/go-git/go-git/v5/plumbing/filemode"
	"github.com/go-git/go-git/v5/plumbing/format/packfile"
	"github.com/go-git/go-git/v5/plumbing/object"
	"github.com/go-git/go-git/v5/plumbing/storer"
	"github.com/go-git/go-git/v5/storage/memory"

	"github.com/selmem/selmem/memstore/access"
	"github.com/selmem/selmem/memstore/gate"
)

// A workspace bundle is a git bundle (format v2) that moves a workspace
// between servers:
//
//	# v2 git bundle
//	<commit> refs/heads/main                      the workspace's published state
//	<commit> refs/tags/templates/<ws>/<version>   each of its templates
//	<blank line>
//	<packfile of every object these commits reach, without deltas>
//
// Each commit is a root commit whose tree holds workspaces/<ws>/ and
// nothing else, with exactly what a template carries (templateFiles): the
// rest of the memory, its history, the ACL, notes, credential bindings and
// data snapshots never leave the server. Its message records where it came
// from (trailers Workspace, Template-Version, Source-Commit).
const (
	bundleSignature = "# v2 git bundle\n"
	// DefaultMaxBundleBytes is the largest bundle ImportBundle reads by
	// default.
	DefaultMaxBundleBytes = 64 << 20
	// maxBundleHeaderBytes bounds the header (signature and ref lines).
	maxBundleHeaderBytes = 64 << 10
	// maxBundleRefs bounds the refs a bundle may list.
	maxBundleRefs = 256
	// maxBundleObjects bounds the objects of a bundle's pack.
	maxBundleObjects = 100_000
	// inflateFactor bounds the inflated size of a pack's objects, as a
	// multiple of the bundle's size limit.
	inflateFactor = 4
	// bundleMain is the ref naming the workspace's published state.
	bundleMain = plumbing.ReferenceName("refs/heads/main")
)

// bundleRef is one ref line of a bundle's header.
type bundleRef struct {
	Name plumbing.ReferenceName
	Hash plumbing.Hash
}

// ExportOptions choose what ExportWorkspace writes. A nil *ExportOptions
// exports the published state and every template of the workspace.
type ExportOptions struct {
	// Template, when set, is a version: only that template is exported,
	// as both the bundle's main and its tag.
	Template string
}

// ExportResult describes a written bundle.
type ExportResult struct {
	Workspace string
	Refs      []string // the bundle's refs, "<hash> <name>"
	Objects   int
	Bytes     int64
}

// exportState is one commit of a bundle: a ref and the published commit
// whose workspace it carries.
type exportState struct {
	ref     plumbing.ReferenceName
	source  *object.Commit
	version string
}

// ExportWorkspace writes workspace ws as a git bundle to w: its published
// state and its templates (or, with opts.Template, that one template),
// each as a root commit holding only what a template carries. It needs the
// viewer role on ws (whoever may load a workspace may export it).
func (s *Store) ExportWorkspace(ctx context.Context, ws string, opts *ExportOptions, w io.Writer) (ExportResult, error) {
	if err := checkRefName("workspace", ws); err != nil {
		return ExportResult{}, err
	}
	var o ExportOptions
	if opts != nil {
		o = *opts
	}
	head, tree, err := s.publishedFor(ctx, access.ActLoad, ws)
	if err != nil {
		return ExportResult{}, err
	}
	var states []exportState
	if o.Template != "" {
		if err := checkRefName("version", o.Template); err != nil {
			return ExportResult{}, err
		}
		c, err := s.templateCommit(ws, o.Template)
		if err != nil {
			return ExportResult{}, err
		}
		states = []exportState{{bundleMain, c, o.Template}, {templateRef(ws, o.Template), c, o.Template}}
	} else {
		if _, isDir, err := entryKind(tree, "workspaces/"+ws); err != nil {
			return ExportResult{}, err
		} else if !isDir {
			return ExportResult{}, &Error{Kind: ErrNotFound, Msg: fmt.Sprintf("Error: workspace %s does not exist.", ws),
				Hint: "Name a workspace that exists; selmem view /memories/workspaces lists them."}
		}
		states = []exportState{{ref: bundleMain, source: head}}
		refs, err := s.git.listRefs(templateRefPrefix + ws + "/")
		if err != nil {
			return ExportResult{}, err
		}
		for _, name := range slices.Sorted(mapsKeys(refs)) {
			version := strings.TrimPrefix(name.String(), templateRefPrefix+ws+"/")
			if checkRefName("version", version) != nil {
				continue
			}
			c, err := object.GetCommit(s.git.repo.Storer, refs[name])
			if err != nil {
				return ExportResult{}, fmt.Errorf("read template %s@%s: %w", ws, version, err)
			}
			states = append(states, exportState{name, c, version})
		}
	}

	st := memory.NewStorage()
	put := func(obj plumbing.EncodedObject) (plumbing.Hash, error) { return st.SetEncodedObject(obj) }
	res := ExportResult{Workspace: ws}
	var header bytes.Buffer
	header.WriteString(bundleSignature)
	for _, state := range states {
		srcTree, err := state.source.Tree()
		if err != nil {
			return ExportResult{}, err
		}
		sub, err := srcTree.Tree("workspaces/" + ws)
		if err != nil {
			return ExportResult{}, fmt.Errorf("%s holds no workspace %s: %w", state.ref, ws, err)
		}
		set, err := templateFiles(sub)
		if err != nil {
			return ExportResult{}, err
		}
		h, err := bundleCommit(put, ws, set, state.version, state.source)
		if err != nil {
			return ExportResult{}, err
		}
		fmt.Fprintf(&header, "%s %s\n", h, state.ref)
		res.Refs = append(res.Refs, h.String()+" "+state.ref.String())
	}
	header.WriteString("\n")

	var hashes []plumbing.Hash
	iter, err := st.IterEncodedObjects(plumbing.AnyObject)
	if err != nil {
		return ExportResult{}, err
	}
	if err := iter.ForEach(func(o plumbing.EncodedObject) error { hashes = append(hashes, o.Hash()); return nil }); err != nil {
		return ExportResult{}, err
	}
	slices.SortFunc(hashes, func(a, b plumbing.Hash) int { return bytes.Compare(a[:], b[:]) })
	var pack bytes.Buffer
	// No deltas: ImportBundle refuses them (a delta can inflate far
	// beyond its size), and a workspace is small.
	if _, err := packfile.NewEncoder(&pack, st, false).Encode(hashes, 0); err != nil {
		return ExportResult{}, fmt.Errorf("encode the bundle's pack: %w", err)
	}
	n, err := w.Write(header.Bytes())
	if err == nil {
		var m int
		m, err = w.Write(pack.Bytes())
		n += m
	}
	res.Objects, res.Bytes = len(hashes), int64(n)
	return res, err
}

// mapsKeys returns the keys of a ref map.
func mapsKeys(m map[plumbing.ReferenceName]plumbing.Hash) func(func(plumbing.ReferenceName) bool) {
	return func(yield func(plumbing.ReferenceName) bool) {
		for k := range m {
			if !yield(k) {
				return
			}
		}
	}
}

// templateCommit returns the commit template ws@version names.
func (s *Store) templateCommit(ws, version string) (*object.Commit, error) {
	h, err := s.git.readNamedRef(templateRef(ws, version))
	if errors.Is(err, errRefMissing) {
		return nil, &Error{Kind: ErrNotFound, Msg: fmt.Sprintf("Error: there is no template %s@%s.", ws, version),
			Hint: "List the published templates (memory://templates) and name one as workspace@version."}
	}
	if err != nil {
		return nil, err
	}
	c, err := object.GetCommit(s.git.repo.Storer, h)
	if err != nil {
		return nil, fmt.Errorf("read template %s@%s: %w", ws, version, err)
	}
	return c, nil
}

// putFunc stores a git object and returns its hash.
type putFunc func(plumbing.EncodedObject) (plumbing.Hash, error)

// bundleCommit stores, through put, the root commit holding
// workspaces/<ws>/ with set's files and a workspace.yaml of its title and
// description. Author, committer and time are source's, so exporting the
// same state twice gives the same commit.
func bundleCommit(put putFunc, ws string, set templateSet, version string, source *object.Commit) (plumbing.Hash, error) {
	files := map[string][]byte{}
	for rel, content := range set.files {
		files["workspaces/"+ws+"/"+rel] = content
	}
	meta, err := encodeYAML(struct {
		Title       string `yaml:"title,omitempty"`
		Description string `yaml:"description,omitempty"`
	}{set.title, set.description})
	if err != nil {
		return plumbing.ZeroHash, err
	}
	files["workspaces/"+ws+"/"+access.WorkspaceFile] = meta
	root, err := buildTree(put, files)
	if err != nil {
		return plumbing.ZeroHash, err
	}
	var msg strings.Builder
	fmt.Fprintf(&msg, "selmem export of workspace %s\n\nWorkspace: %s\n", ws, ws)
	if version != "" {
		fmt.Fprintf(&msg, "Template-Version: %s\n", version)
	}
	fmt.Fprintf(&msg, "Source-Commit: %s\n", source.Hash)
	c := &object.Commit{Author: source.Author, Committer: source.Committer, Message: msg.String(), TreeHash: root}
	obj := &plumbing.MemoryObject{}
	if err := c.Encode(obj); err != nil {
		return plumbing.ZeroHash, err
	}
	return put(obj)
}

// buildTree stores, through put, the blobs and trees of files (slash
// paths to contents) and returns the root tree's hash.
func buildTree(put putFunc, files map[string][]byte) (plumbing.Hash, error) {
	var entries []object.TreeEntry
	dirs := map[string]map[string][]byte{}
	for p, content := range files {
		name, rest, isDir := strings.Cut(p, "/")
		if isDir {
			if dirs[name] == nil {
				dirs[name] = map[string][]byte{}
			}
			dirs[name][rest] = content
			continue
		}
		obj := &plumbing.MemoryObject{}
		obj.SetType(plumbing.BlobObject)
		if _, err := obj.Write(content); err != nil {
			return plumbing.ZeroHash, err
		}
		h, err := put(obj)
		if err != nil {
			return plumbing.ZeroHash, err
		}
		entries = append(entries, object.TreeEntry{Name: name, Mode: filemode.Regular, Hash: h})
	}
	for name, sub := range dirs {
		h, err := buildTree(put, sub)
		if err != nil {
			return plumbing.ZeroHash, err
		}
		entries = append(entries, object.TreeEntry{Name: name, Mode: filemode.Dir, Hash: h})
	}
	sort.Sort(object.TreeEntrySorter(entries))
	obj := &plumbing.MemoryObject{}
	if err := (&object.Tree{Entries: entries}).Encode(obj); err != nil {
		return plumbing.ZeroHash, err
	}
	return put(obj)
}

// ImportOptions configure ImportBundle. A nil *ImportOptions is valid.
type ImportOptions struct {
	// As names the new workspace; "" keeps the bundle's name.
	As string
	// Origin is what from.bundle records, e.g. the bundle file's base
	// name (never a host path).
	Origin string
	// MaxBytes bounds the bundle read; 0 is DefaultMaxBundleBytes.
	MaxBytes int64
}

// bundleError is a bundle that cannot be imported.
func bundleError(why string) error {
	return &Error{Kind: ErrInvalid, Msg: "Error: the file is not a workspace bundle selmem can import: " + why + ".",
		Hint: "Import a bundle written by selmem workspace export. Nothing was written."}
}

// ImportBundle reads a workspace bundle written by ExportWorkspace and
// creates its workspace, as opts.As or under its own name, the way
// LoadTemplate does: one commit, credential bindings and snapshots
// removed, a fresh workspace.yaml naming the caller owner and from: the
// bundle. Its templates become the new workspace's templates. The bundle
// is treated as hostile: its size, header, refs and pack are bounded and
// checked before anything is written, deltas are refused, only the
// files a template carries are read from it, every file passes the write
// gate, and a refused bundle leaves nothing behind.
func (s *Store) ImportBundle(ctx context.Context, r io.Reader, opts *ImportOptions) (LoadResult, error) {
	var o ImportOptions
	if opts != nil {
		o = *opts
	}
	if o.MaxBytes <= 0 {
		o.MaxBytes = DefaultMaxBundleBytes
	}
	data, err := io.ReadAll(io.LimitReader(r, o.MaxBytes+1))
	if err != nil {
		return LoadResult{}, err
	}
	if int64(len(data)) > o.MaxBytes {
		return LoadResult{}, &Error{Kind: ErrRejected, Msg: fmt.Sprintf("Error: the bundle is over %d bytes.", o.MaxBytes),
			Hint: "Export fewer templates (selmem workspace export --template VERSION). Nothing was written."}
	}
	refs, packOff, err := parseBundleHeader(data)
	if err != nil {
		return LoadResult{}, err
	}
	st, err := unpack(data[packOff:], o.MaxBytes*inflateFactor)
	if err != nil {
		return LoadResult{}, err
	}
	b, err := readBundle(st, refs)
	if err != nil {
		return LoadResult{}, err
	}
	newWS := o.As
	if newWS == "" {
		newWS = b.ws
	}
	if err := s.checkWorkspaceName(newWS); err != nil {
		return LoadResult{}, err
	}
	if len(b.templates) > 0 {
		if err := checkRefName("workspace", newWS); err != nil {
			return LoadResult{}, err
		}
	}
	for _, t := range b.templates {
		if err := s.gateFiles(newWS, t.set); err != nil {
			return LoadResult{}, err
		}
	}
	origin := Origin{Template: b.ws, Version: b.version, Commit: b.main.String(), Bundle: o.Origin}
	var res LoadResult
	err = s.locked(ctx, func() error {
		head, err := s.git.headCommit()
		if err != nil {
			return err
		}
		tree, err := head.Tree()
		if err != nil {
			return err
		}
		for _, t := range b.templates {
			if _, err := s.git.readNamedRef(templateRef(newWS, t.version)); !errors.Is(err, errRefMissing) {
				return &Error{Kind: ErrExists, Msg: fmt.Sprintf("Error: template %s@%s already exists.", newWS, t.version),
					Hint: "Import under another name with --as. Nothing was written."}
			}
		}
		// The templates' commits are written first, so the workspace's
		// commit flushes them with its own objects; a failure takes them
		// back.
		put := func(obj plumbing.EncodedObject) (plumbing.Hash, error) { return s.git.putObject(obj) }
		tags := map[plumbing.ReferenceName]plumbing.Hash{}
		for _, t := range b.templates {
			h, err := bundleCommit(put, newWS, t.set, t.version, t.commit)
			if err != nil {
				s.git.dropObjects()
				return err
			}
			tags[templateRef(newWS, t.version)] = h
		}
		subject := fmt.Sprintf("import workspace %s from a bundle into workspaces/%s", b.ws, newWS)
		res, err = s.createFromTemplate(ctx, head, tree, newWS, b.mainSet, origin, subject)
		if err != nil {
			s.git.dropObjects()
			return err
		}
		p := s.principal(ctx)
		for _, name := range slices.Sorted(mapsKeys(tags)) {
			meta := s.meta("import template "+name.String(), nil, &WriteOptions{Tool: "workspace_import", Author: p.User})
			if err := s.git.advanceRef(name, plumbing.ZeroHash, tags[name], meta); err != nil {
				return fmt.Errorf("workspace %s was imported, but its template %s was not: %w", newWS, name, err)
			}
		}
		return nil
	})
	return res, err
}

// gateFiles checks a template's files as a write to workspace ws would,
// for files that are not written through Store.write (a template's tag).
func (s *Store) gateFiles(ws string, set templateSet) error {
	var total int64
	for rel, content := range set.files {
		p := "workspaces/" + ws + "/" + rel
		if _, err := gate.Path(virtual(p), s.opts.Limits); err != nil {
			return rejected(err)
		}
		if err := gate.FilePath(p); err != nil {
			return rejected(err)
		}
		if err := gate.Content(p, content, s.opts.Limits); err != nil {
			return rejected(err)
		}
		total += int64(len(content))
	}
	if total > s.opts.Limits.MaxWorkspaceBytes {
		return &Error{Kind: ErrRejected, Msg: fmt.Sprintf("Error: a template of the bundle holds %d bytes, over the workspace cap of %d.", total, s.opts.Limits.MaxWorkspaceBytes),
			Hint: "Nothing was written."}
	}
	return nil
}

// parseBundleHeader reads a v2 bundle's header: the signature, ref lines
// and the blank line. It returns the refs and the offset of the pack.
// Prerequisites (a bundle that needs history the receiver may not have)
// and any other version are refused.
func parseBundleHeader(data []byte) ([]bundleRef, int, error) {
	if !bytes.HasPrefix(data, []byte(bundleSignature)) {
		return nil, 0, bundleError("it does not start with the git bundle v2 signature")
	}
	off := len(bundleSignature)
	var refs []bundleRef
	seen := map[plumbing.ReferenceName]bool{}
	for {
		if off > maxBundleHeaderBytes {
			return nil, 0, bundleError("its header is too long")
		}
		nl := bytes.IndexByte(data[off:], '\n')
		if nl < 0 {
			return nil, 0, bundleError("its header ends before the pack")
		}
		line := string(data[off : off+nl])
		off += nl + 1
		if line == "" {
			break
		}
		if strings.HasPrefix(line, "-") {
			return nil, 0, bundleError("it needs commits this memory may not have (prerequisites)")
		}
		hash, name, ok := strings.Cut(line, " ")
		if !ok || len(hash) != 40 || !plumbing.IsHash(hash) || strings.ToLower(hash) != hash {
			return nil, 0, bundleError("a ref line is malformed")
		}
		if !validRefName(name) || seen[plumbing.ReferenceName(name)] {
			return nil, 0, bundleError("a ref name is malformed or repeated")
		}
		seen[plumbing.ReferenceName(name)] = true
		if refs = append(refs, bundleRef{plumbing.ReferenceName(name), plumbing.NewHash(hash)}); len(refs) > maxBundleRefs {
			return nil, 0, bundleError("it lists too many refs")
		}
	}
	if len(refs) == 0 {
		return nil, 0, bundleError("it lists no ref")
	}
	return refs, off, nil
}

// validRefName accepts the refs a workspace bundle may list:
// refs/heads/main and refs/tags/templates/<ws>/<version>.
func validRefName(name string) bool {
	if name == bundleMain.String() {
		return true
	}
	ws, version, ok := strings.Cut(strings.TrimPrefix(name, templateRefPrefix), "/")
	return ok && strings.HasPrefix(name, templateRefPrefix) && checkTemplateName(ws, version) == nil
}

// unpack reads a pack into memory, refusing deltas, more than
// maxBundleObjects objects, or objects that inflate beyond budget bytes in
// total, before anything is inflated past the budget.
func unpack(pack []byte, budget int64) (*memory.Storage, error) {
	sc := packfile.NewScanner(bytes.NewReader(pack))
	_, count, err := sc.Header()
	if err != nil {
		return nil, bundleError("its pack is malformed")
	}
	if count > maxBundleObjects {
		return nil, bundleError(fmt.Sprintf("its pack holds over %d objects", maxBundleObjects))
	}
	var total int64
	for range count {
		oh, err := sc.NextObjectHeader()
		if err != nil {
			return nil, bundleError("its pack is malformed or truncated")
		}
		if oh.Type.IsDelta() {
			return nil, bundleError("its pack holds deltas")
		}
		if total += oh.Length; oh.Length < 0 || total > budget {
			return nil, bundleError("its objects are too large")
		}
		if _, _, err := sc.NextObject(io.Discard); err != nil {
			return nil, bundleError("its pack is malformed or truncated")
		}
	}
	st := memory.NewStorage()
	p, err := packfile.NewParserWithStorage(packfile.NewScanner(bytes.NewReader(pack)), st)
	if err != nil {
		return nil, err
	}
	if _, err := p.Parse(); err != nil {
		return nil, bundleError("its pack is malformed or truncated")
	}
	return st, nil
}

// bundleTemplate is a template carried by a bundle.
type bundleTemplate struct {
	version string
	commit  *object.Commit
	set     templateSet
}

// importedBundle is a bundle's content, checked.
type importedBundle struct {
	ws        string
	main      plumbing.Hash
	version   string // the main state's Template-Version, if any
	mainSet   templateSet
	templates []bundleTemplate
}

// readBundle checks that every ref of a bundle names a commit of st whose
// tree holds exactly one workspace, the same for all refs, and reads what
// each carries.
func readBundle(st storer.EncodedObjectStorer, refs []bundleRef) (importedBundle, error) {
	var b importedBundle
	var mainRef *bundleRef
	for i := range refs {
		if refs[i].Name == bundleMain {
			mainRef = &refs[i]
		}
	}
	if mainRef == nil {
		return b, bundleError("it has no refs/heads/main")
	}
	read := func(h plumbing.Hash) (*object.Commit, string, *object.Tree, error) {
		c, err := object.GetCommit(st, h)
		if err != nil {
			return nil, "", nil, bundleError("a ref names no commit of its pack")
		}
		root, err := c.Tree()
		if err != nil || len(root.Entries) != 1 || root.Entries[0].Name != "workspaces" || root.Entries[0].Mode != filemode.Dir {
			return nil, "", nil, bundleError("a commit holds more than one workspace")
		}
		wss, err := object.GetTree(st, root.Entries[0].Hash)
		if err != nil || len(wss.Entries) != 1 || wss.Entries[0].Mode != filemode.Dir {
			return nil, "", nil, bundleError("a commit holds more than one workspace")
		}
		sub, err := object.GetTree(st, wss.Entries[0].Hash)
		if err != nil {
			return nil, "", nil, bundleError("a workspace tree is missing from its pack")
		}
		return c, wss.Entries[0].Name, sub, nil
	}
	c, ws, sub, err := read(mainRef.Hash)
	if err != nil {
		return b, err
	}
	if checkRefName("workspace", ws) != nil {
		return b, bundleError(fmt.Sprintf("its workspace name %q cannot be used", ws))
	}
	b.ws, b.main = ws, mainRef.Hash
	if b.mainSet, err = bundleFiles(sub); err != nil {
		return b, err
	}
	if v := trailerValue(c.Message, "Template-Version"); checkRefName("version", v) == nil {
		b.version = v
	}
	for _, ref := range refs {
		if ref.Name == bundleMain {
			continue
		}
		tws, version, _ := strings.Cut(strings.TrimPrefix(ref.Name.String(), templateRefPrefix), "/")
		if tws != ws {
			return b, bundleError("its templates belong to more than one workspace")
		}
		c, cws, sub, err := read(ref.Hash)
		if err != nil {
			return b, err
		}
		if cws != ws {
			return b, bundleError("its templates belong to more than one workspace")
		}
		set, err := bundleFiles(sub)
		if err != nil {
			return b, err
		}
		b.templates = append(b.templates, bundleTemplate{version: version, commit: c, set: set})
	}
	return b, nil
}

// bundleFiles is templateFiles for a bundle's tree: an object the
// decoder refuses (a tree naming "..") is the bundle's fault.
func bundleFiles(sub *object.Tree) (templateSet, error) {
	set, err := templateFiles(sub)
	var e *Error
	if err != nil && !errors.As(err, &e) {
		return set, bundleError("a tree of its pack is malformed (" + err.Error() + ")")
	}
	return set, err
}

// trailerValue returns the value of the trailer key in a commit message.
func trailerValue(msg, key string) string {
	for _, line := range strings.Split(msg, "\n") {
		if v, ok := strings.CutPrefix(line, key+": "); ok {
			return strings.TrimSpace(v)
		}
	}
	return ""
}

// cleanTreePath reports whether a path read from a tree is a clean
// relative path: no empty, . or .. element and no backslash, so a hostile
// tree cannot name a file outside the workspace.
func cleanTreePath(p string) bool {
	return p != "" && path.Clean(p) == p && !strings.HasPrefix(p, "/") && !strings.HasPrefix(p, "../") && p != ".." &&
		!strings.ContainsAny(p, "\\\x00")
}
