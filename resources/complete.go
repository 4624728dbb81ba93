package resources

import (
	"context"
	"errors"
	"path"
	"strings"

	"github.com/mark3labs/mcp-go/mcp"
	"github.com/mark3labs/mcp-go/server"

	"github.com/selmem/selmem/memstore"
)

// MaxCompletions is the most values one completion/complete answer holds,
// the limit the protocol sets.
const MaxCompletions = 100

// Argument names completed by name, wherever they appear: in any resource
// template's variables and any prompt's arguments, so that templates and
// prompts added later complete without further wiring.
const (
	argWorkspace = "workspace" // a workspace name
	argWS        = "ws"        // the same, abbreviated
	argSource    = "source"    // a schema profile's source name, within the workspace argument
	argArtifact  = "artifact"  // an artifact name, within the workspace argument
	argPath      = "path"      // a virtual path under /memories
)

var (
	_ server.PromptCompletionProvider   = (*Registry)(nil)
	_ server.ResourceCompletionProvider = (*Registry)(nil)
)

// CompletePromptArgument completes an argument of a prompt by the
// argument's name (workspace, source, artifact, path), whatever the prompt.
// An argument it does not know gets no values rather than an error, so a
// client probing completions of other servers' prompts is not told off.
func (r *Registry) CompletePromptArgument(ctx context.Context, _ string, arg mcp.CompleteArgument, cc mcp.CompleteContext) (*mcp.Completion, error) {
	return r.complete(ctx, arg, cc), nil
}

// CompleteResourceArgument completes a variable of a resource template, as
// CompletePromptArgument does.
func (r *Registry) CompleteResourceArgument(ctx context.Context, _ string, arg mcp.CompleteArgument, cc mcp.CompleteContext) (*mcp.Completion, error) {
	return r.complete(ctx, arg, cc), nil
}

// complete returns the values for arg that start with its value, sorted,
// at most MaxCompletions of them. The workspace of a source or artifact is
// the workspace (or ws) argument already given in cc.
func (r *Registry) complete(ctx context.Context, arg mcp.CompleteArgument, cc mcp.CompleteContext) *mcp.Completion {
	var candidates []string
	switch arg.Name {
	case argWorkspace, argWS:
		candidates, _ = listWorkspaces(ctx, r.store)
	case argSource:
		if files, err := scanWorkspace(ctx, r.store, workspaceOf(cc)); err == nil {
			candidates = files.schemas
		}
	case argArtifact:
		candidates = r.dirNames(ctx, workspacesDir+"/"+workspaceOf(cc)+"/"+dirArtifacts)
	case argPath:
		candidates = r.paths(ctx, arg.Value)
	}
	return completion(candidates, arg.Value)
}

// workspaceOf is the workspace named by the arguments already given.
func workspaceOf(cc mcp.CompleteContext) string {
	if ws := cc.Arguments[argWorkspace]; ws != "" {
		return ws
	}
	return cc.Arguments[argWS]
}

// completion keeps the candidates with prefix, at most MaxCompletions.
func completion(candidates []string, prefix string) *mcp.Completion {
	values := []string{}
	for _, c := range candidates {
		if strings.HasPrefix(c, prefix) {
			values = append(values, c)
		}
	}
	c := &mcp.Completion{Values: values}
	if len(values) > MaxCompletions {
		c.Values = values[:MaxCompletions]
		c.Total = len(values)
		c.HasMore = true
	}
	return c
}

// dirNames returns the names of the directories inside dir; none when dir
// does not exist or the store refuses it.
func (r *Registry) dirNames(ctx context.Context, dir string) []string {
	entries, err := r.store.List(ctx, dir)
	if err != nil {
		return nil
	}
	var out []string
	for _, e := range entries {
		if e.IsDir {
			out = append(out, e.Name)
		}
	}
	return out
}

// paths completes a virtual path: the entries of the directory the typed
// prefix is in, directories with a trailing slash.
func (r *Registry) paths(ctx context.Context, prefix string) []string {
	if !strings.HasPrefix(prefix, memstore.Root) {
		return []string{memstore.Root + "/"}
	}
	dir := memstore.Root
	if i := strings.LastIndex(prefix, "/"); i > len(memstore.Root) {
		dir = prefix[:i]
	}
	entries, err := r.store.List(ctx, dir)
	if err != nil {
		if !errors.Is(err, memstore.ErrNotFound) && !errors.Is(err, memstore.ErrRejected) {
			r.log.Warn("complete a path", logKeyErr, err)
		}
		return nil
	}
	out := make([]string, 0, len(entries))
	for _, e := range entries {
		p := path.Join(dir, e.Name)
		if e.IsDir {
			p += "/"
		}
		out = append(out, p)
	}
	return out
}
