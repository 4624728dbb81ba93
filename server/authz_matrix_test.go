package server_test

import (
	"context"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/golang-jwt/jwt/v5"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/selmem/selmem/memstore"
	"github.com/selmem/selmem/memstore/access"
	"github.com/selmem/selmem/memstore/embedder"
	"github.com/selmem/selmem/memstore/sqliteindex"
	"github.com/selmem/selmem/server"
)

// enforced says whether the store enforces access (part ENFORCE of issue
// 11). While it is false the matrix still runs every cell and prints it,
// and asserts every cell the HTTP layer decides (no token, expired token,
// wrong audience: 401) and every expected allow; an expected deny that was
// allowed is counted as pending, not as a violation. Set it to true once
// ENFORCE is merged: then a pending cell is a violation too, and
// TestAuthz_CommitAuthor checks that writes are committed as their principal.
const enforced = true

// Targets of the matrix, one per column group.
const (
	tOwnWS = iota
	tOtherWS
	tOrg
	tOwnUser
	tOtherUser
	targetCount
)

var targetNames = [targetCount]string{"own workspace", "other workspace", "org", "own user dir", "other user dir"}

// Workspaces and users of the matrix home.
const (
	teamWS   = "team"   // the workspace where the roles are granted
	zoeWS    = "zoe-ws" // a workspace of zoe's, where nobody else has a role
	zoe      = "zoe"    // the other user
	teamACL  = "acl:\n  owners: [olivia]\n  stewards: [sam, ci-bot]\n  viewers: [vic]\n"
	zoeACL   = "acl:\n  owners: [zoe]\n"
	roleNone = access.RoleNone
)

// matrixPrincipal is one row group of the matrix: who calls, and how.
type matrixPrincipal struct {
	name  string
	user  string
	token func(iss *issuer, t testing.TB) string
	// levels is the standing expected in each target: the role in a
	// workspace; in org/, owner for an org admin and viewer for everyone
	// else; in users/<u>/, owner for u and none for everyone else, admins
	// included. nil: the request is refused before it reaches MCP (401).
	levels []access.Role
}

func static(tok string) func(*issuer, testing.TB) string {
	return func(*issuer, testing.TB) string { return tok }
}

func oidcToken(user string, claims jwt.MapClaims) func(*issuer, testing.TB) string {
	return func(iss *issuer, t testing.TB) string {
		c := jwt.MapClaims{"preferred_username": user}
		for k, v := range claims {
			c[k] = v
		}
		return iss.token(t, "sub-"+user, c)
	}
}

// matrixPrincipals are the rows: static tokens and OIDC tokens mixed, and
// the three ways of not being authenticated.
var matrixPrincipals = []matrixPrincipal{
	{name: "admin", user: "root", token: static(tokAdmin),
		levels: []access.Role{access.RoleOwner, access.RoleOwner, access.RoleOwner, access.RoleOwner, roleNone}},
	{name: "owner", user: "olivia", token: oidcToken("olivia", nil),
		levels: []access.Role{access.RoleOwner, roleNone, access.RoleViewer, access.RoleOwner, roleNone}},
	{name: "steward", user: "sam", token: static("smm_test-sam"),
		levels: []access.Role{access.RoleSteward, roleNone, access.RoleViewer, access.RoleOwner, roleNone}},
	{name: "viewer", user: "vic", token: oidcToken("vic", jwt.MapClaims{"groups": []string{"readers"}}),
		levels: []access.Role{access.RoleViewer, roleNone, access.RoleViewer, access.RoleOwner, roleNone}},
	{name: "other user", user: "otto", token: static("smm_test-otto"),
		levels: []access.Role{roleNone, roleNone, access.RoleViewer, access.RoleOwner, roleNone}},
	{name: "service", user: "ci-bot", token: static(tokService),
		levels: []access.Role{access.RoleSteward, roleNone, access.RoleViewer, access.RoleOwner, roleNone}},
	{name: "anonymous", user: "olivia", token: static("")},
	{name: "expired", user: "olivia", token: oidcToken("olivia", jwt.MapClaims{"exp": 1_000_000_000})},
	{name: "wrong aud", user: "olivia", token: oidcToken("olivia", jwt.MapClaims{"aud": "another-api"})},
}

