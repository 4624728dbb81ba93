package memstore

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"maps"
	"os"
	"path"
	"slices"
	"sort"
	"strconv"
	"strings"
	"testing/fstest"

	"github.com/go-git/go-git/v5/plumbing/object"
)

// maxViewLines is the longest file View numbers, as in the memory tool.
const maxViewLines = 999_999

// View shows a directory (entries up to two levels deep with their sizes,
// hidden items excluded) or a file with numbered lines. viewRange, when not
// nil, is [start, end] with 1-indexed lines and end -1 meaning the last line.
func (s *Store) View(ctx context.Context, p string, viewRange []int) (string, error) {
	rel, pr, src, err := s.readPath(ctx, p)
	if err != nil {
		return "", err
	}
	vp := virtual(rel)
	fsys, err := s.readFS(ctx, rel)
	if err != nil {
		return "", err
	}
	info, err := fs.Stat(fsys, fsName(rel))
	if errors.Is(err, fs.ErrNotExist) {
		return "", notExist(vp, "")
	}
	if err != nil {
		return "", err
	}
	if info.IsDir() {
		if viewRange != nil {
			return "", &Error{Kind: ErrInvalid, Msg: "Error: view_range is not allowed when path points to a directory.",
				Hint: "Leave view_range out to list " + vp + "."}
		}
		return s.viewDir(fsys, rel, s.visibleFunc(pr, src))
	}
	content, err := fs.ReadFile(fsys, fsName(rel))
	if err != nil {
		return "", err
	}
	lines := splitLines(string(content))
	if len(lines) > maxViewLines {
		return "", &Error{Kind: ErrInvalid, Msg: fmt.Sprintf("File %s exceeds maximum line limit of %d lines.", vp, maxViewLines)}
	}
	start, end := 1, len(lines)
	if viewRange != nil {
		if start, end, err = checkRange(viewRange, len(lines)); err != nil {
			return "", err
		}
	}
	var b strings.Builder
	fmt.Fprintf(&b, "Here's the content of %s with line numbers:\n", vp)
	numberLines(&b, lines[start-1:end], start)
	return b.String(), nil
}

func checkRange(r []int, n int) (start, end int, err error) {
	bad := func(why string) error {
		return &Error{Kind: ErrInvalid,
			Msg:  fmt.Sprintf("Error: Invalid `view_range` parameter: [%s]. %s", joinInts(r), why),
			Hint: fmt.Sprintf("Use [start, end] with 1 <= start <= end <= %d, or end -1 for the end of the file.", n)}
	}
	if len(r) != 2 {
		return 0, 0, bad("It should be a list of two integers.")
	}
	start, end = r[0], r[1]
	if end == -1 {
		end = n
	}
	switch {
	case start < 1 || start > max(n, 1):
		return 0, 0, bad(fmt.Sprintf("Its first element %d should be within the range of lines of the file: [1, %d].", start, n))
	case end > n:
		return 0, 0, bad(fmt.Sprintf("Its second element %d should be smaller than the number of lines in the file: %d.", end, n))
	case end < start:
		return 0, 0, bad(fmt.Sprintf("Its second element %d should be larger or equal than its first %d.", end, start))
	}
	return start, end, nil
}

// numberLines writes lines numbered from first: six-wide right-aligned
// number, a tab, the line.
func numberLines(b *strings.Builder, lines []string, first int) {
	for i, l := range lines {
		fmt.Fprintf(b, "%6d\t%s\n", first+i, l)
	}
}

// splitLines splits text into lines; a final newline does not start a line.
func splitLines(text string) []string {
	if text == "" {
		return nil
	}
	return strings.Split(strings.TrimSuffix(text, "\n"), "\n")
}

// dirEntry is one row of a directory view.
type dirEntry struct {
	rel  string
	size int64
}

