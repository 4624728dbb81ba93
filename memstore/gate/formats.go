package gate

import (
	"bytes"
	"fmt"
	"regexp"
	"strings"
	"unicode"
	"unicode/utf8"
)

// Thresholds of the chat-format detectors.
const (
	minRoleMessages  = 3 // role-tagged messages (JSON, YAML, CSV, HTML) with a human and an AI speaker
	minRoleSwitches  = 2 // changes between the human and the AI speaker among them
	minChatTemplates = 2 // ChatML / Llama / [INST] turn markers
	minIRCLines      = 3 // [hh:mm] <nick> lines, from at least two nicks
	minShellPrompts  = 3 // prompt lines of a shell or REPL session with output
	minShellOutput   = 6 // output lines after a single prompt
	minChatExport    = 3 // "type": "message" objects of a Slack or similar export
	minRunnerLines   = 4 // lines of test-runner output in one run
	maxRunnerGap     = 8 // other lines between two of them: a failure's code excerpt
)

var (
	reJSONRole      = regexp.MustCompile(`"(?:role|speaker|from|author)"\s*:\s*"([A-Za-z]{1,12})"`)
	reYAMLRole      = regexp.MustCompile(`^\s*(?:-\s+)?(?:role|speaker|from|author)\s*:\s*["']?([A-Za-z]{1,12})["']?\s*$`)
	reHTMLClass     = regexp.MustCompile(`class="([^"]*)"`)
	reIRC           = regexp.MustCompile(`^\[?\d{1,2}:\d{2}(?::\d{2})?\]?\s+<([^>\s]{1,32})>\s`)
	rePrompt        = regexp.MustCompile(`^\s*(?:[\w.-]+@[\w.-]+(?::[^$#\s]*)?\s?[$#]|\$|>>>|PS [A-Z]:[^>]*>)\s+\S`)
	reTag           = regexp.MustCompile(`<[^<>]*>`)
	reRunnerBanner  = regexp.MustCompile(`^(?:=+ \S.* =+|=== (?:RUN|PAUSE|CONT) .*)\s*$`)
	reRunnerSummary = regexp.MustCompile(`^(?:--- (?:PASS|FAIL|SKIP): |(?:ok|FAIL|PASS)\s+\S+\s+\(?[\d.]+m?s\)?|E {3,}\S)`)
	reRunnerPercent = regexp.MustCompile(`\S\s+\[\s*\d{1,3}%\]\s*$`)
	// pytest's outcome and location lines, jest's and vitest's file,
	// failure and summary lines, mocha's counts, cargo test's results.
	// TAP's result and plan lines, rspec's and PHPUnit's summaries and
	// rspec's failed examples.
	reRunnerOther   = regexp.MustCompile(`^(?:(?:not )?ok \d+ - \S|not ok \d+\b|1\.\.\d+\s*$|\d+ examples?, \d+ failures?|Finished in [\d.]+ (?:seconds?|minutes?)|rspec \S+:\d+ # |OK \(\d+ tests?, \d+ assertions?\)|Tests: \d+, Assertions: \d+|(?:FAILED|PASSED|ERROR|SKIPPED|XFAIL|XPASS) \S+::\S|\S+\.py:\d+: \w*(?:Error|Exception)\b|\s*(?:PASS|FAIL) +\S+\.(?:test|spec)\.[cm]?[jt]sx?\b|\s+● .+ › |(?:Tests|Test Suites|Test Files|Snapshots|Time|Duration):\s{2,}\S|\s+\d+ (?:passing|failing|pending)\b|test \S+ \.\.\. (?:ok|FAILED|ignored)\s*$|test result: (?:ok|FAILED)\. )`)
	reExportMessage = regexp.MustCompile(`"type"\s*:\s*"message"`)
	reChatFriend    = regexp.MustCompile(`(?i)\b(?:hi|hello|hey|i|i'm|i'll|i've|me|my|you|your|please|thanks|thank you|sure|let me)\b`)
)

// roleOf maps a speaker or role name (user, assistant, human, ai, ...) to
// its role.
func roleOf(name string) role {
	info, ok := speakerRoles[strings.ToLower(name)]
	if !ok {
		return roleNone
	}
	return info.role
}

