package memstore

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net/url"
	"path"
	"regexp"
	"slices"
	"sort"
	"strings"
	"time"

	"github.com/go-git/go-git/v5/plumbing"
	"github.com/go-git/go-git/v5/plumbing/filemode"
	"github.com/go-git/go-git/v5/plumbing/object"
	"gopkg.in/yaml.v3"

	"github.com/selmem/selmem/memstore/access"
	"github.com/selmem/selmem/memstore/gate"
)

// templateRefPrefix is where published templates live:
// refs/tags/templates/<workspace>/<version>, each naming a commit of the
// published branch.
const templateRefPrefix = "refs/tags/templates/"

// Tool names recorded on the commits of templates.
const (
	toolPublishTemplate = "workspace_publish_template"
	toolLoadTemplate    = "workspace_load"
)

// refSafe is what a workspace or version must look like to name a
// template: one ref path element git accepts everywhere.
var refSafe = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9._+-]{0,63}$`)

// checkRefName refuses a workspace or version that cannot be one element
// of a template's ref name.
func checkRefName(what, v string) error {
	if !refSafe.MatchString(v) || strings.Contains(v, "..") || strings.HasSuffix(v, ".lock") || strings.HasSuffix(v, ".") {
		return &Error{Kind: ErrInvalid, Msg: fmt.Sprintf("Error: %s %q cannot name a template.", what, v),
			Hint: "Use letters, digits, '.', '_', '+' and '-', starting with a letter or digit, e.g. 1.0.0 or q3-2026."}
	}
	return nil
}

// checkTemplateName refuses a template name that cannot be a ref.
func checkTemplateName(ws, version string) error {
	if err := checkRefName("workspace", ws); err != nil {
		return err
	}
	return checkRefName("version", version)
}

// publishedFor reads the published branch's commit and tree after checking
// that the caller may do act on workspace ws.
func (s *Store) publishedFor(ctx context.Context, act access.Action, ws string) (*object.Commit, *object.Tree, error) {
	head, err := s.git.headCommit()
	if err != nil {
		return nil, nil, err
	}
	tree, err := head.Tree()
	if err != nil {
		return nil, nil, err
	}
	if err := s.checkWorkspace(ctx, tree, act, ws); err != nil {
		return nil, nil, err
	}
	return head, tree, nil
}

// checkWorkspaceName refuses a workspace name that is not one path element
// the write gate accepts.
func (s *Store) checkWorkspaceName(ws string) error {
	bad := ws == "" || ws == "." || ws == ".." || strings.ContainsAny(ws, `/\`) || strings.TrimSpace(ws) != ws
	if !bad {
		if _, err := gate.Path(virtual("workspaces/"+ws+"/task.md"), s.opts.Limits); err != nil {
			return rejected(err)
		}
		return nil
	}
	return &Error{Kind: ErrInvalid, Msg: fmt.Sprintf("Error: workspace %q must be a single name, without slashes.", ws),
		Hint: "Give a single name, e.g. sales."}
}

// Template is a published template: a tagged published state of a
// workspace.
type Template struct {
	Workspace   string    `json:"workspace"`
	Version     string    `json:"version"`
	Commit      string    `json:"commit"`
	Title       string    `json:"title,omitempty"`
	Description string    `json:"description,omitempty"`
	Time        time.Time `json:"time"` // when the tagged state was committed
}

// Name is how workspace_load names the template: workspace@version.
func (t Template) Name() string { return t.Workspace + "@" + t.Version }

// templateRef is the ref of a template.
func templateRef(ws, version string) plumbing.ReferenceName {
	return plumbing.ReferenceName(templateRefPrefix + ws + "/" + version)
}

// PublishTemplate tags the published branch's current commit as template
// ws@version (refs/tags/templates/<ws>/<version>). It needs the owner role
// on ws, and refuses a version that exists.
func (s *Store) PublishTemplate(ctx context.Context, ws, version string) (Template, error) {
	if err := checkTemplateName(ws, version); err != nil {
		return Template{}, err
	}
	var out Template
	err := s.locked(ctx, func() error {
		head, tree, err := s.publishedFor(ctx, access.ActApprove, ws)
		if err != nil {
			return err
		}
		if _, isDir, err := entryKind(tree, "workspaces/"+ws); err != nil {
			return err
		} else if !isDir {
			return &Error{Kind: ErrNotFound, Msg: fmt.Sprintf("Error: workspace %s does not exist.", ws),
				Hint: "Publish a workspace that exists; memory_view /memories/workspaces lists them."}
		}
		name := templateRef(ws, version)
		if h, err := s.git.readNamedRef(name); err == nil {
			return &Error{Kind: ErrExists, Msg: fmt.Sprintf("Error: template %s@%s already exists (commit %s).", ws, version, h.String()[:12]),
				Hint: "Templates never change once published: choose a new version."}
		} else if !errors.Is(err, errRefMissing) {
			return err
		}
		p := s.principal(ctx)
		meta := s.meta("publish template "+ws+"@"+version, nil, &WriteOptions{Tool: toolPublishTemplate, Author: p.User})
		if err := s.git.advanceRef(name, plumbing.ZeroHash, head.Hash, meta); err != nil {
			return err
		}
		out, err = templateOf(ws, version, head)
		return err
	})
	return out, err
}

// templateOf describes the template ws@version tagged at c.
func templateOf(ws, version string, c *object.Commit) (Template, error) {
	t := Template{Workspace: ws, Version: version, Commit: c.Hash.String(), Time: c.Committer.When.UTC()}
	tree, err := c.Tree()
	if err != nil {
		return t, err
	}
	data, _, err := readFile(tree, "workspaces/"+ws+"/"+access.WorkspaceFile)
	if err != nil {
		return t, err
	}
	t.Title, t.Description = workspaceTitle(data)
	return t, nil
}

// workspaceTitle reads title and description from a workspace.yaml; a
// malformed file has neither.
func workspaceTitle(data []byte) (title, description string) {
	var doc struct {
		Title       string `yaml:"title"`
		Description string `yaml:"description"`
	}
	if yaml.Unmarshal(data, &doc) != nil {
		return "", ""
	}
	return doc.Title, doc.Description
}

// Templates lists the published templates whose workspace the caller may
// at least view (viewers may load), sorted by workspace and version.
func (s *Store) Templates(ctx context.Context) ([]Template, error) {
	refs, err := s.git.listRefs(templateRefPrefix)
	if err != nil {
		return nil, err
	}
	head, err := s.git.headCommit()
	if err != nil {
		return nil, err
	}
	tree, err := head.Tree()
	if err != nil {
		return nil, err
	}
	out := []Template{}
	for name, h := range refs {
		ws, version, ok := strings.Cut(strings.TrimPrefix(name.String(), templateRefPrefix), "/")
		if !ok || checkTemplateName(ws, version) != nil {
			continue
		}
		if s.checkWorkspace(ctx, tree, access.ActLoad, ws) != nil {
			continue
		}
		c, err := object.GetCommit(s.git.repo.Storer, h)
		if err != nil {
			s.log.Warn("template names an unreadable commit", "template", ws+"@"+version, logKeyErr, err)
			continue
		}
		t, err := templateOf(ws, version, c)
		if err != nil {
			return nil, err
		}
		out = append(out, t)
	}
	sort.Slice(out, func(i, j int) bool {
		if out[i].Workspace != out[j].Workspace {
			return out[i].Workspace < out[j].Workspace
		}
		return out[i].Version < out[j].Version
	})
	return out, nil
}

// Origin is where a loaded workspace came from, the from: key of its
// workspace.yaml.
type Origin struct {
	Template string `yaml:"template" json:"template"`         // the template's workspace
	Version  string `yaml:"version,omitempty" json:"version"` // the template's version
	Commit   string `yaml:"commit" json:"commit"`             // the commit its files were read from
	Bundle   string `yaml:"bundle,omitempty" json:"bundle,omitempty"`
}

// LoadResult describes a workspace created from a template.
type LoadResult struct {
	Workspace string
	Message   string
	Commit    string
	Origin    Origin
	Files     []string // virtual paths written
	Stripped  []string // what was removed, e.g. "tools/orders.yaml: credential"
	Unbound   []string // artifacts without data until refreshed
	Omitted   []string // workspace entries a template does not carry, e.g. notes
}

// LoadTemplate creates workspace newWS from template (workspace@version) in
// one commit: task.md, output.md, tools/ without credential bindings,
// schemas/ and artifacts/ whose bindings hold no snapshot, so each artifact
// shows no data until refresh_artifact binds it to the caller's data through
// the compatibility check. workspace.yaml is written fresh: the template's
// title and description, the caller as the only owner, and from: naming
// the template. It needs the viewer role on the template's workspace and
// refuses a newWS that exists.
func (s *Store) LoadTemplate(ctx context.Context, template, newWS string) (LoadResult, error) {
	ws, version, ok := strings.Cut(template, "@")
	if !ok || version == "" {
		return LoadResult{}, &Error{Kind: ErrInvalid, Msg: fmt.Sprintf("Error: template %q does not name a version.", template),
			Hint: "Name it as workspace@version, e.g. revenue@1.0.0; the templates resource lists them."}
	}
	if err := checkTemplateName(ws, version); err != nil {
		return LoadResult{}, err
	}
	if err := s.checkWorkspaceName(newWS); err != nil {
		return LoadResult{}, err
	}
	var res LoadResult
	err := s.locked(ctx, func() error {
		head, tree, err := s.publishedFor(ctx, access.ActLoad, ws)
		if err != nil {
			return err
		}
		h, err := s.git.readNamedRef(templateRef(ws, version))
		if errors.Is(err, errRefMissing) {
			return &Error{Kind: ErrNotFound, Msg: fmt.Sprintf("Error: there is no template %s@%s.", ws, version),
				Hint: "List the published templates (memory://templates) and name one as workspace@version."}
		}
		if err != nil {
			return err
		}
		c, err := object.GetCommit(s.git.repo.Storer, h)
		if err != nil {
			return fmt.Errorf("read template %s@%s: %w", ws, version, err)
		}
		src, err := c.Tree()
		if err != nil {
			return err
		}
		sub, err := src.Tree("workspaces/" + ws)
		if err != nil {
			return fmt.Errorf("template %s@%s holds no workspace %s: %w", ws, version, ws, err)
		}
		set, err := templateFiles(sub)
		if err != nil {
			return err
		}
		origin := Origin{Template: ws, Version: version, Commit: h.String()}
		res, err = s.createFromTemplate(ctx, head, tree, newWS, set, origin, fmt.Sprintf("load template %s@%s into workspaces/%s", ws, version, newWS))
		return err
	})
	return res, err
}

// createFromTemplate writes set as the new workspace newWS on head, with a
// fresh workspace.yaml. It runs under the store's lock.
func (s *Store) createFromTemplate(ctx context.Context, head *object.Commit, tree *object.Tree, newWS string, set templateSet, origin Origin, subject string) (LoadResult, error) {
	dir := "workspaces/" + newWS
	if f, d, err := entryKind(tree, dir); err != nil {
		return LoadResult{}, err
	} else if f || d {
		return LoadResult{}, &Error{Kind: ErrExists, Msg: fmt.Sprintf("Error: workspace %s already exists.", newWS),
			Hint: "Load the template into a new workspace name; loading never overwrites a workspace."}
	}
	p := s.principal(ctx)
	wsYAML, err := freshWorkspaceYAML(set.title, set.description, p.User, origin)
	if err != nil {
		return LoadResult{}, err
	}
	changes := []change{{Path: dir + "/" + access.WorkspaceFile, Content: wsYAML}}
	for rel, content := range set.files {
		changes = append(changes, change{Path: dir + "/" + rel, Content: content})
	}
	sort.Slice(changes, func(i, j int) bool { return changes[i].Path < changes[j].Path })
	commit, err := s.write(ctx, head, changes, subject, toolLoadTemplate, &WriteOptions{Author: p.User})
	if err != nil {
		return LoadResult{}, err
	}
	res := LoadResult{Workspace: newWS, Commit: commit, Origin: origin, Stripped: set.stripped, Unbound: set.unbound, Omitted: set.omitted}
	for _, c := range changes {
		res.Files = append(res.Files, virtual(c.Path))
	}
	var b strings.Builder
	fmt.Fprintf(&b, "Created workspace %s from template %s", newWS, origin.Template)
	if origin.Version != "" {
		b.WriteString("@" + origin.Version)
	}
	fmt.Fprintf(&b, " (%d files); you are its owner.", len(changes))
	if len(set.stripped) > 0 {
		fmt.Fprintf(&b, " Credential bindings removed: %s; name credentials or connections configured on this server in those tool files.", strings.Join(set.stripped, ", "))
	}
	if len(set.unbound) > 0 {
		fmt.Fprintf(&b, " Artifacts without data until refreshed: %s; point their connector (tools/<name>.yaml) at your data, then call refresh_artifact, which checks the data fits.", strings.Join(set.unbound, ", "))
	}
	res.Message = b.String()
	return res, nil
}

// freshWorkspaceYAML is a loaded workspace's workspace.yaml.
func freshWorkspaceYAML(title, description, owner string, origin Origin) ([]byte, error) {
	doc := struct {
		Title       string     `yaml:"title,omitempty"`
		Description string     `yaml:"description,omitempty"`
		ACL         access.ACL `yaml:"acl"`
		From        Origin     `yaml:"from"`
	}{title, description, access.ACL{Owners: []string{owner}}, origin}
	return encodeYAML(doc)
}

// templateSet is what a template carries, read from a workspace's tree.
type templateSet struct {
	files              map[string][]byte // path below the workspace -> content
	title, description string
	stripped           []string // "tools/x.yaml: credential"
	unbound            []string // artifacts whose snapshot was dropped
	omitted            []string // top-level entries left out
}

// templateTopFiles and templateDirs are what a template carries; anything
// else in a workspace (notes/, scratch) stays with the workspace.
var (
	templateTopFiles = []string{"task.md", "output.md"}
	templateDirs     = []string{"tools", "schemas", "artifacts"}
)

// bindingFile is an artifact's binding, whose snapshot a template drops
// (refresh.BindingName; memstore cannot import refresh).
const bindingFile = "binding.yaml"

// templateFiles reads the template content of the workspace tree ws:
// task.md, output.md, tools/ with credential bindings removed, schemas/,
// and artifacts/ with each binding's snapshot removed. Notes are left out:
// they are the workspace's working notes, not part of what it specifies.
// It refuses anything but regular files, so a hostile tree (a bundle)
// cannot smuggle in symbolic links or submodules.
func templateFiles(ws *object.Tree) (templateSet, error) {
	set := templateSet{files: map[string][]byte{}}
	for _, e := range ws.Entries {
		switch {
		case e.Name == access.WorkspaceFile && e.Mode.IsFile():
			data, err := blobContent(ws, e.Name)
			if err != nil {
				return set, err
			}
			set.title, set.description = workspaceTitle(data)
		case slices.Contains(templateTopFiles, e.Name) || slices.Contains(templateDirs, e.Name) && e.Mode == filemode.Dir:
		default:
			set.omitted = append(set.omitted, e.Name)
		}
	}
	w := object.NewTreeWalker(ws, true, nil)
	defer w.Close()
	for {
		name, e, err := w.Next()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return set, err
		}
		top, rest, _ := strings.Cut(name, "/")
		carried := rest == "" && slices.Contains(templateTopFiles, top) || rest != "" && slices.Contains(templateDirs, top)
		if !carried || e.Mode == filemode.Dir {
			continue
		}
		if !cleanTreePath(name) {
			return set, &Error{Kind: ErrRejected, Msg: fmt.Sprintf("Error: the template names a file %q outside a plain path.", name),
				Hint: "Nothing was written."}
		}
		if e.Mode != filemode.Regular && e.Mode != filemode.Executable {
			return set, &Error{Kind: ErrRejected, Msg: fmt.Sprintf("Error: the template's %s is not a regular file (mode %s).", name, e.Mode),
				Hint: "Templates carry regular files only; nothing was written."}
		}
		content, err := blobContent(ws, name)
		if err != nil {
			return set, err
		}
		switch {
		case top == "tools" && isYAML(name):
			out, removed, err := stripCredentials(content)
			if err != nil {
				return set, &Error{Kind: ErrRejected, Msg: fmt.Sprintf("Error: the template's %s is not valid YAML: %v.", name, err),
					Hint: "Fix the tool configuration in the template's workspace and publish a new version. Nothing was written."}
			}
			for _, r := range removed {
				set.stripped = append(set.stripped, name+": "+r)
			}
			content = out
		case top == "artifacts" && path.Base(name) == bindingFile:
			out, err := dropSnapshot(content)
			if err != nil {
				return set, &Error{Kind: ErrRejected, Msg: fmt.Sprintf("Error: the template's %s is not valid YAML: %v.", name, err),
					Hint: "Fix the binding in the template's workspace and publish a new version. Nothing was written."}
			}
			set.unbound = append(set.unbound, path.Base(path.Dir(name)))
			content = out
		}
		set.files[name] = content
	}
	sort.Strings(set.stripped)
	sort.Strings(set.unbound)
	return set, nil
}

// blobContent reads the file rel of tree.
func blobContent(tree *object.Tree, rel string) ([]byte, error) {
	content, ok, err := readFile(tree, rel)
	if err == nil && !ok {
		err = fmt.Errorf("%s: %w", rel, object.ErrFileNotFound)
	}
	return content, err
}

func isYAML(name string) bool {
	return strings.HasSuffix(name, ".yaml") || strings.HasSuffix(name, ".yml")
}

// credentialKeys are tool-configuration keys that bind a connector to the
// publisher's credentials: configured credentials and connections
// (internal/egress), configured MCP servers, headers and environment
// variables holding secrets, DSNs.
var credentialKeys = []string{
	"credential", "credentials", "connection", "connections", "server", "servers",
	"auth", "authorization", "authentication", "headers", "header", "env", "dsn", "dsn_env",
	"cookie", "cookies", "bearer",
}

// credentialWords mark a key as naming a secret wherever they occur in it.
var credentialWords = []string{"secret", "password", "passwd", "token", "credential", "apikey", "api_key", "api-key", "private_key", "access_key", "dsn"}

// isCredentialKey reports whether a tool configuration's key binds a
// credential.
func isCredentialKey(k string) bool {
	k = strings.ToLower(strings.TrimSpace(k))
	if slices.Contains(credentialKeys, k) {
		return true
	}
	for _, w := range credentialWords {
		if strings.Contains(k, w) {
			return true
		}
	}
	return false
}

// stripCredentials removes from a tool configuration every key that binds
// a credential (at any depth), the user information of URLs and URL query
// parameters that name a secret, and says what it removed. Comments and
// the order of the rest are kept; a note says what to fill in.
func stripCredentials(data []byte) ([]byte, []string, error) {
	var doc yaml.Node
	if err := yaml.Unmarshal(data, &doc); err != nil {
		return nil, nil, errors.New(strings.TrimPrefix(err.Error(), "yaml: "))
	}
	if len(doc.Content) == 0 {
		return data, nil, nil
	}
	var removed []string
	var walk func(n *yaml.Node, at string)
	walk = func(n *yaml.Node, at string) {
		switch n.Kind {
		case yaml.MappingNode:
			kept := n.Content[:0]
			for i := 0; i+1 < len(n.Content); i += 2 {
				k, v := n.Content[i], n.Content[i+1]
				key := joinKey(at, k.Value)
				if isCredentialKey(k.Value) {
					removed = append(removed, key)
					continue
				}
				walk(v, key)
				kept = append(kept, k, v)
			}
			n.Content = kept
		case yaml.SequenceNode:
			for i, c := range n.Content {
				walk(c, fmt.Sprintf("%s[%d]", at, i))
			}
		case yaml.ScalarNode:
			if v, ok := stripURL(n.Value); ok {
				n.Value = v
				removed = append(removed, at+" (URL credentials)")
			}
		}
	}
	walk(doc.Content[0], "")
	if len(removed) == 0 {
		return data, nil, nil
	}
	note := "Loaded from a template: removed " + strings.Join(removed, ", ") +
		". Name a credential, connection or server configured on this server before refreshing."
	doc.Content[0].HeadComment = strings.TrimSpace(note + "\n" + doc.Content[0].HeadComment)
	if doc.HeadComment != "" {
		doc.Content[0].HeadComment += "\n" + doc.HeadComment
		doc.HeadComment = ""
	}
	out, err := encodeYAML(&doc)
	return out, removed, err
}

func joinKey(at, k string) string {
	if at == "" {
		return k
	}
	return at + "." + k
}

// stripURL removes the user information (a user name binds a credential
// too, e.g. postgres://reporting@db/sales) and secret-naming query
// parameters of a URL; ok is false when v is not a URL or holds neither.
func stripURL(v string) (string, bool) {
	if !strings.Contains(v, "://") || strings.ContainsAny(v, " \n") {
		return "", false
	}
	u, err := url.Parse(v)
	if err != nil || u.Scheme == "" || u.Host == "" {
		return "", false
	}
	changed := false
	if u.User != nil {
		u.User, changed = nil, true
	}
	q := u.Query()
	for k := range q {
		if isCredentialKey(k) || strings.EqualFold(k, "key") || strings.EqualFold(k, "sig") {
			q.Del(k)
			changed = true
		}
	}
	if !changed {
		return "", false
	}
	u.RawQuery = q.Encode()
	return u.String(), true
}

// dropSnapshot removes the snapshot: key of a binding.yaml, so the loaded
// artifact shows no data until it is refreshed. The columns stay: they
// are the contract the caller's data must fit.
func dropSnapshot(data []byte) ([]byte, error) {
	var doc yaml.Node
	if err := yaml.Unmarshal(data, &doc); err != nil {
		return nil, errors.New(strings.TrimPrefix(err.Error(), "yaml: "))
	}
	if len(doc.Content) == 0 || doc.Content[0].Kind != yaml.MappingNode {
		return data, nil
	}
	m := doc.Content[0]
	for i := 0; i+1 < len(m.Content); i += 2 {
		if m.Content[i].Value == "snapshot" {
			m.Content = append(m.Content[:i], m.Content[i+2:]...)
			return encodeYAML(&doc)
		}
	}
	return data, nil
}

// encodeYAML renders v as a YAML document with two-space indents.
func encodeYAML(v any) ([]byte, error) {
	var buf bytes.Buffer
	enc := yaml.NewEncoder(&buf)
	enc.SetIndent(2)
	if err := enc.Encode(v); err != nil {
		return nil, err
	}
	if err := enc.Close(); err != nil {
		return nil, err
	}
	return buf.Bytes(), nil
}