// readFS returns the files a read of rel sees: the working files (the
// published branch), HEAD's own files below rel while the working files
// may lag behind it (workingCurrent), or, for the owner of an open draft
// of rel's workspace, that workspace's files with the draft over the
// published ones.
func (s *Store) readFS(ctx context.Context, rel string) (fs.FS, error) {
	o, err := s.overlayFor(ctx, rel)
	switch {
	case err != nil:
		return nil, err
	case o != nil:
		return o.fsys()
	case !s.workingCurrent():
		return s.headFS(rel)
	}
	return os.DirFS(s.dir), nil
}

// headFS returns HEAD's files at or below rel, at their
// repository-relative paths, for reads while the working files lag.
func (s *Store) headFS(rel string) (fs.FS, error) {
	tree, err := s.git.headTree()
	if err != nil {
		return nil, err
	}
	files, err := filesBelow(tree, rel)
	if err != nil {
		return nil, err
	}
	out := fstest.MapFS{}
	for p, h := range files {
		data, err := s.git.blob(h)
		if err != nil {
			return nil, err
		}
		out[p] = &fstest.MapFile{Data: data, Mode: 0o644}
	}
	if rel == "" {
		return out, nil
	}
	content, ok, err := readFile(tree, rel)
	if err != nil {
		return nil, err
	}
	if ok {
		out[rel] = &fstest.MapFile{Data: content, Mode: 0o644}
	}
	return out, nil
}

// headFile is Read of the file rel (virtual path p) from HEAD.
func (s *Store) headFile(p, rel string) ([]byte, string, error) {
	tree, err := s.git.headTree()
	if err != nil {
		return nil, "", err
	}
	content, ok, err := readFile(tree, rel)
	if err != nil {
		return nil, "", err
	}
	if !ok {
		return nil, "", notExist(p, "")
	}
	return content, blobSHA(content), nil
}

// fsName is the io/fs name of the repository-relative path rel.
func fsName(rel string) string {
	if rel == "" {
		return "."
	}
	return rel
}

// viewDir lists the directory rel of fsys; visible, when not nil, says
// which entries the principal may see (the others, and their sizes, are
// left out).
func (s *Store) viewDir(fsys fs.FS, rel string, visible func(rel string) bool) (string, error) {
	var rows []dirEntry
	var walk func(dir string, depth int) (int64, error)
	walk = func(dir string, depth int) (int64, error) {
		entries, err := fs.ReadDir(fsys, fsName(dir))
		if errors.Is(err, fs.ErrNotExist) && dir != rel {
			return 0, nil // removed by a concurrent write since it was listed
		}
		if err != nil {
			return 0, err
		}
		var total int64
		for _, e := range entries {
			if strings.HasPrefix(e.Name(), ".") || e.Name() == "node_modules" {
				continue
			}
			child := path.Join(dir, e.Name())
			if visible != nil && !visible(child) {
				continue
			}
			var size int64
			if e.IsDir() {
				at := len(rows)
				if depth < 2 {
					rows = append(rows, dirEntry{rel: child})
				}
				size, err = walk(child, depth+1)
				if err != nil {
					return 0, err
				}
				if depth < 2 {
					rows[at].size = size
				}
			} else if e.Type().IsRegular() {
				info, err := e.Info()
				if errors.Is(err, fs.ErrNotExist) {
					continue // removed by a concurrent write since it was listed
				}
				if err != nil {
					return 0, err
				}
				size = info.Size()
				if depth < 2 {
					rows = append(rows, dirEntry{rel: child, size: size})
				}
			}
			total += size
		}
		return total, nil
	}
	total, err := walk(rel, 0)
	if err != nil {
		return "", err
	}
	sort.Slice(rows, func(i, j int) bool { return rows[i].rel < rows[j].rel })
	var b strings.Builder
	fmt.Fprintf(&b, "Here're the files and directories up to 2 levels deep in %s, excluding hidden items and node_modules:\n", virtual(rel))
	fmt.Fprintf(&b, "%s\t%s\n", humanSize(total), virtual(rel))
	for _, r := range rows {
		fmt.Fprintf(&b, "%s\t%s\n", humanSize(r.size), virtual(r.rel))
	}
	return b.String(), nil
}