// roleSeq counts role-tagged messages and the switches between the human
// and the AI speaker.
type roleSeq struct {
	human, ai, switches, start int
	prev                       role
}

func (s *roleSeq) add(r role, line int) {
	if r != roleHuman && r != roleAI {
		return
	}
	if s.human+s.ai == 0 {
		s.start = line
	}
	if s.prev != roleNone && r != s.prev {
		s.switches++
	}
	s.prev = r
	if r == roleHuman {
		s.human++
	} else {
		s.ai++
	}
}

func (s *roleSeq) conversation() bool {
	return s.human > 0 && s.ai > 0 && s.human+s.ai >= minRoleMessages && s.switches >= minRoleSwitches
}

// findTranscriptFormat recognises chat logs in structured formats: role
// messages in JSON, YAML, CSV or HTML, tool-call logs, chat templates
// (ChatML, Llama, [INST]), IRC logs, Claude Code sessions and shell or REPL
// sessions with their output. lower is content with ASCII letters
// lower-cased.
func findTranscriptFormat(content, lower []byte) *Rejection {
	var (
		roles                          roleSeq
		templates, templateStart       int
		irc, ircStart                  int
		nicks                          = map[string]bool{}
		bullets, results, claudeStart  int
		prompts, withOutput, outAfter  int
		maxOut, shellStart, outputs    int
		inSession                      bool
		toolCalls, toolReplies, tcLine int
		exports, exportStart           int
		runner                         = runnerRun{run: run{maxGap: maxRunnerGap}}
	)
	lineNo := 0
	for off := 0; off < len(content); {
		start := off
		var line []byte
		line, off = nextLine(content, off)
		lline := lower[start : start+len(line)]
		lineNo++
		s := string(line)

		// Role-tagged messages.
		if bytes.Contains(lline, []byte(`"role"`)) || bytes.Contains(lline, []byte(`"speaker"`)) || bytes.Contains(lline, []byte(`"from"`)) || bytes.Contains(lline, []byte(`"author"`)) {
			for _, m := range reJSONRole.FindAllStringSubmatch(s, -1) {
				roles.add(roleOf(m[1]), lineNo)
			}
		} else if containsAny(lline, roleKeys) {
			if m := reYAMLRole.FindStringSubmatch(s); m != nil {
				roles.add(roleOf(m[1]), lineNo)
			}
		} else if bytes.IndexByte(line, ',') > 0 && bytes.IndexByte(line, ' ') != 0 && containsAny(lline, roleWords) {
			for _, f := range strings.Split(s, ",") {
				if r := roleOf(strings.Trim(f, `" `)); r != roleNone && len(f) < 14 {
					roles.add(r, lineNo)
					break
				}
			}
		}
		if bytes.Contains(lline, []byte(`class="`)) {
			for _, m := range reHTMLClass.FindAllStringSubmatch(s, -1) {
				for _, c := range strings.Fields(m[1]) {
					if r := roleOf(c); r != roleNone {
						roles.add(r, lineNo)
					}
				}
			}
		}
		if roles.conversation() {
			return reject(RuleTranscript, roles.start,
				fmt.Sprintf("The content looks like a session transcript: %d role-tagged messages (user/assistant) starting at line %d.", roles.human+roles.ai, roles.start),
				transcriptHint)
		}

		// Tool-call logs: an assistant tool_calls message and a tool reply.
		if bytes.Contains(lline, []byte(`"tool_calls"`)) {
			toolCalls++
			if tcLine == 0 {
				tcLine = lineNo
			}
		}
		if bytes.Contains(lline, []byte(`"tool_call_id"`)) || bytes.Contains(lline, []byte(`"role": "tool"`)) || bytes.Contains(lline, []byte(`"role":"tool"`)) {
			toolReplies++
			if tcLine == 0 {
				tcLine = lineNo
			}
		}
		if toolCalls > 0 && toolReplies > 0 {
			return reject(RuleTranscript, tcLine,
				fmt.Sprintf("The content looks like a tool log: tool_calls messages and tool replies starting at line %d.", tcLine),
				transcriptHint)
		}

		// Chat exports (Slack, Mattermost): message objects.
		if bytes.Contains(lline, []byte(`"message"`)) {
			n := len(reExportMessage.FindAllIndex(lline, -1))
			if n > 0 && exports == 0 {
				exportStart = lineNo
			}
			exports += n
			if exports >= minChatExport {
				return reject(RuleTranscript, exportStart,
					fmt.Sprintf("The content looks like a chat export: %d message objects starting at line %d.", exports, exportStart),
					transcriptHint)
			}
		}

		// Test-runner output (pytest, go test, mocha, jest, TAP).
		if k := runnerLine(line); k != runnerNone {
			if runner.add(lineNo, k) >= minRunnerLines && runner.certain() {
				return reject(RuleTranscript, runner.start,
					fmt.Sprintf("The content looks like a tool log: test-runner output starting at line %d.", runner.start),
					transcriptHint)
			}
		}

		// Chat templates: turn markers that start a line or follow another
		// marker or a blank, not ones quoted in code or prose.
		for _, tok := range [][]byte{[]byte("<|im_start|>"), []byte("<|start_header_id|>"), []byte("[inst]")} {
			for i := 0; ; {
				j := bytes.Index(lline[i:], tok)
				if j < 0 {
					break
				}
				if k := i + j; k == 0 || bytes.IndexByte([]byte("> \t]"), lline[k-1]) >= 0 {
					if templates == 0 {
						templateStart = lineNo
					}
					templates++
				}
				i += j + len(tok)
			}
		}
		if templates >= minChatTemplates {
			return reject(RuleTranscript, templateStart,
				fmt.Sprintf("The content looks like a session transcript: %d chat-template turns starting at line %d.", templates, templateStart),
				transcriptHint)
		}

		// IRC logs.
		if len(s) > 0 && (s[0] == '[' || '0' <= s[0] && s[0] <= '9') && bytes.IndexByte(line, '<') > 0 {
			m := reIRC.FindStringSubmatch(s)
			if m == nil {
				goto claude
			}
			if irc == 0 {
				ircStart = lineNo
			}
			irc++
			nicks[m[1]] = true
			if irc >= minIRCLines && len(nicks) >= 2 {
				return reject(RuleTranscript, ircStart,
					fmt.Sprintf("The content looks like a chat log: %d timestamped <nick> lines starting at line %d.", irc, ircStart),
					transcriptHint)
			}
		}
	claude:

		// Claude Code sessions: ● actions and ⎿ results.
		t := strings.TrimLeft(s, " \t")
		if strings.HasPrefix(t, "●") || strings.HasPrefix(t, "⎿") {
			if claudeStart == 0 {
				claudeStart = lineNo
			}
			if t[0] == "●"[0] && strings.HasPrefix(t, "●") {
				bullets++
			} else {
				results++
			}
			if results >= 2 || results >= 1 && bullets >= 2 {
				return reject(RuleTranscript, claudeStart,
					fmt.Sprintf("The content looks like a tool log: an agent session with %d actions and %d results starting at line %d.", bullets, results, claudeStart),
					transcriptHint)
			}
		}

		// Shell and REPL sessions with output.
		switch {
		case looksLikePrompt(t) && rePrompt.MatchString(s):
			if prompts == 0 {
				shellStart = lineNo
			}
			prompts++
			inSession, outAfter = true, 0
		case inSession && strings.TrimSpace(s) != "" && !strings.HasPrefix(t, "```") && !strings.HasPrefix(t, "#"):
			if outAfter == 0 {
				withOutput++
			}
			outAfter++
			outputs++
			maxOut = max(maxOut, outAfter)
		default:
			inSession = false
		}
		if withOutput > 0 && (prompts >= minShellPrompts && outputs >= 2 || withOutput >= 2 && outputs >= 3 || maxOut >= minShellOutput) {
			return reject(RuleTranscript, shellStart,
				fmt.Sprintf("The content looks like a tool log: a shell session of %d commands with their output starting at line %d.", prompts, shellStart),
				transcriptHint)
		}
	}
	return nil
}

