// Package resources owns selmem's MCP resources, resource templates and
// prompts, and the composition of a workspace's session context.
//
// Resources are read-only and live under memory://:
//
//	memory://workspaces                                  the workspaces, one line each
//	memory://workspaces/{workspace}/context              the composed session context
//	memory://workspaces/{workspace}/task                 task.md
//	memory://workspaces/{workspace}/output               output.md
//	memory://workspaces/{workspace}/tools                tools/*.yaml as one YAML stream
//	memory://workspaces/{workspace}/schemas              schemas/*.md, or an index over budget
//	memory://workspaces/{workspace}/schemas/{source}     schemas/{source}.md
//
// With artifacts, and only for clients that declare the MCP Apps extension
// (io.modelcontextprotocol/ui), views live under ui:// (text/html;profile=mcp-app):
//
//	ui://selmem/artifact                                   the viewer the artifact tools name
//	ui://selmem/workspaces/{workspace}/artifacts/{artifact}  an artifact's page with its current data
//
// The prompt start_session(workspace) returns the composed context as a user
// message. [Compose] is the pure composition (deterministic, budgeted, no
// timestamps); [LoadWorkspace] reads its input from a memstore.Store, keeping
// only the items in force; [Register] wires both into an mcp-go server and
// [Registry.Changed] notifies clients after writes. The Registry also
// completes arguments by name for every template and prompt
// (completion/complete): workspace, source, artifact and path.
//
// The package does not write memory (the tools package does), does not
// create the server or its transports (the server package does), and leaves
// path validation to the store's gate: a name the gate refuses is a resource
// that does not exist.
package resources
