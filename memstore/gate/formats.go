package gate

import (
	"bytes"
	"fmt"
	"regexp"
	"strings"
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
	reRunnerOther   = regexp.MustCompile(`^(?:(?:FAILED|PASSED|ERROR|SKIPPED|XFAIL|XPASS) \S+::\S|\S+\.py:\d+: \w*(?:Error|Exception)\b|\s*(?:PASS|FAIL) +\S+\.(?:test|spec)\.[cm]?[jt]sx?\b|\s+● .+ › |(?:Tests|Test Suites|Test Files|Snapshots|Time|Duration):\s{2,}\S|\s+\d+ (?:passing|failing|pending)\b|test \S+ \.\.\. (?:ok|FAILED|ignored)\s*$|test result: (?:ok|FAILED)\. )`)
	reExportMessage = regexp.MustCompile(`"type"\s*:\s*"message"`)
	reChatFriend    = regexp.MustCompile(`(?i)\b(?:i|i'm|i'll|i've|me|my|you|your|please|thanks|thank you|sure|let me)\b`)
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
		runner                         = run{maxGap: maxRunnerGap}
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

		// Test-runner output (pytest, go test).
		if isRunnerLine(line) {
			if runner.add(lineNo) >= minRunnerLines {
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
// labels, lower-case user:/assistant: and Q:/A:, are turns of a
// conversation rather than YAML keys or a FAQ: at least two of them hold
// first- or second-person chat ("can you", "I checked", "thanks") or, for
// user:/assistant:, several words of prose.
func weakSpeakersConversational(content []byte) bool {
	n := 0
	for _, l := range bytes.Split(content, []byte("\n")) {
		l = bytes.TrimLeft(stripTags(l), " \t")
		name, rest, ok := bytes.Cut(l, []byte(":"))
		if !ok || len(name) > 9 {
			continue
		}
		switch strings.ToLower(string(bytes.Trim(name, "*_"))) {
		case "q", "a":
			if reChatFriend.Match(rest) {
				n++
			}
		case "user", "assistant", "human", "ai":
			if reChatFriend.Match(rest) || len(bytes.Fields(rest)) >= 3 {
				n++
			}
		}
	}
	return n >= 2
}

// speakerWeak is speaker extended, when weak is set, to lower-case
// speaker labels and Q:/A: turns.
func speakerWeak(line []byte, weak bool) (role, string) {
	if r, label := speaker(line); r != roleNone || !weak {
		return r, label
	}
	t := bytes.TrimLeft(line, " \t")
	name, _, ok := bytes.Cut(t, []byte(":"))
	if !ok || len(name) > 9 {
		return roleNone, ""
	}
	switch n := strings.ToLower(string(bytes.Trim(name, "*_"))); n {
	case "q":
		return roleHuman, "Q"
	case "a":
		return roleAI, "A"
	default:
		if info, ok := speakerRoles[n]; ok {
			return info.role, info.label
		}
	}
	return roleNone, ""
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

// isRunnerLine reports lines of test-runner output: pytest banners,
// progress lines ("tests/x.py ..F  [ 41%]"), error, outcome and location
// lines; go test's RUN, PASS, FAIL and ok lines; jest's and vitest's file,
// failure and summary lines; mocha's counts; cargo test's results.
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