// stripTags removes markup tags from an HTML line, so "<p><b>User:</b> hi"
// reads as a speaker line.
func stripTags(line []byte) []byte {
	if bytes.IndexByte(line, '<') < 0 {
		return line
	}
	return reTag.ReplaceAll(line, nil)
}

// weakSpeakersConversational reports whether content's weak speaker
// labels, lower-case ones (user:, me:, claude:, assistant said:) and
// Q:/A:, are turns of a conversation rather than YAML keys or a FAQ: at
// least two of them hold first- or second-person chat ("can you", "I
// checked", "thanks") or, for the lower-case labels, prose (see
// isProseTurn; for user:, assistant:, human: and ai: three words).
func weakSpeakersConversational(content []byte) bool {
	n := 0
	for _, l := range bytes.Split(content, []byte("\n")) {
		name, rest, ok := weakLabel(stripTags(l))
		if !ok {
			continue
		}
		switch name {
		case "q", "a":
			if reChatFriend.Match(rest) {
				n++
			}
		default:
			info, ok := speakerLabel(name)
			if !ok || info.role == roleOther || capitalOnlyLabels[name] {
				continue
			}
			if isProseTurn(rest) || plainWeakLabels[name] && len(bytes.Fields(rest)) >= 3 {
				n++
			}
		}
		if n >= 2 {
			return true
		}
	}
	return false
}