// Outcomes of a cell.
const (
	outOK      = "ok"       // the call succeeded (or, for search and listings, showed the target)
	outDenied  = "denied"   // refused with a message naming the role needed (resources: any error)
	outError   = "error"    // failed for another reason
	out401     = "401"      // refused by the HTTP layer
	outNA      = "-"        // the operation does not apply to the target
	outPropose = "proposal" // accepted as a proposal for an owner; nothing published
)

// matrixCell is what an operation runs against: one principal's session on
// one target, with a fixture file the operation may use.
type matrixCell struct {
	t       *testing.T
	cs      *mcp.ClientSession
	store   *memstore.Store
	p       matrixPrincipal
	target  int
	dir     string // the target's directory, a virtual path
	ws      string // the target's workspace; "" for org and user dirs
	fixture string // a file under dir written by the local owner for this cell
	term    string // a word only the fixture holds
	data    string // a CSV file inside the data roots
}

// matrixOp is one row: a tool, resource or prompt, what standing it needs,
// and how to call it.
type matrixOp struct {
	name          string
	need          access.Role // viewer to read, steward to write
	workspaceOnly bool        // needs a workspace target
	allowErr      bool        // an allowed call may fail for another reason (no such artifact)
	proposes      bool        // a viewer's call becomes a proposal instead of a refusal
	// raw is the JSON-RPC request sent without a session by the rows
	// that are refused before MCP.
	raw string
	run func(c *matrixCell) string
}

// toolOutcome classifies a tool result.
func toolOutcome(res *mcp.CallToolResult, err error) string {
	if err != nil {
		return outError
	}
	if !res.IsError {
		if strings.Contains(resultText(res), "Recorded as proposal") {
			return outPropose
		}
		return outOK
	}
	if text := resultText(res); strings.Contains(text, "may not") {
		return outDenied
	}
	return outError
}

func resultText(res *mcp.CallToolResult) string {
	var b strings.Builder
	for _, c := range res.Content {
		if tc, ok := c.(*mcp.TextContent); ok {
			b.WriteString(tc.Text)
		}
	}
	return b.String()
}

func (c *matrixCell) call(name string, args map[string]any) string {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	return toolOutcome(c.cs.CallTool(ctx, &mcp.CallToolParams{Name: name, Arguments: args}))
}

func (c *matrixCell) read(uri string) string {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	_, err := c.cs.ReadResource(ctx, &mcp.ReadResourceParams{URI: uri})
	return errOutcome(err)
}

// errOutcome classifies the error of a resource read or prompt.
func errOutcome(err error) string {
	switch {
	case err == nil:
		return outOK
	case strings.Contains(err.Error(), "may not"):
		return outDenied
	}
	return outError
}

func (c *matrixCell) prompt(name string, args map[string]string) string {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	_, err := c.cs.GetPrompt(ctx, &mcp.GetPromptParams{Name: name, Arguments: args})
	return errOutcome(err)
}

// local runs a write as the local owner (no principal in the context).
func (c *matrixCell) local(err error) {
	c.t.Helper()
	if err != nil {
		c.t.Fatalf("fixture: %v", err)
	}
}

func rawCall(method, params string) string {
	return `{"jsonrpc":"2.0","id":7,"method":"` + method + `","params":` + params + `}`
}

// matrixOps are every tool, resource and prompt of the server.
var matrixOps = append(toolOps, resourceOps()...)

