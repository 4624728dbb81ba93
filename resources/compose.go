package resources

import (
	"fmt"
	"strings"

	"github.com/selmem/selmem/internal/textcut"
)

// RelationshipsSource is the schema name of schemas/relationships.md, the
// cross-source join keys; it is composed after the per-source profiles.
const RelationshipsSource = "relationships"

// maxHeadlineBytes bounds a schema headline.
const maxHeadlineBytes = 200

// Workspace is the memory of one workspace as Compose needs it: only the
// items in force, with front matter removed, in a stable order.
// [LoadWorkspace] builds one from a store.
type Workspace struct {
	Name        string // the directory name under /memories/workspaces
	Title       string // workspace.yaml title; may be empty
	Description string // workspace.yaml description; may be empty
	Task        *Item  // task.md; nil when absent or not in force
	Output      *Item  // output.md; nil when absent or not in force
	Tools       []Item // tools/<name>.yaml, sorted by Name
	Schemas     []Item // schemas/<source>.md, sorted by Name, relationships last
}

// Item is one memory file prepared for composition.
type Item struct {
	Name string // tool or source name; "task" and "output" for those files
	URI  string // the resource that serves the item in full
	Text string // the content without front matter, without trailing blank lines
}

// section modes, from the fullest to the most compact.
const (
	modeFull      = iota // everything
	modeHeadlines        // one line per item with its URI
	modePointer          // one line pointing at the collection's resource
)

// plan says how much of each category a composition keeps.
type plan struct {
	schemas, tools int // a mode
	output, task   int // lines kept; -1 keeps all
}

// Compose renders the workspace's session context: a header, then task
// specifications, output constraints, tool configurations and data schemas,
// always in that order, with absent categories left out. The text holds no
// timestamps or other volatile values, so the same memory gives
// byte-identical output.
//
// When the text would exceed budget tokens (as count measures them; a budget
// <= 0 means no limit), Compose degrades step by step until it fits: schema
// profiles shrink to one headline per source with its resource URI, then to
// a pointer to the schemas resource; tool configurations shrink to their
// names; then output constraints and finally task specifications are cut at
// a line boundary. A closing "Left out" section says what is missing and
// where to read it in full; omitted lists the URIs of the resources not
// fully included, in composition order. If no form fits, Compose returns
// the smallest it tried.
func Compose(ws Workspace, budget int, count func(string) int) (text string, omitted []string) {
	p := plan{schemas: modeFull, tools: modeFull, output: -1, task: -1}
	text, omitted = render(ws, p, budget)
	if budget <= 0 {
		return text, omitted
	}
	// try renders p and keeps the smallest attempt, which is the answer when
	// nothing fits (a cut's notes can cost more than the lines it saves).
	bestN := count(text)
	best, bestOmitted := text, omitted
	try := func(p plan) bool {
		t, o := render(ws, p, budget)
		n := count(t)
		if n < bestN || (n <= budget && bestN > budget) {
			best, bestOmitted, bestN = t, o, n
		}
		if n <= budget {
			text, omitted = t, o
			return true
		}
		return false
	}
	if bestN <= budget {
		return text, omitted
	}
	// Shrink schemas to headlines, then to a pointer, then tools to names.
	var steps []plan
	if len(ws.Schemas) > 0 {
		p.schemas = modeHeadlines
		steps = append(steps, p)
		p.schemas = modePointer
		steps = append(steps, p)
	}
	if len(ws.Tools) > 0 {
		p.tools = modeHeadlines
		steps = append(steps, p)
	}
	for _, step := range steps {
		p = step
		if try(p) {
			return text, omitted
		}
	}
	// Cut the output constraints, then the task specifications, keeping as
	// many leading lines as fit.
	for _, it := range []struct {
		item *Item
		keep *int
	}{{ws.Output, &p.output}, {ws.Task, &p.task}} {
		if it.item == nil {
			continue
		}
		// Find the largest k in [0, n) that fits; k = n was tried already.
		n := strings.Count(it.item.Text, "\n") + 1
		lo, hi := -1, n-1 // lo fits (or is -1); nothing above hi fits
		for lo < hi {
			mid := (lo + hi + 1) / 2
			*it.keep = mid
			if t, _ := render(ws, p, budget); count(t) <= budget {
				lo = mid
			} else {
				hi = mid - 1
			}
		}
		*it.keep = max(lo, 0)
		if try(p) {
			return text, omitted
		}
	}
	return best, bestOmitted
}

