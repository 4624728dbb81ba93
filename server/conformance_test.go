package server_test

import (
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
)

// nodeTools returns the directory scripts/install-conformance.sh fills:
// bin/node (Node 22) and node_modules with the pinned MCP conformance suite
// and TypeScript SDK. Under CI=true it runs the script (and fails when it
// cannot); otherwise it skips when they are not installed.
func nodeTools(t testing.TB) string {
	t.Helper()
	root, err := filepath.Abs("..")
	if err != nil {
		t.Fatal(err)
	}
	if os.Getenv("CI") == "true" {
		out, err := exec.Command(filepath.Join(root, "scripts", "install-conformance.sh")).Output()
		if err != nil {
			t.Fatalf("scripts/install-conformance.sh: %v", err)
		}
		return strings.TrimSpace(string(out))
	}
	dir := filepath.Join(root, ".cache", "conformance")
	for _, p := range []string{"bin/node", "node_modules/@modelcontextprotocol/conformance/dist/index.js", "node_modules/@modelcontextprotocol/sdk/package.json"} {
		if _, err := os.Stat(filepath.Join(dir, p)); err != nil {
			t.Skip("Node 22 and the MCP conformance suite are not installed; run scripts/install-conformance.sh (needs npm)")
		}
	}
	return dir
}

// conformanceScenarios are the server scenarios of the conformance suite
// (0.1.16) that apply to selmem: they need nothing but the protocol and
// selmem's own tools, resources, templates and prompts. Each must pass.
var conformanceScenarios = []string{
	"server-initialize",
	"ping",
	"logging-set-level",
	"completion-complete",
	"tools-list",
	"prompts-list",
	"resources-list",
	"resources-subscribe",
	"resources-unsubscribe",
	"server-sse-multiple-streams",
	"dns-rebinding-protection",
}

// notApplicable are the other server scenarios, with the reason each does
// not apply: they call tools, read resources or get prompts by the names of
// the suite's reference server (test_*, test://…), which selmem does not
// have and should not have.
var notApplicable = map[string]string{
	"tools-call-simple-text":        "calls the reference tool test_simple_text",
	"tools-call-image":              "calls the reference tool test_image_content",
	"tools-call-audio":              "calls the reference tool test_audio_content",
	"tools-call-embedded-resource":  "calls the reference tool test_embedded_resource",
	"tools-call-mixed-content":      "calls the reference tool test_multiple_content_types",
	"tools-call-with-logging":       "calls the reference tool test_tool_with_logging",
	"tools-call-error":              "calls the reference tool test_error_handling",
	"tools-call-with-progress":      "calls the reference tool test_tool_with_progress",
	"tools-call-sampling":           "calls the reference tool test_sampling (selmem never asks the client to sample)",
	"tools-call-elicitation":        "calls the reference tool test_elicitation (selmem never elicits)",
	"elicitation-sep1034-defaults":  "calls the reference tool test_elicitation_sep1034_defaults",
	"elicitation-sep1330-enums":     "calls the reference tool test_elicitation_sep1330_enums",
	"json-schema-2020-12":           "looks for the reference tool json_schema_2020_12_tool",
	"server-sse-polling":            "calls the reference tool test_reconnection, which closes its stream mid-call",
	"resources-read-text":           "reads the reference resource test://static-text",
	"resources-read-binary":         "reads the reference resource test://static-binary",
	"resources-templates-read":      "reads the reference template test://template/{id}/data",
	"prompts-get-simple":            "gets the reference prompt test_simple_prompt",
	"prompts-get-with-args":         "gets the reference prompt test_prompt_with_arguments",
	"prompts-get-embedded-resource": "gets the reference prompt test_prompt_with_embedded_resource",
	"prompts-get-with-image":        "gets the reference prompt test_prompt_with_image",
}

// conformance runs the suite's CLI with args.
func conformance(t *testing.T, dir string, args ...string) (string, error) {
	t.Helper()
	argv := append([]string{filepath.Join(dir, "node_modules", "@modelcontextprotocol", "conformance", "dist", "index.js")}, args...)
	cmd := exec.Command(filepath.Join(dir, "bin", "node"), argv...)
	cmd.Env = append(os.Environ(), "PATH="+filepath.Join(dir, "bin")+string(os.PathListSeparator)+os.Getenv("PATH"), "NO_COLOR=1")
	out, err := cmd.CombinedOutput()
	return string(out), err
}

// TestConformance runs every applicable server scenario of the official MCP
// conformance suite against `selmem serve --http` and requires each check to
// pass; it also requires that every scenario the suite knows is either run
// or listed with the reason it does not apply.
func TestConformance(t *testing.T) {
	dir := nodeTools(t)

	out, err := conformance(t, dir, "list", "--server")
	if err != nil {
		t.Fatalf("conformance list: %v\n%s", err, out)
	}
	known := regexp.MustCompile(`(?m)^\s*- (\S+)`).FindAllStringSubmatch(out, -1)
	if len(known) == 0 {
		t.Fatalf("no scenarios listed:\n%s", out)
	}
	for _, m := range known {
		if _, na := notApplicable[m[1]]; !na && !slices.Contains(conformanceScenarios, m[1]) {
			t.Errorf("scenario %s is neither run nor listed as not applicable", m[1])
		}
	}

	h := startHTTP(t, t.TempDir())
	// A workspace, so that lists and completions have something in them.
	cs := connectHTTP(t, h.url, "2025-11-25")
	if text, _, isErr := call(t, cs, "memory_create", map[string]any{"path": "/memories/workspaces/demo/task.md", "file_text": "- Amounts in EUR.\n"}); isErr {
		t.Fatalf("seed: %s", text)
	}
	for _, sc := range conformanceScenarios {
		t.Run(sc, func(t *testing.T) {
			results := t.TempDir()
			out, err := conformance(t, dir, "server", "--url", h.url, "--scenario", sc, "--output-dir", results)
			files, _ := filepath.Glob(filepath.Join(results, "server-"+sc+"-*", "checks.json"))
			if len(files) != 1 {
				t.Fatalf("no checks.json (err %v):\n%s", err, out)
			}
			data, rerr := os.ReadFile(files[0])
			if rerr != nil {
				t.Fatal(rerr)
			}
			var checks []struct {
				ID           string `json:"id"`
				Status       string `json:"status"`
				ErrorMessage string `json:"errorMessage"`
			}
			if err := json.Unmarshal(data, &checks); err != nil || len(checks) == 0 {
				t.Fatalf("checks.json: %v\n%s", err, data)
			}
			for _, c := range checks {
				if c.Status != "SUCCESS" && c.Status != "INFO" {
					t.Errorf("check %s: %s: %s", c.ID, c.Status, c.ErrorMessage)
				}
			}
			if err != nil {
				t.Errorf("conformance CLI: %v\n%s", err, out)
			}
		})
	}
}