// toolOps are the tools, and the resource listing the workspaces.
var toolOps = []matrixOp{
	{name: "tool memory_view", need: access.RoleViewer, raw: rawCall("tools/call", `{"name":"memory_view","arguments":{"path":"/memories"}}`),
		run: func(c *matrixCell) string { return c.call("memory_view", map[string]any{"path": c.fixture}) }},
	{name: "tool memory_search", need: access.RoleViewer, raw: rawCall("tools/call", `{"name":"memory_search","arguments":{"query":"x"}}`),
		run: func(c *matrixCell) string {
			ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
			defer cancel()
			res, err := c.cs.CallTool(ctx, &mcp.CallToolParams{Name: "memory_search", Arguments: map[string]any{"query": c.term}})
			if o := toolOutcome(res, err); o != outOK {
				return o
			}
			if strings.Contains(resultText(res), c.fixture) || strings.Contains(mustJSON(res.StructuredContent), c.fixture) {
				return outOK
			}
			return outDenied // filtered: no hit
		}},
	{name: "tool memory_history", need: access.RoleViewer, raw: rawCall("tools/call", `{"name":"memory_history","arguments":{}}`),
		run: func(c *matrixCell) string { return c.call("memory_history", map[string]any{"path": c.fixture}) }},
	{name: "tool memory_create", need: access.RoleSteward, proposes: true, raw: rawCall("tools/call", `{"name":"memory_create","arguments":{"path":"/memories/x.md","file_text":"x"}}`),
		run: func(c *matrixCell) string {
			return c.call("memory_create", map[string]any{"path": strings.TrimSuffix(c.fixture, ".md") + "-new.md", "file_text": "# New\n\n- A rule.\n"})
		}},
	{name: "tool memory_str_replace", need: access.RoleSteward, proposes: true, raw: rawCall("tools/call", `{"name":"memory_str_replace","arguments":{"path":"/memories/x.md","old_str":"a","new_str":"b"}}`),
		run: func(c *matrixCell) string {
			return c.call("memory_str_replace", map[string]any{"path": c.fixture, "old_str": c.term, "new_str": c.term + "z"})
		}},
	{name: "tool memory_insert", need: access.RoleSteward, proposes: true, raw: rawCall("tools/call", `{"name":"memory_insert","arguments":{"path":"/memories/x.md","insert_line":0,"insert_text":"x"}}`),
		run: func(c *matrixCell) string {
			return c.call("memory_insert", map[string]any{"path": c.fixture, "insert_line": 0, "insert_text": "- Another rule."})
		}},
	{name: "tool memory_delete", need: access.RoleSteward, proposes: true, raw: rawCall("tools/call", `{"name":"memory_delete","arguments":{"path":"/memories/x.md"}}`),
		run: func(c *matrixCell) string { return c.call("memory_delete", map[string]any{"path": c.fixture}) }},
	{name: "tool memory_rename", need: access.RoleSteward, proposes: true, raw: rawCall("tools/call", `{"name":"memory_rename","arguments":{"old_path":"/memories/x.md","new_path":"/memories/y.md"}}`),
		run: func(c *matrixCell) string {
			return c.call("memory_rename", map[string]any{"old_path": c.fixture, "new_path": strings.TrimSuffix(c.fixture, ".md") + "-moved.md"})
		}},
	{name: "tool memory_revert", need: access.RoleSteward, proposes: true, raw: rawCall("tools/call", `{"name":"memory_revert","arguments":{"path":"/memories/x.md","commit":"abcd"}}`),
		run: func(c *matrixCell) string {
			ctx := context.Background()
			hist, err := c.store.History(ctx, c.fixture, &memstore.HistoryOptions{Limit: 1})
			c.local(err)
			_, err = c.store.StrReplace(ctx, c.fixture, c.term, "changed", nil)
			c.local(err)
			return c.call("memory_revert", map[string]any{"path": c.fixture, "commit": hist[0].Hash})
		}},
	{name: "tool profile_source", need: access.RoleSteward, workspaceOnly: true, raw: rawCall("tools/call", `{"name":"profile_source","arguments":{"workspace":"team","name":"x","source":{"kind":"file","path":"/x.csv"}}}`),
		run: func(c *matrixCell) string {
			return c.call("profile_source", map[string]any{"workspace": c.ws, "name": "s" + c.term, "source": map[string]any{"kind": "file", "path": c.data}})
		}},
	{name: "tool refresh_artifact", need: access.RoleSteward, workspaceOnly: true, allowErr: true, raw: rawCall("tools/call", `{"name":"refresh_artifact","arguments":{"workspace":"team","artifact":"a"}}`),
		run: func(c *matrixCell) string {
			return c.call("refresh_artifact", map[string]any{"workspace": c.ws, "artifact": "report"})
		}},
	{name: "tool query_artifact_data", need: access.RoleViewer, workspaceOnly: true, allowErr: true, raw: rawCall("tools/call", `{"name":"query_artifact_data","arguments":{"workspace":"team","artifact":"a","sql":"SELECT 1"}}`),
		run: func(c *matrixCell) string {
			return c.call("query_artifact_data", map[string]any{"workspace": c.ws, "artifact": "report", "sql": "SELECT count(*) FROM data"})
		}},
	// show_artifact is listed only to clients that declare MCP Apps, which
	// this client does not; its handler makes the same read check as
	// query_artifact_data.
	{name: "tool memory_draft_open", need: access.RoleSteward, workspaceOnly: true, raw: rawCall("tools/call", `{"name":"memory_draft_open","arguments":{"workspace":"team"}}`),
		run: func(c *matrixCell) string {
			out := c.call("memory_draft_open", map[string]any{"workspace": c.ws})
			if out == outOK { // leave nothing open for the cells after
				if d := c.call("memory_draft_discard", map[string]any{"workspace": c.ws}); d != outOK {
					c.t.Fatalf("discard the draft just opened: %s", d)
				}
			}
			return out
		}},
	{name: "tool memory_publish", need: access.RoleSteward, workspaceOnly: true, allowErr: true, // no draft open
		raw: rawCall("tools/call", `{"name":"memory_publish","arguments":{"workspace":"team","message":"m"}}`),
		run: func(c *matrixCell) string {
			return c.call("memory_publish", map[string]any{"workspace": c.ws, "message": "publish " + c.term})
		}},
	{name: "tool memory_draft_discard", need: access.RoleSteward, workspaceOnly: true, allowErr: true, // no draft open
		raw: rawCall("tools/call", `{"name":"memory_draft_discard","arguments":{"workspace":"team"}}`),
		run: func(c *matrixCell) string { return c.call("memory_draft_discard", map[string]any{"workspace": c.ws}) }},
	{name: "tool memory_proposals", need: access.RoleViewer, workspaceOnly: true, raw: rawCall("tools/call", `{"name":"memory_proposals","arguments":{"workspace":"team"}}`),
		run: func(c *matrixCell) string { return c.call("memory_proposals", map[string]any{"workspace": c.ws}) }},
	{name: "tool memory_proposal_approve", need: access.RoleOwner, workspaceOnly: true, allowErr: true, // no such proposal
		raw: rawCall("tools/call", `{"name":"memory_proposal_approve","arguments":{"workspace":"team","id":"x"}}`),
		run: func(c *matrixCell) string {
			return c.call("memory_proposal_approve", map[string]any{"workspace": c.ws, "id": "261201-000000-abcdef"})
		}},
	{name: "tool memory_proposal_reject", need: access.RoleOwner, workspaceOnly: true, allowErr: true, // no such proposal
		raw: rawCall("tools/call", `{"name":"memory_proposal_reject","arguments":{"workspace":"team","id":"x"}}`),
		run: func(c *matrixCell) string {
			return c.call("memory_proposal_reject", map[string]any{"workspace": c.ws, "id": "261201-000000-abcdef"})
		}},
	{name: "tool workspace_publish_template", need: access.RoleOwner, workspaceOnly: true,
		raw: rawCall("tools/call", `{"name":"workspace_publish_template","arguments":{"workspace":"team","version":"1"}}`),
		run: func(c *matrixCell) string {
			return c.call("workspace_publish_template", map[string]any{"workspace": c.ws, "version": c.term})
		}},
	{name: "tool workspace_load", need: access.RoleViewer, workspaceOnly: true,
		raw: rawCall("tools/call", `{"name":"workspace_load","arguments":{"template":"team@1","new_workspace":"mine"}}`),
		run: func(c *matrixCell) string {
			_, err := c.store.PublishTemplate(context.Background(), c.ws, c.term)
			c.local(err)
			return c.call("workspace_load", map[string]any{"template": c.ws + "@" + c.term, "new_workspace": "loaded-" + c.term})
		}},
	{name: "resource memory://workspaces", need: access.RoleViewer, workspaceOnly: true, raw: rawCall("resources/read", `{"uri":"memory://workspaces"}`),
		run: func(c *matrixCell) string {
			ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
			defer cancel()
			res, err := c.cs.ReadResource(ctx, &mcp.ReadResourceParams{URI: "memory://workspaces"})
			if err != nil {
				return outError
			}
			if strings.Contains(mustJSON(res), "memory://workspaces/"+c.ws+"/") {
				return outOK
			}
			return outDenied // not listed
		}},
}