// render writes the composition that p describes.
func render(ws Workspace, p plan, budget int) (string, []string) {
	var b strings.Builder
	var left []string // lines of the Left out section
	var omitted []string
	leave := func(note string, uris ...string) {
		omitted = append(omitted, uris...)
		left = append(left, "- "+note)
	}

	b.WriteString("# Workspace " + ws.Name)
	if t := oneLine(ws.Title); t != "" {
		b.WriteString(": " + t)
	}
	b.WriteString("\n")
	if d := strings.TrimSpace(ws.Description); d != "" {
		b.WriteString("\n" + d + "\n")
	}
	if ws.Task == nil && ws.Output == nil && len(ws.Tools) == 0 && len(ws.Schemas) == 0 {
		b.WriteString("\nThis workspace has no task specifications, output constraints, tool configurations or data schemas yet.\n")
		return b.String(), nil
	}

	for _, s := range []struct {
		title string
		item  *Item
		keep  int
		names []string // headings that only repeat the section title
	}{
		{"Task specifications", ws.Task, p.task, []string{"task", "tasks", "task specification", "task specifications"}},
		{"Output constraints", ws.Output, p.output, []string{"output", "output constraint", "output constraints"}},
	} {
		if s.item == nil {
			continue
		}
		b.WriteString("\n## " + s.title + "\n\n")
		// Headings nest under the section's; a stripped title's own
		// subheadings move up one level.
		text, by := stripTitle(s.item.Text, s.names...), 2
		if text != s.item.Text {
			by = 1
		}
		body, cut := cutLines(text, s.keep)
		if body != "" {
			b.WriteString(demote(body, by) + "\n")
		}
		if cut {
			fmt.Fprintf(&b, "[… cut for the token budget; read the rest from %s]\n", s.item.URI)
			leave(fmt.Sprintf("the rest of the %s: %s", strings.ToLower(s.title), s.item.URI), s.item.URI)
		}
	}

	if len(ws.Tools) > 0 {
		b.WriteString("\n## Tool configurations\n\n")
		switch p.tools {
		case modeFull:
			for i, t := range ws.Tools {
				if i > 0 {
					b.WriteString("\n")
				}
				fence := fenceFor(t.Text)
				fmt.Fprintf(&b, "### %s\n\n%syaml\n%s\n%s\n", t.Name, fence, t.Text, fence)
			}
		default:
			names := make([]string, len(ws.Tools))
			for i, t := range ws.Tools {
				names[i] = t.Name
			}
			uri := ws.Tools[0].URI
			fmt.Fprintf(&b, "Configured tools: %s. Read their configurations from %s.\n", strings.Join(names, ", "), uri)
			leave(fmt.Sprintf("the tool configurations (%s): %s", strings.Join(names, ", "), uri), uri)
		}
	}

	if len(ws.Schemas) > 0 {
		b.WriteString("\n## Data schemas\n\n")
		switch p.schemas {
		case modeFull:
			for i, s := range ws.Schemas {
				if i > 0 {
					b.WriteString("\n")
				}
				b.WriteString("### " + s.Name + "\n")
				if body := strings.TrimLeft(stripTitle(s.Text, s.Name), "\n"); body != "" {
					b.WriteString("\n" + demote(body, 3) + "\n")
				}
			}
		case modeHeadlines:
			b.WriteString("Profiles shortened to headlines; read a profile in full from its URI.\n\n")
			uris := make([]string, len(ws.Schemas))
			for i, s := range ws.Schemas {
				fmt.Fprintf(&b, "- %s: %s (%s)\n", s.Name, headline(s.Text, s.Name), s.URI)
				uris[i] = s.URI
			}
			leave(fmt.Sprintf("the full data schema profiles (%d): read each from the URI after its headline", len(uris)), uris...)
		default:
			names := make([]string, len(ws.Schemas))
			for i, s := range ws.Schemas {
				names[i] = s.Name
			}
			uri := schemasURI(ws.Schemas[0].URI)
			fmt.Fprintf(&b, "Profiled sources: %s. Read the profiles from %s.\n", strings.Join(names, ", "), uri)
			uris := make([]string, len(ws.Schemas))
			for i, s := range ws.Schemas {
				uris[i] = s.URI
			}
			leave(fmt.Sprintf("the data schema profiles (%s): %s", strings.Join(names, ", "), uri), uris...)
		}
	}

	if len(left) > 0 {
		fmt.Fprintf(&b, "\n## Left out\n\nTo fit the %d-token budget, this context leaves out:\n\n%s\n", budget, strings.Join(left, "\n"))
	}
	return b.String(), omitted
}