// weakLabel splits a line "name: value" into its lower-cased name, of at
// most 9 bytes, and value, reading past indentation, a time stamp,
// emphasis around the name and "said" after it ("claude said: ..."); a
// line that starts with a speaker emoji into the emoji and the rest (see
// emojiLabel).
func weakLabel(line []byte) (name string, value []byte, ok bool) {
	t := trimTurnTime(bytes.TrimLeft(line, " \t"))
	if name, value, ok := emojiLabel(t); ok {
		return name, value, true
	}
	n, v, ok := bytes.Cut(t, []byte(":"))
	if !ok || len(n) > 16 {
		return "", nil, false
	}
	name = strings.ToLower(string(bytes.Trim(n, "*_")))
	name = strings.TrimSuffix(name, " said")
	if len(name) > 9 {
		return "", nil, false
	}
	return name, bytes.TrimLeft(v, "*_ \t"), true
}

// emojiLabel splits t, a line without its indentation, that starts with a
// speaker emoji (see emojiSpeaker), its modifiers (skin tone, variation
// selector, joined emoji) and emphasis, followed by a colon or a blank,
// into that emoji and the value after it: "🤖: done", "👤 can you check
// it", "**🧑‍💻:** hi".
func emojiLabel(t []byte) (name string, value []byte, ok bool) {
	t = bytes.TrimLeft(t, "*_")
	r, size := utf8.DecodeRune(t)
	if _, ok := emojiSpeaker(r); !ok {
		return "", nil, false
	}
	i := size
	for i < len(t) {
		m, n := utf8.DecodeRune(t[i:])
		if m == zeroWidthJoiner && i+n < len(t) {
			_, k := utf8.DecodeRune(t[i+n:])
			n += k
		} else if m != variationSelector16 && !unicode.Is(skinTones, m) {
			break
		}
		i += n
	}
	rest := bytes.TrimLeft(t[i:], "*_")
	v := bytes.TrimLeft(rest, " \t")
	switch {
	case len(v) > 0 && v[0] == ':':
		v = v[1:]
	case len(v) == len(rest):
		return "", nil, false // "🤖x": no label
	}
	return string(t[:size]), bytes.TrimLeft(v, "*_ \t"), true
}

// Emoji modifiers read past after a speaker emoji.
const (
	zeroWidthJoiner     = '\u200d'
	variationSelector16 = '\ufe0f'
)

var skinTones = &unicode.RangeTable{R32: []unicode.Range32{{Lo: 0x1f3fb, Hi: 0x1f3ff, Stride: 1}}}

// aiEmoji are the emoji that name the AI side of a chat: the robot face
// and what stands for a machine or its speech (👾 💬 🗨 💻 🖥 ✨ 🧠 🦾 🦿
// ⚙).
var aiEmoji = &unicode.RangeTable{R16: []unicode.Range16{
	{Lo: 0x2699, Hi: 0x2699, Stride: 1}, // gear
	{Lo: 0x2728, Hi: 0x2728, Stride: 1}, // sparkles
}, R32: []unicode.Range32{
	{Lo: 0x1f47e, Hi: 0x1f47e, Stride: 1}, // alien monster
	{Lo: 0x1f4ac, Hi: 0x1f4ac, Stride: 1}, // speech balloon
	{Lo: 0x1f4bb, Hi: 0x1f4bb, Stride: 1}, // laptop
	{Lo: 0x1f5a5, Hi: 0x1f5a5, Stride: 1}, // desktop computer
	{Lo: 0x1f5e8, Hi: 0x1f5e8, Stride: 1}, // left speech bubble
	{Lo: 0x1f916, Hi: 0x1f916, Stride: 1}, // robot face
	{Lo: 0x1f9be, Hi: 0x1f9bf, Stride: 1}, // mechanical arm and leg
	{Lo: 0x1f9e0, Hi: 0x1f9e0, Stride: 1}, // brain
}}