// resourceOps are the resource templates over a workspace, and the prompts.
func resourceOps() []matrixOp {
	var ops []matrixOp
	for _, kind := range []string{"context", "task", "output", "tools", "schemas", "schemas/orders", "artifacts"} {
		ops = append(ops, matrixOp{name: "resource …/{ws}/" + kind, need: access.RoleViewer, workspaceOnly: true,
			allowErr: kind == "artifacts", // the workspace has none
			raw:      rawCall("resources/read", `{"uri":"memory://workspaces/team/`+kind+`"}`),
			run:      func(c *matrixCell) string { return c.read("memory://workspaces/" + c.ws + "/" + kind) }})
	}
	return append(ops,
		matrixOp{name: "prompt start_session", need: access.RoleViewer, workspaceOnly: true,
			raw: rawCall("prompts/get", `{"name":"start_session","arguments":{"workspace":"team"}}`),
			run: func(c *matrixCell) string { return c.prompt("start_session", map[string]string{"workspace": c.ws}) }},
		matrixOp{name: "prompt regenerate_artifact", need: access.RoleViewer, workspaceOnly: true, allowErr: true, // no such artifact
			raw: rawCall("prompts/get", `{"name":"regenerate_artifact","arguments":{"workspace":"team","artifact":"a"}}`),
			run: func(c *matrixCell) string {
				return c.prompt("regenerate_artifact", map[string]string{"workspace": c.ws, "artifact": "report"})
			}},
	)
}

