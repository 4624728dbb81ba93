package crashtest

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
)

// check judges the home as the crash left it (git must read it), restarts
// the server on it (recovery may repair working files) and checks every
// invariant on the restarted home.
func (r *runner) check(ctx context.Context, round int, rr *RoundReport) {
	dir := r.memDir()
	if ref, err := os.ReadFile(filepath.Join(dir, ".git", "refs", "heads", "main")); err == nil && len(bytes.TrimSpace(ref)) == 0 {
		rr.problem("after the crash: .git/refs/heads/main is empty (%d bytes)", len(ref))
	}
	for _, kind := range []string{"drafts", "proposals"} {
		_ = filepath.WalkDir(filepath.Join(dir, ".git", "refs", kind), func(p string, d os.DirEntry, err error) error {
			if err != nil || d.IsDir() || strings.HasSuffix(p, ".lock") {
				return nil
			}
			if ref, err := os.ReadFile(p); err == nil && len(bytes.TrimSpace(ref)) == 0 {
				rr.problem("after the crash: draft or proposal ref %s is empty", filepath.Base(p))
			}
			return nil
		})
	}
	before := r.head(ctx, rr, "after the crash")
	r.fsck(ctx, rr, "after the crash")
	srv, err := startServer(ctx, r.cfg.Bin, r.cfg.Home, r.logFile(round))
	if err != nil {
		rr.RestartFailed, rr.Fatal = true, true
		rr.problem("restart: %v", err)
	} else {
		defer func() {
			if err := srv.stop(); err != nil {
				rr.problem("graceful stop after the checks: %v", err)
			}
		}()
	}
	head := r.head(ctx, rr, "after the restart")
	if before != "" && head != before {
		rr.problem("the restart moved HEAD from %s to %q", before, head)
	}
	r.fsck(ctx, rr, "after the restart")
	r.contentCheck(ctx, head, rr)
	if head == "" {
		rr.NewRoot = true
		return
	}
	r.worktreeCheck(ctx, rr)
	r.historyCheck(ctx, head, rr)
	if srv == nil {
		return
	}
	r.mcpChecks(ctx, round, srv.url, rr)
	if h, err := git(ctx, dir, nil, nil, "rev-parse", "--verify", "HEAD^{commit}"); err == nil {
		r.prevHead = strings.TrimSpace(string(h))
	}
}

// head resolves HEAD to a commit; "" (and a problem) when git cannot.
func (r *runner) head(ctx context.Context, rr *RoundReport, when string) string {
	out, err := git(ctx, r.memDir(), nil, nil, "rev-parse", "--verify", "HEAD^{commit}")
	if err != nil {
		rr.problem("%s: HEAD does not resolve: %v", when, err)
		return ""
	}
	return strings.TrimSpace(string(out))
}

// fsck runs git fsck --strict. Lines starting "dangling" are not errors: a
// write interrupted before its ref moved leaves unreferenced objects, which
// is allowed. Every other line, and a non-zero exit, is.
func (r *runner) fsck(ctx context.Context, rr *RoundReport, when string) {
	cmd := exec.CommandContext(ctx, "git", "-C", r.memDir(), "fsck", "--strict", "--no-progress", "--no-dangling")
	cmd.Env = append(os.Environ(), "LC_ALL=C")
	out, err := cmd.CombinedOutput()
	n := 0
	for _, l := range strings.Split(string(out), "\n") {
		l = strings.TrimSpace(l)
		if l == "" || strings.HasPrefix(l, "dangling ") {
			continue
		}
		n++
		rr.problem("%s: fsck: %s", when, l)
	}
	if err != nil && n == 0 {
		n = 1
		rr.problem("%s: fsck: %v", when, err)
	}
	rr.FsckErrors += n
}