// humanSize formats a byte count like du -h: 512, 1.5K, 12K, 3.4M.
func humanSize(n int64) string {
	const unit = 1024
	if n < unit {
		return strconv.FormatInt(n, 10)
	}
	f := float64(n)
	for _, u := range []string{"K", "M", "G", "T"} {
		f /= unit
		if f < unit || u == "T" {
			if f < 10 {
				return fmt.Sprintf("%.1f%s", f, u)
			}
			return fmt.Sprintf("%.0f%s", f, u)
		}
	}
	panic("unreachable")
}

// target resolves a write's path and loads the head commit under the
// store's lock. A principal who may not read the path is refused before
// anything about it is looked at (see mayTouch). The head is what the
// write reads: the published commit, or the draft view when the write goes
// to the principal's draft (Store.headFor).
func (s *Store) target(ctx context.Context, p string, w *WriteOptions) (rel string, head *object.Commit, tree *object.Tree, err error) {
	if err := validateWrite(w); err != nil {
		return "", nil, nil, err
	}
	if rel, err = gatePath(p, s.opts.Limits); err != nil {
		return "", nil, nil, err
	}
	if head, err = s.headFor(ctx, w, rel); err != nil {
		return "", nil, nil, err
	}
	if tree, err = head.Tree(); err != nil {
		return "", nil, nil, err
	}
	if err := s.mayTouch(ctx, tree, rel); err != nil {
		return "", nil, nil, err
	}
	return rel, head, tree, s.checkLinks(rel)
}

// checkExpected enforces WriteOptions.ExpectedSHA against the current
// content (nil when the file does not exist).
func checkExpected(vp string, current []byte, exists bool, w *WriteOptions) error {
	if w == nil || w.ExpectedSHA == "" {
		return nil
	}
	cur := "none (the file does not exist)"
	if exists {
		cur = blobSHA(current)
		if strings.EqualFold(cur, w.ExpectedSHA) {
			return nil
		}
	}
	return &Error{Kind: ErrConflict,
		Msg:  fmt.Sprintf("Error: %s has changed since it was read: its current sha is %s, not %s.", vp, cur, w.ExpectedSHA),
		Hint: "View the file again and retry the edit against its current content. Nothing was written."}
}

// Create writes a new file. It refuses to overwrite an existing path.
func (s *Store) Create(ctx context.Context, p, text string, w *WriteOptions) (WriteResult, error) {
	return s.lockedWrite(ctx, func() (WriteResult, error) { return s.createLocked(ctx, p, text, w) })
}

func (s *Store) createLocked(ctx context.Context, p, text string, w *WriteOptions) (WriteResult, error) {
	rel, head, tree, err := s.target(ctx, p, w)
	if err != nil {
		return WriteResult{}, err
	}
	vp := virtual(rel)
	isFile, isDir, err := entryKind(tree, rel)
	if err != nil {
		return WriteResult{}, err
	}
	if isFile || isDir {
		return WriteResult{}, &Error{Kind: ErrExists, Msg: fmt.Sprintf("Error: File %s already exists", vp),
			Hint: "Use str_replace or insert to edit it, or delete it first."}
	}
	if err := checkExpected(vp, nil, false, w); err != nil {
		return WriteResult{}, err
	}
	commit, err := s.write(ctx, head, []change{{Path: rel, Content: []byte(text)}}, "create "+rel, "memory_create", w)
	if err != nil {
		return WriteResult{}, err
	}
	return WriteResult{Message: "File created successfully at: " + vp, Commit: commit, SHA: blobSHA([]byte(text))}, nil
}

