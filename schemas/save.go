package schemas

import (
	"context"
	"errors"
	"fmt"
	"sort"
	"strings"

	"github.com/selmem/selmem/memstore"
	"github.com/selmem/selmem/memstore/gate"
	"github.com/selmem/selmem/profiler"
)

// Files a stored profile consists of, under workspaces/<ws>/schemas/.
const (
	SchemaExt         = ".md"        // the rendered profile with front matter
	JoinsExt          = ".joins.csv" // the join sketches Relate reads back
	RelationshipsName = "relationships"
)

// Dir is the virtual directory holding the schemas of workspace.
func Dir(workspace string) string {
	return memstore.Root + "/workspaces/" + workspace + "/schemas"
}

// CheckWorkspace refuses a workspace name that is not one plain path
// element the write gate accepts.
func CheckWorkspace(workspace string) error {
	return checkElement("workspace", workspace, Dir(workspace)+"/x.md")
}

// CheckName refuses a schema name that is not one plain path element the
// write gate accepts, or that names one of the workspace's own files
// (relationships, *.joins).
func CheckName(name string) error {
	if err := checkElement("name", name, memstore.Root+"/workspaces/w/schemas/"+name+JoinsExt); err != nil {
		return err
	}
	if name == RelationshipsName || strings.HasSuffix(name, ".joins") {
		return invalid(fmt.Sprintf("name %q is reserved for the workspace's own files.", name), "Choose another name, e.g. the table's name.")
	}
	return nil
}

func checkElement(arg, v, probe string) error {
	if v == "" {
		return invalid(arg+" is empty.", "Give a single name, e.g. sales.")
	}
	if v == "." || v == ".." || strings.ContainsAny(v, `/\`) || strings.TrimSpace(v) != v {
		return invalid(fmt.Sprintf("%s %q must be a single name, without slashes.", arg, v), "Give a single name, e.g. sales.")
	}
	if _, err := gate.Path(probe, gate.Limits{}); err != nil {
		var r *gate.Rejection
		if errors.As(err, &r) {
			return invalid(fmt.Sprintf("%s %q is not a valid name: %s", arg, v, r.Msg), "Use letters, digits, - and _.")
		}
		return err
	}
	return nil
}

// SaveResult describes a stored profile.
type SaveResult struct {
	Schema        string                  // virtual path of schemas/<name>.md
	Joins         string                  // virtual path of schemas/<name>.joins.csv
	Relationships string                  // virtual path of schemas/relationships.md
	Related       []profiler.Relationship // the workspace's relationships after the write
	Changed       []string                // virtual paths whose content changed, sorted; nil when nothing did
	Commit        string                  // the commit; "" when nothing changed
	Text          string                  // the schema file as stored
}

// Save stores tp as the schema name of workspace: schemas/<name>.md (the
// profile rendered within budget tokens, with connector in its front
// matter), schemas/<name>.joins.csv, and schemas/relationships.md
// recomputed from the join sketches of every schema of the workspace, in
// one commit. Files whose content is unchanged are not rewritten; when
// nothing changes no commit is made. w carries the provenance (nil is
// valid).
func Save(ctx context.Context, store *memstore.Store, workspace, name string, tp *profiler.TableProfile, connector string, budget int, w *memstore.WriteOptions) (SaveResult, error) {
	res, files, err := Plan(ctx, store, workspace, name, tp, connector, budget)
	if err != nil {
		return SaveResult{}, err
	}
	wr, err := store.Put(ctx, files, w)
	if err != nil {
		return SaveResult{}, err
	}
	res.Commit = wr.Commit
	if res.Commit == "" {
		res.Changed = nil
	}
	return res, nil
}

// Plan computes the files Save writes, by virtual path, without writing
// them, for a caller that commits them together with files of its own.
// SaveResult.Changed lists the files whose content differs from what is
// stored; Commit is empty.
func Plan(ctx context.Context, store *memstore.Store, workspace, name string, tp *profiler.TableProfile, connector string, budget int) (SaveResult, map[string]string, error) {
	if err := CheckWorkspace(workspace); err != nil {
		return SaveResult{}, nil, err
	}
	if err := CheckName(name); err != nil {
		return SaveResult{}, nil, err
	}
	if budget < 0 {
		return SaveResult{}, nil, invalid(fmt.Sprintf("budget %d is negative.", budget), "Give a number of tokens, or 0 for the default.")
	}
	dir := Dir(workspace)
	res := SaveResult{
		Schema:        dir + "/" + name + SchemaExt,
		Joins:         dir + "/" + name + JoinsExt,
		Relationships: dir + "/" + RelationshipsName + SchemaExt,
		Text:          tp.SchemaFile(connector, budget),
	}
	joins := tp.JoinSketchesCSV(int(store.Limits().MaxFileBytes))
	profiles, err := workspaceSketches(ctx, store, dir, name)
	if err != nil {
		return SaveResult{}, nil, err
	}
	// Relate what is stored, not the in-memory profile, so the result is
	// the same whether a schema was just profiled or read back.
	own, err := profiler.ParseJoinSketchesCSV(name, joins)
	if err != nil {
		return SaveResult{}, nil, err
	}
	profiles[name] = own
	res.Related = profiler.Relate(profiles)
	files := map[string]string{
		res.Schema:        res.Text,
		res.Joins:         string(joins),
		res.Relationships: RelationshipsFile(res.Related),
	}
	for p, text := range files {
		if cur, _, err := store.Read(ctx, p); err != nil || string(cur) != text {
			res.Changed = append(res.Changed, p)
		}
	}
	sort.Strings(res.Changed)
	return res, files, nil
}

// RelationshipsFile renders schemas/relationships.md: front matter and
// the relationships' markdown.
func RelationshipsFile(rels []profiler.Relationship) string {
	return "---\ntype: relationships\nsource: trusted_tool_result\n---\n" + profiler.RenderRelationships(rels)
}

// workspaceSketches reads the join sketches of every schema in dir that
// still has its markdown file, except skip's.
func workspaceSketches(ctx context.Context, store *memstore.Store, dir, skip string) (map[string]*profiler.TableProfile, error) {
	profiles := map[string]*profiler.TableProfile{}
	entries, err := store.List(ctx, dir)
	if errors.Is(err, memstore.ErrNotFound) {
		return profiles, nil
	}
	if err != nil {
		return nil, err
	}
	has := map[string]bool{}
	for _, e := range entries {
		has[e.Name] = !e.IsDir
	}
	for _, e := range entries {
		name, ok := strings.CutSuffix(e.Name, JoinsExt)
		if !ok || e.IsDir || name == skip || !has[name+SchemaExt] {
			continue
		}
		data, _, err := store.Read(ctx, e.Path)
		if err != nil {
			return nil, err
		}
		tp, err := profiler.ParseJoinSketchesCSV(name, data)
		if err != nil {
			return nil, invalid(fmt.Sprintf("the join sketches of schema %s cannot be read: %v.", name, err), "Profile "+name+" again to rewrite them.")
		}
		profiles[name] = tp
	}
	return profiles, nil
}
