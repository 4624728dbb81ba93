package resources

import (
	"net/url"
	"strings"
)

// WorkspacesURI is the resource listing the workspaces.
const WorkspacesURI = "memory://workspaces"

// Kinds of per-workspace resources: the last element of their URI.
const (
	KindContext = "context" // the composed session context
	KindTask    = "task"    // task.md
	KindOutput  = "output"  // output.md
	KindTools   = "tools"   // every tools/<name>.yaml
	KindSchemas = "schemas" // every schemas/<source>.md
	// KindArtifacts lists the artifacts, with their data and refresh runs.
	KindArtifacts = "artifacts"
	kindSchema    = "schema" // one schemas/<source>.md: memory://workspaces/{workspace}/schemas/{source}
	kindList      = "list"   // memory://workspaces
)

// ResourceURI returns the URI of a per-workspace resource of the given kind
// (one of the Kind constants), e.g. memory://workspaces/sales/context.
func ResourceURI(workspace, kind string) string {
	return WorkspacesURI + "/" + escape(workspace) + "/" + kind
}

// SchemaURI returns the URI of one schema profile,
// memory://workspaces/{workspace}/schemas/{source}.
func SchemaURI(workspace, source string) string {
	return ResourceURI(workspace, KindSchemas) + "/" + escape(source)
}

// target is a parsed resource URI.
type target struct {
	kind      string // kindList, kindSchema or a Kind constant
	workspace string // decoded; not yet validated by the gate
	source    string // decoded, for kindSchema
}

// parseURI splits a memory:// URI into its kind and names. Names are
// percent-decoded once; a decoded name holding a slash or backslash, or an
// undecodable one, is refused (ok false). Everything else about the names
// is left to the store's gate.
func parseURI(uri string) (t target, ok bool) {
	if uri == WorkspacesURI {
		return target{kind: kindList}, true
	}
	rest, found := strings.CutPrefix(uri, WorkspacesURI+"/")
	if !found {
		return target{}, false
	}
	parts := strings.Split(rest, "/")
	names := make([]string, len(parts))
	for i, p := range parts {
		if i == 1 {
			names[i] = p // the kind is matched literally
			continue
		}
		n, err := url.PathUnescape(p)
		if err != nil || n == "" || strings.ContainsAny(n, `/\`) {
			return target{}, false
		}
		names[i] = n
	}
	switch {
	case len(parts) == 2:
		switch parts[1] {
		case KindContext, KindTask, KindOutput, KindTools, KindSchemas, KindArtifacts:
			return target{kind: parts[1], workspace: names[0]}, true
		}
	case len(parts) == 3 && parts[1] == KindSchemas:
		return target{kind: kindSchema, workspace: names[0], source: names[2]}, true
	}
	return target{}, false
}