// loadFile reads the existing file rel for an edit, with the memory tool's
// error when it is missing.
func loadFile(tree *object.Tree, rel string, missingPrefix string) ([]byte, error) {
	content, ok, err := readFile(tree, rel)
	if err != nil {
		return nil, err
	}
	if !ok {
		if _, isDir, _ := entryKind(tree, rel); isDir {
			return nil, &Error{Kind: ErrInvalid, Msg: fmt.Sprintf("Error: The path %s is a directory.", virtual(rel)),
				Hint: "Give the path of a file; view the directory to see its files."}
		}
		return nil, notExist(virtual(rel), missingPrefix)
	}
	return content, nil
}

// editable resolves the file an edit applies to, under the store's lock: its path, the
// head commit and the current content, after the expected-sha check.
func (s *Store) editable(ctx context.Context, p string, w *WriteOptions) (rel string, head *object.Commit, content []byte, err error) {
	rel, head, tree, err := s.target(ctx, p, w)
	if err != nil {
		return "", nil, nil, err
	}
	if content, err = loadFile(tree, rel, "Error: "); err != nil {
		return "", nil, nil, err
	}
	if err := checkExpected(virtual(rel), content, true, w); err != nil {
		return "", nil, nil, err
	}
	return rel, head, content, nil
}

// StrReplace replaces the only occurrence of old with new in a file.
func (s *Store) StrReplace(ctx context.Context, p, old, new string, w *WriteOptions) (WriteResult, error) {
	return s.lockedWrite(ctx, func() (WriteResult, error) { return s.strReplaceLocked(ctx, p, old, new, w) })
}

func (s *Store) strReplaceLocked(ctx context.Context, p, old, new string, w *WriteOptions) (WriteResult, error) {
	rel, head, content, err := s.editable(ctx, p, w)
	if err != nil {
		return WriteResult{}, err
	}
	vp := virtual(rel)
	if old == "" {
		return WriteResult{}, &Error{Kind: ErrInvalid, Msg: "Error: old_str must not be empty.",
			Hint: "Give the exact text to replace, or use insert to add lines."}
	}
	text := string(content)
	switch n, lines := occurrences(text, old); n {
	case 0:
		return WriteResult{}, &Error{Kind: ErrNotFound,
			Msg: fmt.Sprintf("No replacement was performed, old_str `%s` did not appear verbatim in %s.", old, vp)}
	case 1:
	default:
		return WriteResult{}, &Error{Kind: ErrConflict,
			Msg: fmt.Sprintf("No replacement was performed. Multiple occurrences of old_str `%s` in lines: %s. Please ensure it is unique",
				old, joinInts(lines))}
	}
	at := strings.Index(text, old)
	updated := text[:at] + new + text[at+len(old):]
	commit, err := s.write(ctx, head, []change{{Path: rel, Content: []byte(updated)}}, "str_replace "+rel, "memory_str_replace", w)
	if err != nil {
		return WriteResult{}, err
	}
	// Show the edited region with a few lines of context.
	first := strings.Count(updated[:at], "\n") + 1
	last := first + strings.Count(new, "\n")
	lines := splitLines(updated)
	from, to := max(first-4, 1), min(last+4, len(lines))
	var b strings.Builder
	b.WriteString("The memory file has been edited.\n")
	if from <= to {
		numberLines(&b, lines[from-1:to], from)
	}
	return WriteResult{Message: b.String(), Commit: commit, SHA: blobSHA([]byte(updated))}, nil
}

// occurrences counts the non-overlapping occurrences of sub in text and
// returns the 1-indexed lines they start on, each line once, in order.
func occurrences(text, sub string) (n int, lines []int) {
	line, from := 1, 0
	for {
		i := strings.Index(text[from:], sub)
		if i < 0 {
			return n, lines
		}
		n++
		line += strings.Count(text[from:from+i], "\n")
		if len(lines) == 0 || lines[len(lines)-1] != line {
			lines = append(lines, line)
		}
		line += strings.Count(sub, "\n")
		from += i + len(sub)
	}
}