// expected is the outcome the matrix wants for principal p, operation op
// and target. A viewer's write in a workspace becomes a proposal instead of
// a refusal.
func expected(p matrixPrincipal, op matrixOp, target int) string {
	inWS := target == tOwnWS || target == tOtherWS
	switch {
	case op.workspaceOnly && !inWS:
		return outNA
	case p.levels == nil:
		return out401
	case op.proposes && inWS && p.levels[target] == access.RoleViewer:
		return outPropose
	case op.proposes && inWS && p.name == "service" && p.levels[target] == access.RoleSteward:
		// A service token's writes declare no source: inferred, which
		// a non-owner's write turns into a proposal.
		return outPropose
	case op.name == "tool workspace_load" && p.name == "service":
		// A service cannot create a workspace: it needs a person as owner.
		return outDenied
	case p.levels[target] >= op.need:
		return outOK
	}
	return outDenied
}

// matches reports whether got satisfies want, and whether a mismatch is
// only pending enforcement.
func matches(want, got string, op matrixOp) (ok, pending bool) {
	switch {
	case want == got:
		return true, false
	case want == outOK && got == outError && op.allowErr:
		return true, false
	case want == outDenied && !enforced && (got == outOK || (got == outError && op.allowErr)):
		return false, true
	}
	return false, false
}

