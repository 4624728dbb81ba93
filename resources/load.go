package resources

import (
	"context"
	"errors"
	"fmt"
	"net/url"
	"path"
	"regexp"
	"sort"
	"strings"
	"time"

	"gopkg.in/yaml.v3"

	"github.com/selmem/selmem/memstore"
	"github.com/selmem/selmem/memstore/gate"
)

// workspacesDir is the virtual directory holding the workspaces.
const workspacesDir = memstore.Root + "/workspaces"

// Workspace files and directories.
const (
	fileWorkspace = "workspace.yaml"
	fileTask      = "task.md"
	fileOutput    = "output.md"
	dirTools      = "tools"
	dirSchemas    = "schemas"
	dirArtifacts  = "artifacts"
)

// validity is the part of an item's metadata that says when it is in force.
type validity struct {
	ValidFrom, InvalidAt, ExpiresAt time.Time
}

// inForce reports whether an item is in force at now: not yet invalidated or
// expired (invalid_at and expires_at are exclusive: at that instant the item
// is out) and already valid (valid_from at or before now).
func (v validity) inForce(now time.Time) bool {
	switch {
	case !v.InvalidAt.IsZero() && !v.InvalidAt.After(now):
		return false
	case !v.ExpiresAt.IsZero() && !v.ExpiresAt.After(now):
		return false
	case !v.ValidFrom.IsZero() && v.ValidFrom.After(now):
		return false
	}
	return true
}

// errNotInForce reports an item whose validity window excludes now.
var errNotInForce = errors.New("not in force")

// markdownItem parses a markdown memory file: its body without front matter
// when the item is in force, errNotInForce otherwise. A file whose front
// matter does not parse counts as not in force (the write gate refuses such
// files, so it was written around the store).
func markdownItem(content []byte, now time.Time) (string, error) {
	fm, body, _, err := gate.ParseFrontMatter(content)
	if err != nil {
		return "", fmt.Errorf("%w: %v", errNotInForce, err)
	}
	if !(validity{fm.ValidFrom, fm.InvalidAt, fm.ExpiresAt}).inForce(now) {
		return "", errNotInForce
	}
	return normalize(string(body)), nil
}

// yamlItem checks the validity keys (valid_from, invalid_at, expires_at) at
// the top level of a YAML memory file and returns it whole when in force.
// YAML that does not parse is returned as is: tools are shown verbatim.
func yamlItem(content []byte, now time.Time) (string, error) {
	var top map[string]any
	if err := yaml.Unmarshal(content, &top); err == nil {
		v := validity{yamlTime(top["valid_from"]), yamlTime(top["invalid_at"]), yamlTime(top["expires_at"])}
		if !v.inForce(now) {
			return "", errNotInForce
		}
	}
	return normalize(reValidityLine.ReplaceAllString(string(content), "")), nil
}

// reValidityLine matches a top-level validity key of a YAML file with its
// single-line value: the time values stay out of composed text.
var reValidityLine = regexp.MustCompile(`(?m)^(valid_from|invalid_at|expires_at|superseded_by)[ \t]*:[^\n]*(\n|$)`)

// yamlTime reads a YAML timestamp, an RFC 3339 string or a date; anything
// else is the zero time.
func yamlTime(v any) time.Time {
	switch t := v.(type) {
	case time.Time:
		return t.UTC()
	case string:
		for _, layout := range []string{time.RFC3339Nano, time.DateOnly} {
			if p, err := time.Parse(layout, t); err == nil {
				return p.UTC()
			}
		}
	}
	return time.Time{}
}

// normalize turns CRLF into LF and trims leading and trailing blank lines.
func normalize(s string) string {
	s = strings.ReplaceAll(s, "\r\n", "\n")
	s = strings.TrimRight(s, " \t\n")
	for {
		first, rest, ok := strings.Cut(s, "\n")
		if !ok || strings.TrimSpace(first) != "" {
			break
		}
		s = rest
	}
	return s
}

// workspaceMeta is the part of workspace.yaml the resources show.
type workspaceMeta struct {
	Title       string `yaml:"title"`
	Description string `yaml:"description"`
}

// readMeta reads workspace.yaml of the workspace at dir; a missing or
// malformed file gives empty fields.
func readMeta(ctx context.Context, store *memstore.Store, dir string) workspaceMeta {
	var m workspaceMeta
	content, _, err := store.Read(ctx, dir+"/"+fileWorkspace)
	if err != nil {
		return m
	}
	if err := yaml.Unmarshal(content, &m); err != nil {
		return workspaceMeta{}
	}
	m.Title, m.Description = oneLine(m.Title), strings.TrimSpace(m.Description)
	return m
}

// workspaceFiles is what a workspace directory holds, by name, without
// reading the files.
type workspaceFiles struct {
	name         string
	meta         workspaceMeta
	task, output bool
	tools        []string // tool names, sorted
	toolFiles    []string // file names matching tools
	schemas      []string // source names, sorted, relationships last
	hasMeta      bool
}