func joinInts(xs []int) string {
	parts := make([]string, len(xs))
	for i, x := range xs {
		parts[i] = strconv.Itoa(x)
	}
	return strings.Join(parts, ", ")
}

// Insert inserts text after line (0 inserts at the top; line is in [0, n]).
func (s *Store) Insert(ctx context.Context, p string, line int, text string, w *WriteOptions) (WriteResult, error) {
	return s.lockedWrite(ctx, func() (WriteResult, error) { return s.insertLocked(ctx, p, line, text, w) })
}

func (s *Store) insertLocked(ctx context.Context, p string, line int, text string, w *WriteOptions) (WriteResult, error) {
	rel, head, content, err := s.editable(ctx, p, w)
	if err != nil {
		return WriteResult{}, err
	}
	vp := virtual(rel)
	lines := splitLines(string(content))
	if line < 0 || line > len(lines) {
		return WriteResult{}, &Error{Kind: ErrInvalid,
			Msg: fmt.Sprintf("Error: Invalid `insert_line` parameter: %d. It should be within the range of lines of the file: [0, %d]", line, len(lines))}
	}
	updated := insertLines(lines, line, text)
	commit, err := s.write(ctx, head, []change{{Path: rel, Content: []byte(updated)}}, "insert "+rel, "memory_insert", w)
	if err != nil {
		return WriteResult{}, err
	}
	return WriteResult{Message: fmt.Sprintf("The file %s has been edited.", vp), Commit: commit, SHA: blobSHA([]byte(updated))}, nil
}

// insertLines returns the file made of lines with text's lines inserted
// after the line-th one. The result always ends with a newline.
func insertLines(lines []string, line int, text string) string {
	added := splitLines(text)
	if len(added) == 0 {
		added = []string{""}
	}
	out := make([]string, 0, len(lines)+len(added))
	out = append(out, lines[:line]...)
	out = append(out, added...)
	out = append(out, lines[line:]...)
	return strings.Join(out, "\n") + "\n"
}

// existing reports whether rel, which must exist in tree, is a file (else a
// directory), with the memory tool's error when it is neither.
func existing(tree *object.Tree, rel string) (isFile bool, err error) {
	isFile, isDir, err := entryKind(tree, rel)
	if err != nil {
		return false, err
	}
	if !isFile && !isDir {
		return false, &Error{Kind: ErrNotFound, Msg: "Error: The path " + virtual(rel) + " does not exist"}
	}
	return isFile, nil
}

// Delete removes a file, or a directory and everything below it. The root
// cannot be deleted.
func (s *Store) Delete(ctx context.Context, p string, w *WriteOptions) (WriteResult, error) {
	return s.lockedWrite(ctx, func() (WriteResult, error) { return s.deleteLocked(ctx, p, w) })
}

func (s *Store) deleteLocked(ctx context.Context, p string, w *WriteOptions) (WriteResult, error) {
	rel, head, tree, err := s.target(ctx, p, w)
	if err != nil {
		return WriteResult{}, err
	}
	vp := virtual(rel)
	if rel == "" {
		return WriteResult{}, &Error{Kind: ErrInvalid, Msg: "Error: Cannot delete the " + Root + " directory itself.",
			Hint: "Delete the files or directories inside it instead."}
	}
	isFile, err := existing(tree, rel)
	if err != nil {
		return WriteResult{}, err
	}
	if isFile {
		content, _, err := readFile(tree, rel)
		if err != nil {
			return WriteResult{}, err
		}
		if err := checkExpected(vp, content, true, w); err != nil {
			return WriteResult{}, err
		}
	}
	commit, err := s.write(ctx, head, []change{{Path: rel, Delete: true}}, "delete "+rel, "memory_delete", w)
	if err != nil {
		return WriteResult{}, err
	}
	return WriteResult{Message: "Successfully deleted " + vp, Commit: commit}, nil
}