// TestAuthz_Matrix calls every tool, resource and prompt as every kind of
// principal on every kind of target over HTTP, with static tokens and
// tokens of a mock OIDC issuer, prints the matrix and counts violations.
func TestAuthz_Matrix(t *testing.T) {
	iss := startIssuer(t)
	m := newMatrixHome(t, iss)
	got := map[string]string{} // principal|op|target → outcome
	violations, pending, cells := 0, 0, 0
	for _, p := range matrixPrincipals {
		token := p.token(iss, t)
		var cs *mcp.ClientSession
		if p.levels != nil {
			var err error
			if cs, err = connectAs(t, m.url, token); err != nil {
				t.Fatalf("%s: connect: %v", p.name, err)
			}
		}
		for ti := range targetCount {
			for i, op := range matrixOps {
				want := expected(p, op, ti)
				var out string
				switch {
				case want == outNA:
					out = outNA
				case p.levels == nil:
					resp, _ := send(t, http.MethodPost, m.url, token, op.raw)
					out = fmt.Sprint(resp.StatusCode)
					if resp.StatusCode != http.StatusUnauthorized || !strings.Contains(resp.Header.Get("WWW-Authenticate"), "resource_metadata=") {
						out += "!"
					}
				default:
					out = op.run(m.cell(t, cs, p, ti, i))
				}
				key := p.name + "|" + op.name + "|" + targetNames[ti]
				got[key] = out
				if want == outNA {
					continue
				}
				cells++
				if ok, pend := matches(want, out, op); pend {
					pending++
				} else if !ok {
					violations++
					t.Errorf("%s as %s on %s: got %s, want %s", op.name, p.name, targetNames[ti], out, want)
				}
			}
		}
	}
	t.Log("\n" + renderMatrix(got))
	t.Logf("authorization matrix: %d cells, %d violations, %d pending enforcement (enforced=%v)", cells, violations, pending, enforced)
	if enforced && pending > 0 {
		t.Errorf("%d cells pending with enforcement on", pending)
	}
}

// renderMatrix prints one table per target: operations down, principals
// across; a cell is its outcome, marked ? where it is an expected deny
// pending enforcement and ! where it is a violation. Operations that do not
// apply to a target are left out of its table.
func renderMatrix(got map[string]string) string {
	var b strings.Builder
	b.WriteString("legend: ok allowed; proposal accepted as a proposal for an owner; denied refused naming the role; 401 refused by HTTP; error failed otherwise (allowed where a call may fail for lack of an artifact);\n" +
		"        ? expected denied, pending enforcement (enforced=false); ! violation\n")
	for ti, tn := range targetNames {
		fmt.Fprintf(&b, "\n== target: %s ==\n%-32s", tn, "")
		for _, p := range matrixPrincipals {
			fmt.Fprintf(&b, " %-10s", p.name)
		}
		b.WriteString("\n")
		for _, op := range matrixOps {
			if op.workspaceOnly && ti != tOwnWS && ti != tOtherWS {
				continue
			}
			fmt.Fprintf(&b, "%-32s", op.name)
			for _, p := range matrixPrincipals {
				out := got[p.name+"|"+op.name+"|"+tn]
				if ok, pending := matches(expected(p, op, ti), out, op); pending {
					out += "?"
				} else if !ok {
					out += "!"
				}
				fmt.Fprintf(&b, " %-10s", out)
			}
			b.WriteString("\n")
		}
	}
	return b.String()
}

// matrixHome is the served home of the matrix: workspaces team and zoe-ws
// with their ACLs and files, org/ and users/ directories.
type matrixHome struct {
	url   string
	store *memstore.Store
	data  string
}