// scanWorkspace lists the files of workspace name. Errors are memstore's:
// ErrNotFound for a missing workspace, ErrRejected for a name the gate
// refuses.
func scanWorkspace(ctx context.Context, store *memstore.Store, name string) (workspaceFiles, error) {
	if name == "" || strings.ContainsAny(name, "/\\") {
		return workspaceFiles{}, &memstore.Error{Kind: memstore.ErrRejected, Msg: "not a workspace name"}
	}
	dir := workspacesDir + "/" + name
	entries, err := store.List(ctx, dir)
	if err != nil {
		return workspaceFiles{}, err
	}
	w := workspaceFiles{name: name}
	for _, e := range entries {
		switch {
		case !e.IsDir && e.Name == fileWorkspace:
			w.hasMeta = true
		case !e.IsDir && e.Name == fileTask:
			w.task = true
		case !e.IsDir && e.Name == fileOutput:
			w.output = true
		case e.IsDir && e.Name == dirTools:
			tools, err := store.List(ctx, dir+"/"+dirTools)
			if err != nil && !errors.Is(err, memstore.ErrNotFound) {
				return workspaceFiles{}, err
			}
			for _, t := range tools {
				if ext := path.Ext(t.Name); !t.IsDir && (ext == ".yaml" || ext == ".yml") {
					w.toolFiles = append(w.toolFiles, t.Name)
				}
			}
		case e.IsDir && e.Name == dirSchemas:
			schemas, err := store.List(ctx, dir+"/"+dirSchemas)
			if err != nil && !errors.Is(err, memstore.ErrNotFound) {
				return workspaceFiles{}, err
			}
			for _, s := range schemas {
				if !s.IsDir && path.Ext(s.Name) == ".md" {
					w.schemas = append(w.schemas, strings.TrimSuffix(s.Name, ".md"))
				}
			}
		}
	}
	sort.Strings(w.toolFiles)
	for _, f := range w.toolFiles {
		w.tools = append(w.tools, strings.TrimSuffix(f, path.Ext(f)))
	}
	sortSchemas(w.schemas)
	if w.hasMeta {
		w.meta = readMeta(ctx, store, dir)
	}
	return w, nil
}

// sortSchemas sorts source names, with relationships last.
func sortSchemas(names []string) {
	sort.Slice(names, func(i, j int) bool {
		ri, rj := names[i] == RelationshipsSource, names[j] == RelationshipsSource
		if ri != rj {
			return rj
		}
		return names[i] < names[j]
	})
}

// LoadWorkspace reads workspace name from store with the items in force at
// now: task.md, output.md, tools/*.yaml and schemas/*.md, front matter
// removed. It returns memstore.ErrNotFound when the workspace does not exist
// and memstore.ErrRejected when name is not a valid path element (the store's
// gate decides: "..", percent escapes, hidden names and the like).
func LoadWorkspace(ctx context.Context, store *memstore.Store, name string, now time.Time) (Workspace, error) {
	files, err := scanWorkspace(ctx, store, name)
	if err != nil {
		return Workspace{}, err
	}
	return loadFiles(ctx, store, files, now)
}

// loadFiles reads the files scanWorkspace found.
func loadFiles(ctx context.Context, store *memstore.Store, files workspaceFiles, now time.Time) (Workspace, error) {
	dir := workspacesDir + "/" + files.name
	ws := Workspace{Name: files.name, Title: files.meta.Title, Description: files.meta.Description}
	read := func(p string, parse func([]byte, time.Time) (string, error)) (string, bool, error) {
		content, _, err := store.Read(ctx, p)
		if errors.Is(err, memstore.ErrNotFound) {
			return "", false, nil // deleted since the scan
		}
		if err != nil {
			return "", false, err
		}
		text, err := parse(content, now)
		if errors.Is(err, errNotInForce) {
			return "", false, nil
		}
		return text, err == nil, err
	}
	if files.task {
		text, ok, err := read(dir+"/"+fileTask, markdownItem)
		if err != nil {
			return Workspace{}, err
		}
		if ok {
			ws.Task = &Item{Name: "task", URI: ResourceURI(files.name, KindTask), Text: text}
		}
	}
	if files.output {
		text, ok, err := read(dir+"/"+fileOutput, markdownItem)
		if err != nil {
			return Workspace{}, err
		}
		if ok {
			ws.Output = &Item{Name: "output", URI: ResourceURI(files.name, KindOutput), Text: text}
		}
	}
	for i, f := range files.toolFiles {
		text, ok, err := read(dir+"/"+dirTools+"/"+f, yamlItem)
		if err != nil {
			return Workspace{}, err
		}
		if ok {
			ws.Tools = append(ws.Tools, Item{Name: files.tools[i], URI: ResourceURI(files.name, KindTools), Text: text})
		}
	}
	for _, s := range files.schemas {
		text, ok, err := read(dir+"/"+dirSchemas+"/"+s+".md", markdownItem)
		if err != nil {
			return Workspace{}, err
		}
		if ok {
			ws.Schemas = append(ws.Schemas, Item{Name: s, URI: SchemaURI(files.name, s), Text: text})
		}
	}
	return ws, nil
}

// listWorkspaces returns the names of the workspaces, sorted; none when the
// workspaces directory does not exist yet.
func listWorkspaces(ctx context.Context, store *memstore.Store) ([]string, error) {
	entries, err := store.List(ctx, workspacesDir)
	if errors.Is(err, memstore.ErrNotFound) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	var names []string
	for _, e := range entries {
		if e.IsDir {
			names = append(names, e.Name)
		}
	}
	sort.Strings(names)
	return names, nil
}

// escape makes a workspace or source name one URI path segment.
func escape(name string) string { return url.PathEscape(name) }