// schemasURI returns the collection URI of a schema's URI.
func schemasURI(schemaURI string) string {
	if i := strings.LastIndex(schemaURI, "/"); i >= 0 {
		return schemaURI[:i]
	}
	return schemaURI
}

// cutLines keeps the first keep lines of text (all when keep < 0), closing a
// code fence the cut leaves open. cut reports whether lines were dropped.
func cutLines(text string, keep int) (out string, cut bool) {
	lines := strings.Split(text, "\n")
	if keep < 0 || keep >= len(lines) {
		return text, false
	}
	lines = lines[:keep]
	if fence := openFence(lines); fence != "" {
		lines = append(lines, fence)
	}
	return strings.TrimRight(strings.Join(lines, "\n"), "\n"), true
}

// openFence returns the fence that closes a code block left open at the end
// of lines, or "".
func openFence(lines []string) string {
	open := ""
	for _, l := range lines {
		t := strings.TrimSpace(l)
		switch {
		case open == "" && (strings.HasPrefix(t, "```") || strings.HasPrefix(t, "~~~")):
			open = t[:fenceLen(t)]
		case open != "" && strings.HasPrefix(t, open) && strings.TrimLeft(t, open[:1]) == "":
			open = ""
		}
	}
	return open
}

// fenceLen returns the length of the run of fence characters t starts with.
func fenceLen(t string) int {
	n := 0
	for n < len(t) && t[n] == t[0] {
		n++
	}
	return n
}

// demote adds by levels to every ATX heading outside code blocks (at most
// level 6), so that a file's headings nest under the section's heading.
func demote(text string, by int) string {
	lines := strings.Split(text, "\n")
	open := ""
	for i, l := range lines {
		t := strings.TrimSpace(l)
		if open == "" && (strings.HasPrefix(t, "```") || strings.HasPrefix(t, "~~~")) {
			open = t[:fenceLen(t)]
			continue
		}
		if open != "" {
			if strings.HasPrefix(t, open) && strings.TrimLeft(t, open[:1]) == "" {
				open = ""
			}
			continue
		}
		if level := headingLevel(l); level > 0 {
			lines[i] = strings.Repeat("#", min(level+by, 6)) + l[level:]
		}
	}
	return strings.Join(lines, "\n")
}

// headingLevel returns the level of an ATX heading line, or 0.
func headingLevel(l string) int {
	n := 0
	for n < len(l) && l[n] == '#' {
		n++
	}
	if n == 0 || n > 6 || (n < len(l) && l[n] != ' ' && l[n] != '\t') {
		return 0
	}
	return n
}

// stripTitle drops a first heading that only repeats one of names, in any
// case (the profiler titles a profile with its source; task.md often opens
// with "# Task").
func stripTitle(text string, names ...string) string {
	first, rest, _ := strings.Cut(text, "\n")
	if level := headingLevel(first); level > 0 {
		for _, n := range names {
			if strings.EqualFold(strings.TrimSpace(first[level:]), n) {
				return strings.TrimLeft(rest, "\n")
			}
		}
	}
	return text
}

// headline returns the first line of a profile that is not a heading, or its
// first heading, bounded to maxHeadlineBytes.
func headline(text, name string) string {
	var heading string
	for _, l := range strings.Split(text, "\n") {
		l = strings.TrimSpace(l)
		if l == "" {
			continue
		}
		if level := headingLevel(l); level > 0 {
			if h := strings.TrimSpace(l[level:]); heading == "" && h != name {
				heading = h
			}
			continue
		}
		return truncate(strings.TrimPrefix(l, "- "), maxHeadlineBytes)
	}
	if heading == "" {
		return "(empty profile)"
	}
	return truncate(heading, maxHeadlineBytes)
}

// truncate shortens s to at most n bytes at a rune boundary, marking the cut.
func truncate(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return textcut.Prefix(s, n-len("…")) + "…"
}

// oneLine returns the first line of s, trimmed.
func oneLine(s string) string {
	first, _, _ := strings.Cut(strings.TrimSpace(s), "\n")
	return strings.TrimSpace(first)
}

// fenceFor returns a backtick fence longer than any backtick run in text.
func fenceFor(text string) string {
	longest, run := 0, 0
	for i := 0; i < len(text); i++ {
		if text[i] == '`' {
			run++
			longest = max(longest, run)
		} else {
			run = 0
		}
	}
	return strings.Repeat("`", max(3, longest+1))
}