// humanEmoji are the emoji that name the human side of a chat: people,
// busts, faces and gestures (👤 🧑 👩 🙋 🙂 🤔), not the robot.
var humanEmoji = &unicode.RangeTable{R16: []unicode.Range16{{Lo: 0x263a, Hi: 0x263a, Stride: 1}}, R32: []unicode.Range32{
	{Lo: 0x1f464, Hi: 0x1f478, Stride: 1}, // busts and people
	{Lo: 0x1f481, Hi: 0x1f483, Stride: 1},
	{Lo: 0x1f5e3, Hi: 0x1f5e3, Stride: 1}, // speaking head
	{Lo: 0x1f600, Hi: 0x1f637, Stride: 1}, // faces
	{Lo: 0x1f641, Hi: 0x1f647, Stride: 1},
	{Lo: 0x1f64b, Hi: 0x1f64f, Stride: 1}, // gestures
	{Lo: 0x1f910, Hi: 0x1f915, Stride: 1},
	{Lo: 0x1f917, Hi: 0x1f917, Stride: 1},
	{Lo: 0x1f920, Hi: 0x1f92f, Stride: 1},
	{Lo: 0x1f9d1, Hi: 0x1f9dd, Stride: 1}, // people
}}

// emojiSpeaker returns the speaker an emoji used as a label names: a
// machine (see aiEmoji) the AI, a person or face (see humanEmoji) the
// human. Emoji labels are weak, like lower-case ones: emoji also mark
// checklists and runbooks ("🤖 export runs at 02:00", "👤 review the
// totals").
func emojiSpeaker(r rune) (speakerInfo, bool) {
	switch {
	case r < 0x263a:
		return speakerInfo{}, false
	case unicode.Is(aiEmoji, r):
		return speakerInfo{roleAI, string(r)}, true
	case unicode.Is(humanEmoji, r):
		return speakerInfo{roleHuman, string(r)}, true
	}
	return speakerInfo{}, false
}

// isProseTurn reports whether the value of a lower-case speaker label is
// a turn of conversation rather than a configuration value: chat ("can
// you", "thanks"), or three or more words that end a sentence or run to
// six or more. Keys such as "user: alice" or "model: claude-sonnet-4"
// hold names, and descriptions in configuration are short phrases.
func isProseTurn(v []byte) bool {
	words := len(bytes.Fields(v))
	if words == 0 {
		return false
	}
	if reChatFriend.Match(v) {
		return true
	}
	return words >= 3 && (endsSentence(v) || words >= 6)
}

// speakerWeak is speaker extended, when weak is set, to Q:/A: turns and
// to lower-case speaker labels: user:, assistant:, human: and ai: always,
// the others (me:, claude:, bot:, ...) when they hold a turn (see
// isTurnValue); lower reports a lower-case label.
func speakerWeak(line []byte, weak bool) (r role, label string, lower bool) {
	if r, label := speaker(line); r != roleNone || !weak {
		return r, label, false
	}
	name, rest, ok := weakLabel(line)
	if !ok {
		return roleNone, "", false
	}
	switch name {
	case "q":
		return roleHuman, "Q", false
	case "a":
		return roleAI, "A", false
	}
	if info, ok := speakerLabel(name); ok && !capitalOnlyLabels[name] && (plainWeakLabels[name] || isTurnValue(rest)) {
		return info.role, info.label, true
	}
	return roleNone, "", false
}

// plainWeakLabels are the lower-case labels that count as turns whatever
// their value ("user: ok") once content is conversational: they name the
// two sides of a chat and nothing else in configuration.
var plainWeakLabels = map[string]bool{"user": true, "assistant": true, "human": true, "ai": true}