// contentCheck reads every recorded file at HEAD with git cat-file --batch
// and compares it with what the writers were told.
func (r *runner) contentCheck(ctx context.Context, head string, rr *RoundReport) {
	files := r.led.snapshot()
	got := make([]*string, len(files)) // nil: absent at HEAD
	if head != "" {
		var in bytes.Buffer
		for _, f := range files {
			fmt.Fprintf(&in, "%s:%s\n", head, repoPath(f.path))
		}
		out, err := git(ctx, r.memDir(), &in, nil, "cat-file", "--batch")
		if err != nil {
			rr.problem("cat-file: %v", err)
			return
		}
		br := bufio.NewReader(bytes.NewReader(out))
		for i := range files {
			content, ok, err := nextBatchObject(br)
			if err != nil {
				rr.problem("cat-file output: %v", err)
				return
			}
			if ok {
				got[i] = &content
			}
		}
	}
	for i, f := range files {
		present := got[i] != nil
		var content string
		if present {
			content = *got[i]
		}
		if f.allowed(content, present) {
			continue
		}
		switch {
		case f.hasAck:
			rr.Lost++
			if !r.lost[f.path] {
				rr.NewLost++
			}
			r.lost[f.path] = true
			state := "absent"
			if present {
				state = "other content"
			}
			if rr.Lost <= examples {
				rr.problem("LOST %s (%s, acknowledged): %s at HEAD", f.path, f.writer, state)
			}
		default:
			rr.FailedLeft++
			r.failLeft[f.path] = true
			if rr.FailedLeft <= examples {
				rr.problem("FAILED-BUT-PRESENT %s (%s): a write that failed is at HEAD", f.path, f.writer)
			}
		}
	}
	if rr.Lost > examples {
		rr.problem("... %d acknowledged files lost in all", rr.Lost)
	}
	if rr.FailedLeft > examples {
		rr.problem("... %d failed writes present in all", rr.FailedLeft)
	}
}

// examples is how many files of one kind a round describes; the counts
// are complete.
const examples = 3

// nextBatchObject reads one answer of git cat-file --batch: the content, or
// ok=false for "<name> missing".
func nextBatchObject(br *bufio.Reader) (content string, ok bool, err error) {
	hdr, err := br.ReadString('\n')
	if err != nil {
		return "", false, err
	}
	fields := strings.Fields(hdr)
	if len(fields) == 3 && fields[1] == "blob" {
		n, err := strconv.Atoi(fields[2])
		if err != nil {
			return "", false, err
		}
		buf := make([]byte, n+1) // content and its newline
		if _, err := io.ReadFull(br, buf); err != nil {
			return "", false, err
		}
		return string(buf[:n]), true, nil
	}
	if len(fields) == 3 { // a tree where a file was expected
		n, _ := strconv.Atoi(fields[2])
		_, _ = br.Discard(n + 1)
	}
	return "", false, nil
}

// worktreeCheck compares the work tree with HEAD through a fresh index read
// from HEAD, so selmem's own .git/index is neither used nor touched.
func (r *runner) worktreeCheck(ctx context.Context, rr *RoundReport) {
	tmp, err := os.CreateTemp("", "crashtest-index-")
	if err != nil {
		rr.problem("temp index: %v", err)
		return
	}
	tmp.Close()
	os.Remove(tmp.Name()) // git wants to create it
	defer os.Remove(tmp.Name())
	env := []string{"GIT_INDEX_FILE=" + tmp.Name()}
	if _, err := git(ctx, r.memDir(), nil, env, "read-tree", "HEAD"); err != nil {
		rr.problem("read-tree: %v", err)
		return
	}
	out, err := git(ctx, r.memDir(), nil, env, "status", "--porcelain", "--untracked-files=all")
	if err != nil {
		rr.problem("status: %v", err)
		return
	}
	for _, l := range strings.Split(strings.TrimRight(string(out), "\n"), "\n") {
		if l == "" {
			continue
		}
		rr.WorktreeDiffs++
		if rr.WorktreeDiffs <= examples {
			rr.problem("work tree differs from HEAD: %s", l)
		}
	}
}