// Rename moves a file or directory. It never overwrites the destination.
func (s *Store) Rename(ctx context.Context, oldPath, newPath string, w *WriteOptions) (WriteResult, error) {
	return s.lockedWrite(ctx, func() (WriteResult, error) { return s.renameLocked(ctx, oldPath, newPath, w) })
}

func (s *Store) renameLocked(ctx context.Context, oldPath, newPath string, w *WriteOptions) (WriteResult, error) {
	from, head, tree, err := s.target(ctx, oldPath, w)
	if err != nil {
		return WriteResult{}, err
	}
	to, err := gatePath(newPath, s.opts.Limits)
	if err != nil {
		return WriteResult{}, err
	}
	if err := s.mayTouch(ctx, tree, to); err != nil {
		return WriteResult{}, err
	}
	if err := s.checkLinks(to); err != nil {
		return WriteResult{}, err
	}
	vFrom, vTo := virtual(from), virtual(to)
	if from == "" || to == "" {
		return WriteResult{}, &Error{Kind: ErrInvalid, Msg: "Error: Cannot rename the " + Root + " directory itself.",
			Hint: "Rename a file or directory inside it."}
	}
	isFile, err := existing(tree, from)
	if err != nil {
		return WriteResult{}, err
	}
	if f, d, err := entryKind(tree, to); err != nil {
		return WriteResult{}, err
	} else if f || d {
		return WriteResult{}, &Error{Kind: ErrExists, Msg: "Error: The destination " + vTo + " already exists",
			Hint: "Choose another name, or delete the destination first."}
	}
	if to == from || strings.HasPrefix(to, from+"/") {
		return WriteResult{}, &Error{Kind: ErrInvalid, Msg: "Error: Cannot move " + vFrom + " into itself.",
			Hint: "Choose a destination outside it."}
	}
	files, err := s.filesUnder(tree, from, isFile)
	if err != nil {
		return WriteResult{}, err
	}
	if isFile {
		if err := checkExpected(vFrom, files[from], true, w); err != nil {
			return WriteResult{}, err
		}
	}
	changes := []change{{Path: from, Delete: true}}
	var sha string
	for p, content := range files {
		dest := to + strings.TrimPrefix(p, from)
		changes = append(changes, change{Path: dest, Content: content})
		if isFile {
			sha = blobSHA(content)
		}
	}
	sort.Slice(changes[1:], func(i, j int) bool { return changes[1+i].Path < changes[1+j].Path })
	commit, err := s.write(ctx, head, changes, "rename "+from+" -> "+to, "memory_rename", w)
	if err != nil {
		return WriteResult{}, err
	}
	return WriteResult{Message: fmt.Sprintf("Successfully renamed %s to %s", vFrom, vTo), Commit: commit, SHA: sha}, nil
}

// filesUnder returns the contents of the file rel, or of every file below the
// directory rel, keyed by repository-relative path.
func (s *Store) filesUnder(tree *object.Tree, rel string, isFile bool) (map[string][]byte, error) {
	out := map[string][]byte{}
	if isFile {
		content, _, err := readFile(tree, rel)
		out[rel] = content
		return out, err
	}
	hashes, err := subtreeFiles(tree, rel)
	if err != nil {
		return nil, err
	}
	for p := range hashes {
		content, _, err := readFile(tree, p)
		if err != nil {
			return nil, err
		}
		out[p] = content
	}
	return out, nil
}

// Entry is one item of a directory listing.
type Entry struct {
	Path  string // virtual path
	Name  string
	IsDir bool
	Size  int64 // bytes; 0 for directories
}