// isTurnValue reports whether the value of a lower-case speaker label, in
// content whose weak labels are conversational, is a turn: two or more
// words, chat, or a sentence ("Done."); "user: alice" is a key.
func isTurnValue(v []byte) bool {
	words := len(bytes.Fields(v))
	return words >= 2 || words == 1 && (endsSentence(v) || reChatFriend.Match(v))
}

// roleKeys are the field names that carry a speaker in YAML.
var roleKeys = []string{"role", "speaker", "from", "author"}

// roleWords are the speaker names role detection looks for, lower-case.
var roleWords = func() []string {
	w := make([]string, 0, len(speakerRoles))
	for k := range speakerRoles {
		w = append(w, k)
	}
	return w
}()

// looksLikePrompt is the cheap test before rePrompt: t, the line without
// its indentation, starts like a shell or REPL prompt.
func looksLikePrompt(t string) bool {
	if t == "" {
		return false
	}
	switch t[0] {
	case '$', '>', 'P':
		return true
	}
	return strings.Contains(t, "@")
}

// A runnerKind classifies a line of test-runner output.
type runnerKind uint8

const (
	runnerNone runnerKind = 0
	// runnerPassMark and runnerFailMark are mocha's and jest's indented
	// result lines without a duration: "  ✓ parses dates", "  1) fails on
	// empty input", "  ✕ renders". Alone, indented check marks are also a
	// checklist, so they count only beside another kind.
	runnerPassMark runnerKind = 1 << iota
	runnerFailMark
	// runnerStrong is a line only a runner writes: banners, summaries,
	// outcome lines, a result line with its duration.
	runnerStrong
)

// runnerRun is a run of test-runner lines and the kinds it holds.
type runnerRun struct {
	run
	kinds runnerKind
}

// add records a runner line n of kind k and returns the size of the run.
func (r *runnerRun) add(n int, k runnerKind) int {
	if r.start == 0 || n-r.last-1 > r.maxGap {
		r.kinds = 0
	}
	r.kinds |= k
	return r.run.add(n)
}

// certain reports whether the run is runner output rather than a
// checklist: it holds a line only a runner writes, or both passed and
// failed result marks.
func (r *runnerRun) certain() bool {
	return r.kinds&runnerStrong != 0 || r.kinds == runnerPassMark|runnerFailMark
}

// reRunnerMark matches mocha's and jest's indented result lines, group 2
// their duration: "  ✓ parses dates (45ms)", "  1) fails", "  ✕ renders".
var reRunnerMark = regexp.MustCompile(`^\s+([✓✔√]|[✗✖✕×]|\d{1,4}\))\s+\S.*?(\(\d+(?:\.\d+)?\s?m?s\)|\(\d+ tests?\).*)?\s*$`)

// runnerLine classifies line as test-runner output (see runnerKind).
func runnerLine(line []byte) runnerKind {
	if isRunnerLine(line) {
		return runnerStrong
	}
	if len(line) < 4 || line[0] != ' ' && line[0] != '\t' {
		return runnerNone
	}
	m := reRunnerMark.FindSubmatchIndex(line)
	switch {
	case m == nil:
		return runnerNone
	case m[4] >= 0:
		return runnerStrong
	case bytes.ContainsAny(line[m[2]:m[3]], "✓✔√"):
		return runnerPassMark
	}
	return runnerFailMark
}

// isRunnerLine reports lines of test-runner output: pytest banners,
// progress lines ("tests/x.py ..F  [ 41%]"), error, outcome and location
// lines; go test's RUN, PASS, FAIL and ok lines; jest's and vitest's file,
// failure and summary lines; mocha's counts; cargo test's results; TAP's
// result and plan lines; rspec's and PHPUnit's summaries and rspec's
// failed examples.
func isRunnerLine(line []byte) bool {
	if len(line) < 4 {
		return false
	}
	switch line[0] {
	case '=':
		return reRunnerBanner.Match(line)
	case '-', 'o', 'F', 'P', 'E':
		if reRunnerSummary.Match(line) {
			return true
		}
	}
	if line[len(line)-1] == ']' && bytes.Contains(line, []byte("%]")) && reRunnerPercent.Match(line) {
		return true
	}
	return reRunnerOther.Match(line)
}