// historyCheck checks invariant 7: one root commit, and head descends from
// the previous round's HEAD.
func (r *runner) historyCheck(ctx context.Context, head string, rr *RoundReport) {
	out, err := git(ctx, r.memDir(), nil, nil, "rev-list", "--max-parents=0", head)
	if err != nil {
		rr.problem("rev-list roots: %v", err)
		rr.NewRoot = true
		return
	}
	if roots := strings.Fields(string(out)); len(roots) != 1 {
		rr.NewRoot = true
		rr.problem("history has %d root commits", len(roots))
	}
	if _, err := git(ctx, r.memDir(), nil, nil, "merge-base", "--is-ancestor", r.prevHead, head); err != nil {
		rr.NewRoot = true
		rr.problem("HEAD %s does not descend from the previous round's HEAD %s", head, r.prevHead)
	}
}

// mcpChecks checks invariants 1 (MCP side), 4 and 5 over a fresh session.
func (r *runner) mcpChecks(ctx context.Context, round int, url string, rr *RoundReport) {
	cs, err := connect(ctx, url)
	if err != nil {
		rr.problem("connect after restart: %v", err)
		return
	}
	defer cs.Close()
	var thisRound, older []file
	for _, f := range r.led.snapshot() {
		if !f.determinate() || r.lost[f.path] {
			continue // git already judged these; MCP would only repeat it
		}
		if f.round == round {
			thisRound = append(thisRound, f)
		} else {
			older = append(older, f)
		}
	}
	r.rng.Shuffle(len(older), func(i, j int) { older[i], older[j] = older[j], older[i] })
	older = older[:min(len(older), r.cfg.Samples)]
	for _, f := range append(thisRound, older...) {
		res, err := call(cs, "memory_view", map[string]any{"path": f.path})
		if err != nil || res.isError || !viewShows(res.text, f.acked) {
			rr.ViewMismatch++
			rr.problem("memory_view %s does not show its acknowledged content: %v %.200q", f.path, err, res.text)
		}
	}
	sample := append(thisRound, older...)
	r.rng.Shuffle(len(sample), func(i, j int) { sample[i], sample[j] = sample[j], sample[i] })
	sample = sample[:min(len(sample), r.cfg.Samples)]
	for _, f := range sample {
		res, err := call(cs, "memory_search", map[string]any{"query": f.token, "workspace": "crash", "limit": 10})
		if err != nil || res.isError || !searchFinds(res, f.path) {
			rr.SearchMiss++
			rr.problem("memory_search %q does not find %s: %v %.200q", f.token, f.path, err, res.text)
		}
	}
	for _, f := range sample[:min(len(sample), max(1, r.cfg.Samples/4))] {
		rev, ok := currentRev(f.acked)
		if !ok {
			continue
		}
		content := strings.Replace(f.acked, revLine(rev), revLine(rev+1), 1)
		res, err := call(cs, "memory_str_replace", map[string]any{"path": f.path, "old_str": revLine(rev), "new_str": revLine(rev + 1)})
		o := outcome(res, err)
		r.led.record(f.path, f.token, "verify", f.round, content, o)
		if o != Acked {
			rr.ReplaceFail++
			rr.problem("memory_str_replace on %s after memory_view showed it: %v %.200q", f.path, err, res.text)
			continue
		}
		res, err = call(cs, "memory_view", map[string]any{"path": f.path})
		if err != nil || !viewShows(res.text, content) {
			rr.ViewMismatch++
			rr.problem("memory_view %s does not show the str_replace it acknowledged", f.path)
		}
	}
}

// currentRev finds the revision line of a harness file.
func currentRev(content string) (int, bool) {
	_, after, ok := strings.Cut(content, "- rev: ")
	if !ok {
		return 0, false
	}
	num, _, _ := strings.Cut(after, "\n")
	n, err := strconv.Atoi(num)
	return n, err == nil
}