// List returns the non-hidden entries directly inside the directory at p,
// sorted by name. A missing directory is ErrNotFound.
func (s *Store) List(ctx context.Context, p string) ([]Entry, error) {
	rel, pr, src, err := s.readPath(ctx, p)
	if err != nil {
		return nil, err
	}
	fsys, err := s.readFS(ctx, rel)
	if err != nil {
		return nil, err
	}
	visible := s.visibleFunc(pr, src)
	entries, err := fs.ReadDir(fsys, fsName(rel))
	if errors.Is(err, fs.ErrNotExist) {
		return nil, notExist(virtual(rel), "")
	}
	if err != nil {
		return nil, err
	}
	out := make([]Entry, 0, len(entries))
	for _, e := range entries {
		if strings.HasPrefix(e.Name(), ".") || !(e.IsDir() || e.Type().IsRegular()) {
			continue
		}
		if visible != nil && !visible(path.Join(rel, e.Name())) {
			continue
		}
		item := Entry{Path: virtual(path.Join(rel, e.Name())), Name: e.Name(), IsDir: e.IsDir()}
		if !e.IsDir() {
			if info, err := e.Info(); err == nil {
				item.Size = info.Size()
			}
		}
		out = append(out, item)
	}
	return out, nil
}

// Put writes whole files, creating or overwriting each, in one commit.
// Files whose content is unchanged are left alone; when nothing changes no
// commit is made and WriteResult.Commit is empty. It is for programs that
// own the files they write (profiles, generated artifacts), not for edits
// of text a model has read: those use StrReplace and Insert.
// WriteOptions.ExpectedSHA is not used.
func (s *Store) Put(ctx context.Context, files map[string]string, w *WriteOptions) (WriteResult, error) {
	return s.lockedWrite(ctx, func() (WriteResult, error) { return s.putLocked(ctx, files, w) })
}

func (s *Store) putLocked(ctx context.Context, files map[string]string, w *WriteOptions) (WriteResult, error) {
	if err := validateWrite(w); err != nil {
		return WriteResult{}, err
	}
	rels := make(map[string]string, len(files))
	for p := range files {
		rel, err := s.cleanPath(p)
		if err != nil {
			return WriteResult{}, err
		}
		rels[p] = rel
	}
	head, err := s.headFor(ctx, w, slices.Collect(maps.Values(rels))...)
	if err != nil {
		return WriteResult{}, err
	}
	tree, err := head.Tree()
	if err != nil {
		return WriteResult{}, err
	}
	var changes []change
	var paths []string
	for p, text := range files {
		rel := rels[p]
		if err := s.mayTouch(ctx, tree, rel); err != nil {
			return WriteResult{}, err
		}
		if _, isDir, err := entryKind(tree, rel); err != nil {
			return WriteResult{}, err
		} else if isDir {
			return WriteResult{}, &Error{Kind: ErrExists, Msg: fmt.Sprintf("Error: The path %s is a directory.", virtual(rel)),
				Hint: "Give the path of a file."}
		}
		if old, ok, err := readFile(tree, rel); err != nil {
			return WriteResult{}, err
		} else if ok && string(old) == text {
			continue
		}
		changes = append(changes, change{Path: rel, Content: []byte(text)})
		paths = append(paths, virtual(rel))
	}
	if len(changes) == 0 {
		return WriteResult{Message: "No change: the files already hold this content."}, nil
	}
	sort.Slice(changes, func(i, j int) bool { return changes[i].Path < changes[j].Path })
	sort.Strings(paths)
	subject := "put " + changes[0].Path
	if len(changes) > 1 {
		subject = fmt.Sprintf("put %d files under %s", len(changes), commonDir(changes))
	}
	commit, err := s.write(ctx, head, changes, subject, "put", w)
	if err != nil {
		return WriteResult{}, err
	}
	return WriteResult{Message: "Wrote " + strings.Join(paths, ", "), Commit: commit}, nil
}

// commonDir returns the deepest directory holding every changed path.
func commonDir(changes []change) string {
	dir := path.Dir(changes[0].Path)
	for _, c := range changes[1:] {
		for dir != "." && !strings.HasPrefix(c.Path, dir+"/") {
			dir = path.Dir(dir)
		}
	}
	if dir == "." {
		return Root
	}
	return virtual(dir)
}
