package memstore

import (
	"path"
	"strings"

	"github.com/selmem/selmem/memstore/gate"
)

// maxChunkBytes bounds a chunk's text; longer sections are split at line
// boundaries.
const maxChunkBytes = 1500

// headingSep joins the levels of a heading path and the parts of a context
// prefix.
const headingSep = " › "

// indexable reports whether files at rel are indexed for search: memory
// documents are, artifact program and data files are not.
func indexable(rel string) bool {
	switch strings.ToLower(path.Ext(rel)) {
	case ".md", ".yaml", ".yml", ".json", ".txt":
	default:
		return false
	}
	parts := strings.Split(rel, "/")
	return !(len(parts) > 3 && parts[0] == "workspaces" && parts[2] == "artifacts" && strings.Contains(rel, "/data/"))
}

// scopeOf returns the scope of a repository-relative path.
func scopeOf(rel string) string {
	switch first, _, _ := strings.Cut(rel, "/"); first {
	case "org":
		return ScopeOrg
	case "users":
		return ScopeUser
	case "workspaces":
		return ScopeWorkspace
	}
	return ScopeOther
}

// typeOf derives an item type from where a file lives, for files whose
// front matter does not name one.
func typeOf(rel string) string {
	parts := strings.Split(rel, "/")
	switch scopeOf(rel) {
	case ScopeOrg:
		return "rule"
	case ScopeUser:
		return "preference"
	case ScopeWorkspace:
		if len(parts) == 3 {
			switch parts[2] {
			case "task.md":
				return "task"
			case "output.md":
				return "output"
			case "workspace.yaml", "workspace.yml":
				return "workspace"
			}
		}
		if len(parts) > 3 {
			switch parts[2] {
			case "tools":
				return "tool"
			case "schemas":
				return "schema"
			case "artifacts":
				return "artifact"
			}
		}
	}
	return "note"
}

// chunkFile splits the file at rel into index chunks: markdown by heading
// (with the heading path), other files whole; long pieces are split.
// Embeddings are left empty.
func chunkFile(rel string, content []byte, commit string) []Chunk {
	base := Chunk{
		Path:      virtual(rel),
		Workspace: workspaceOf(rel),
		Scope:     scopeOf(rel),
		Type:      typeOf(rel),
		Commit:    commit,
	}
	body, firstLine := content, 1
	if strings.EqualFold(path.Ext(rel), ".md") {
		if fm, b, line, err := gate.ParseFrontMatter(content); err == nil {
			body, firstLine = b, line
			if fm.Type != "" {
				base.Type = fm.Type
			}
			base.Source = fm.Source
			if fm.Confidence != nil {
				base.Confidence = *fm.Confidence
			}
			base.ValidFrom, base.InvalidAt, base.ExpiresAt = fm.ValidFrom, fm.InvalidAt, fm.ExpiresAt
		}
	}
	display := rel
	switch base.Scope {
	case ScopeWorkspace:
		display = strings.Join(strings.Split(rel, "/")[2:], "/")
	case ScopeOrg, ScopeUser:
		display = strings.TrimPrefix(rel, "org/")
	}
	prefix := display
	if base.Workspace != "" {
		prefix = base.Workspace + headingSep + display
	}

	var sections []section
	if strings.EqualFold(path.Ext(rel), ".md") {
		sections = markdownSections(splitLines(string(body)), firstLine)
	} else {
		sections = []section{{lines: splitLines(string(body)), start: firstLine}}
	}
	var out []Chunk
	for _, sec := range sections {
		for _, piece := range splitSection(sec) {
			text := strings.TrimSpace(strings.Join(piece.lines, "\n"))
			if text == "" {
				continue
			}
			c := base
			c.Seq = len(out)
			c.Heading = strings.Join(sec.headings, headingSep)
			c.StartLine = piece.start
			c.EndLine = piece.start + len(piece.lines) - 1
			c.Context = prefix
			if c.Heading != "" {
				c.Context += headingSep + c.Heading
			}
			c.Text = text
			out = append(out, c)
		}
	}
	return out
}

// section is a run of lines starting at line start (1-indexed), under a
// heading path.
type section struct {
	headings []string
	lines    []string
	start    int
}

// markdownSections splits lines at ATX headings outside fenced code blocks.
func markdownSections(lines []string, first int) []section {
	var out []section
	var stack []string // heading texts by level, index level-1
	cur := section{start: first}
	fence := ""
	for i, l := range lines {
		trimmed := strings.TrimSpace(l)
		if fence == "" && (strings.HasPrefix(trimmed, "```") || strings.HasPrefix(trimmed, "~~~")) {
			fence = trimmed[:3]
		} else if fence != "" && strings.HasPrefix(trimmed, fence) {
			fence = ""
		} else if fence == "" {
			if level, text, ok := atxHeading(l); ok {
				if len(cur.lines) > 0 {
					out = append(out, cur)
				}
				if level > len(stack) {
					for len(stack) < level-1 {
						stack = append(stack, "")
					}
					stack = append(stack, text)
				} else {
					stack = append(stack[:level-1], text)
				}
				cur = section{headings: nonEmpty(stack), start: first + i}
			}
		}
		cur.lines = append(cur.lines, l)
	}
	if len(cur.lines) > 0 {
		out = append(out, cur)
	}
	return out
}

func nonEmpty(xs []string) []string {
	out := make([]string, 0, len(xs))
	for _, x := range xs {
		if x != "" {
			out = append(out, x)
		}
	}
	return out
}

// atxHeading parses "## Title" lines (up to three leading spaces).
func atxHeading(l string) (level int, text string, ok bool) {
	s := strings.TrimLeft(l, " ")
	if len(l)-len(s) > 3 {
		return 0, "", false
	}
	for level < len(s) && level < 7 && s[level] == '#' {
		level++
	}
	if level == 0 || level > 6 || (level < len(s) && s[level] != ' ' && s[level] != '\t') {
		return 0, "", false
	}
	text = strings.TrimSpace(strings.TrimRight(strings.TrimSpace(s[level:]), "#"))
	return level, text, true
}

// splitSection cuts a section into pieces of at most maxChunkBytes, at line
// boundaries (a single longer line is its own piece).
func splitSection(sec section) []section {
	var out []section
	cur := section{start: sec.start}
	size := 0
	for i, l := range sec.lines {
		if size > 0 && size+len(l)+1 > maxChunkBytes {
			out = append(out, cur)
			cur = section{start: sec.start + i}
			size = 0
		}
		cur.lines = append(cur.lines, l)
		size += len(l) + 1
	}
	if len(cur.lines) > 0 {
		out = append(out, cur)
	}
	return out
}