func newMatrixHome(t *testing.T, iss *issuer) *matrixHome {
	t.Helper()
	home := t.TempDir()
	if err := os.MkdirAll(filepath.Join(home, "index"), 0o700); err != nil {
		t.Fatal(err)
	}
	idx, err := sqliteindex.Open(filepath.Join(home, "index", "index.db"), nil)
	if err != nil {
		t.Fatal(err)
	}
	store, err := memstore.Open(context.Background(), home, &memstore.Options{Index: idx, Embedder: embedder.NewBuiltin(), Durability: memstore.DurabilityOS})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = idx.Close() })
	ctx := context.Background()
	files := map[string]string{}
	for ws, acl := range map[string]string{teamWS: teamACL, zoeWS: zoeACL} {
		d := "/memories/workspaces/" + ws + "/"
		files[d+"workspace.yaml"] = "name: " + ws + "\n" + acl
		files[d+"task.md"] = "# Task\n\n- Revenue is net of refunds.\n"
		files[d+"output.md"] = "# Output\n\n- Data is injected as window.DATA.\n"
		files[d+"tools/warehouse.yaml"] = "kind: sql\nendpoint: warehouse\n"
		files[d+"schemas/orders.md"] = "# orders\n\n| column | type |\n|---|---|\n| id | int |\n"
	}
	for p, text := range files {
		if _, err := store.Create(ctx, p, text, nil); err != nil {
			t.Fatalf("%s: %v", p, err)
		}
	}
	dataRoot := t.TempDir()
	data := filepath.Join(dataRoot, "orders.csv")
	if err := os.WriteFile(data, []byte("id,amount\n1,10\n2,20\n3,30\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	cfg := server.DefaultConfig()
	cfg.Home = home
	cfg.Author = "tester"
	cfg.HTTP.Addr = "127.0.0.1:0"
	cfg.Profile.DataRoots = []string{dataRoot}
	cfg.HTTP.Auth = testAuth(iss)
	for _, u := range []string{"sam", "otto"} {
		cfg.HTTP.Auth.Tokens[u] = server.StaticToken{SHA256: server.HashToken("smm_test-" + u), User: u}
	}
	if err := cfg.Validate(); err != nil {
		t.Fatal(err)
	}
	rf, err := server.NewRefresher(store, cfg, nil)
	if err != nil {
		t.Fatal(err)
	}
	srv := server.NewMCPServer(store, cfg, &server.Options{Transport: server.TransportHTTP, Refresher: rf})
	h, err := server.Listen(srv, cfg.HTTP, &server.HTTPOptions{Artifacts: rf.Handler(server.PathArtifacts), LocalUser: cfg.Author})
	if err != nil {
		t.Fatal(err)
	}
	serveUntilCleanup(t, h, store)
	return &matrixHome{url: "http://" + h.Addr() + server.PathMCP, store: store, data: data}
}

// cell writes the fixture of one cell as the local owner: a file of its own
// under the target, holding a word nothing else holds.
func (m *matrixHome) cell(t *testing.T, cs *mcp.ClientSession, p matrixPrincipal, target, op int) *matrixCell {
	t.Helper()
	c := &matrixCell{t: t, cs: cs, store: m.store, p: p, target: target, data: m.data}
	switch target {
	case tOwnWS:
		c.ws = teamWS
		c.dir = "/memories/workspaces/" + teamWS
	case tOtherWS:
		c.ws = zoeWS
		c.dir = "/memories/workspaces/" + zoeWS
	case tOrg:
		c.dir = "/memories/org"
	case tOwnUser:
		c.dir = "/memories/users/" + p.user
	case tOtherUser:
		c.dir = "/memories/users/" + zoe
	}
	slug := strings.ReplaceAll(p.name, " ", "-")
	c.term = fmt.Sprintf("zq%sx%dx%d", strings.ReplaceAll(slug, "-", ""), target, op)
	c.fixture = fmt.Sprintf("%s/notes/matrix-%s-%d.md", c.dir, slug, op)
	_, err := m.store.Create(context.Background(), c.fixture, "# Matrix\n\n- The word "+c.term+" is here.\n", nil)
	c.local(err)
	return c
}

// TestAuthz_CommitAuthor: a write over HTTP is committed as the principal
// of its token, not as the configured author (part ENFORCE makes the tools
// pass it; until then the test shows what it sees).
func TestAuthz_CommitAuthor(t *testing.T) {
	iss := startIssuer(t)
	m := newMatrixHome(t, iss)
	for _, p := range []matrixPrincipal{matrixPrincipals[0], matrixPrincipals[1], matrixPrincipals[2]} {
		cs, err := connectAs(t, m.url, p.token(iss, t))
		if err != nil {
			t.Fatal(err)
		}
		path := "/memories/workspaces/team/notes/by-" + p.user + ".md"
		if text, _, isErr := call(t, cs, "memory_create", map[string]any{"path": path, "file_text": "# Note\n\n- Written by " + p.user + ".\n"}); isErr {
			t.Fatalf("%s: %s", p.name, text)
		}
		hist, err := m.store.History(context.Background(), path, &memstore.HistoryOptions{Limit: 1})
		if err != nil || len(hist) == 0 {
			t.Fatalf("history: %v", err)
		}
		if hist[0].Author != p.user {
			if enforced {
				t.Errorf("%s's write committed as %q, want %q", p.name, hist[0].Author, p.user)
			} else {
				t.Logf("pending ENFORCE: %s's write committed as %q, want %q", p.name, hist[0].Author, p.user)
			}
		}
	}
}
