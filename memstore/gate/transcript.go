package gate

import (
	"bytes"
	"fmt"
	"regexp"
	"slices"
	"strings"
	"unicode"
	"unicode/utf8"
)

// Thresholds of the transcript and tool-log detector. Each is set so that a
// quoted example in a specification passes and a pasted session does not.
const (
	minSpeakerTurns  = 4  // alternating speaker turns with both a human and an AI speaker
	maxTurnGap       = 60 // lines between two turns of one conversation
	minToolMarkers   = 3  // tool-call/tool-result markers, or one call and one result
	minJSONRPC       = 3  // JSON-RPC 2.0 messages, with a method and a result or error
	minStackFrames   = 4  // frame lines of one stack trace, counting its header (Traceback, goroutine, TypeError: ...)
	maxStackGap      = 2  // non-frame lines between two frames (Python source lines, Go function lines)
	minLogLines      = 5  // timestamped or levelled log lines in one run
	maxLogGap        = 3  // non-log lines between two log lines (continuations)
	transcriptPrefix = "Nothing was written. Memory keeps task specifications, data schemas, tool configurations and output constraints, not sessions or logs:"
)

const transcriptHint = transcriptPrefix + " write the rule or fact distilled from it instead, e.g. one bullet in task.md."

type role uint8

const (
	roleNone role = iota
	roleHuman
	roleAI
	roleOther // System:, Tool:
)

type speakerInfo struct {
	role  role
	label string // as shown in messages
}

var speakerRoles = map[string]speakerInfo{
	"user": {roleHuman, "User"}, "human": {roleHuman, "Human"},
	"assistant": {roleAI, "Assistant"}, "ai": {roleAI, "AI"}, "claude": {roleAI, "Claude"},
	"model": {roleAI, "Model"}, "bot": {roleAI, "Bot"}, "chatbot": {roleAI, "Chatbot"},
	"chatgpt": {roleAI, "ChatGPT"}, "gpt": {roleAI, "GPT"}, "gemini": {roleAI, "Gemini"},
	"copilot": {roleAI, "Copilot"}, "agent": {roleAI, "Agent"},
	"system": {roleOther, "System"}, "tool": {roleOther, "Tool"},
}

// labelOnlySpeakers name a side of a chat as a label ("Me:", "You said:")
// and never as a role field of JSON or YAML, where me and you are common
// values.
var labelOnlySpeakers = map[string]speakerInfo{
	"me": {roleHuman, "Me"}, "you": {roleHuman, "You"},
	"prompt": {roleHuman, "Prompt"}, "response": {roleAI, "Response"},
}

// capitalOnlyLabels count as speakers only capitalised or marked
// ("Prompt:", "> prompt"), never as weak lower-case labels: prompt: and
// response: are common keys of configuration.
var capitalOnlyLabels = map[string]bool{"prompt": true, "response": true}

// reParenSpeaker matches a speaker named with a role in parentheses,
// group 1 the role: "Alice (human):", "Claude (AI):".
var reParenSpeaker = regexp.MustCompile(`^[A-Za-z][\w.-]{0,20}(?: [A-Za-z][\w.-]{0,20})? \(([A-Za-z]{1,10})\)(?:\*\*|__)?:`)

// speakerLabel returns the speaker a lower-case label, or an emoji (see
// emojiSpeaker), names.
func speakerLabel(name string) (speakerInfo, bool) {
	if info, ok := speakerRoles[name]; ok {
		return info, true
	}
	if info, ok := labelOnlySpeakers[name]; ok {
		return info, true
	}
	if r, size := utf8.DecodeRuneInString(name); size == len(name) && r >= utf8.RuneSelf {
		return emojiSpeaker(r)
	}
	return speakerInfo{}, false
}

// reTurnTime matches the time stamp before a speaker label: "[10:02] ",
// "10:02:11 ", "[9:15 PM] ".
var reTurnTime = regexp.MustCompile(`^\[?\d{1,2}:\d{2}(?::\d{2})?(?:\s?[AaPp][Mm])?\]?\s+`)

// trimTurnTime removes a leading time stamp (see reTurnTime) from s.
func trimTurnTime(s []byte) []byte {
	if len(s) > 0 && (s[0] == '[' || '0' <= s[0] && s[0] <= '9') {
		if m := reTurnTime.Find(s); m != nil {
			return s[len(m):]
		}
	}
	return s
}

// speaker returns the role of a speaker line such as "User: ...",
// "**Assistant:** ...", "> user", "### Human", "[10:02] Claude: ...",
// "You said: ...", "Alice (human): ...". A plain "Name:" line must be
// capitalised (so YAML keys such as "user: alice" are not turns; see
// speakerWeak for lower-case turns); quote and heading forms may be
// lower-case.
func speaker(line []byte) (role, string) {
	s := trimTurnTime(bytes.TrimLeft(line, " \t"))
	marked := false
	if len(s) > 0 && s[0] == '>' {
		s, marked = bytes.TrimLeft(s[1:], " \t"), true
	}
	if len(s) > 0 && s[0] == '#' {
		s, marked = bytes.TrimLeft(bytes.TrimLeft(s, "#"), " \t"), true
	}
	s = bytes.TrimPrefix(bytes.TrimPrefix(s, []byte("**")), []byte("__"))
	if m := reParenSpeaker.FindSubmatch(s); m != nil {
		if info, ok := speakerLabel(strings.ToLower(string(m[1]))); ok && info.role != roleOther {
			return info.role, info.label
		}
	}
	n := 0
	for n < len(s) && n <= 10 && ('a' <= s[n] && s[n] <= 'z' || 'A' <= s[n] && s[n] <= 'Z') {
		n++
	}
	if n == 0 || n > 10 {
		return roleNone, ""
	}
	var buf [10]byte
	for i, c := range s[:n] {
		if 'A' <= c && c <= 'Z' {
			c += 'a' - 'A'
		}
		buf[i] = c
	}
	info, ok := speakerLabel(string(buf[:n]))
	if !ok {
		return roleNone, ""
	}
	rest := bytes.TrimPrefix(bytes.TrimPrefix(s[n:], []byte("**")), []byte("__"))
	if len(rest) >= 6 && bytes.EqualFold(rest[:6], []byte(" said:")) {
		rest = rest[5:]
	}
	switch {
	case len(rest) > 0 && rest[0] == ':':
		if !marked && !('A' <= s[0] && s[0] <= 'Z') {
			return roleNone, ""
		}
	case marked && len(bytes.Trim(rest, " \t*_:")) == 0:
	default:
		return roleNone, ""
	}
	return info.role, info.label
}

var (
	reGoFile      = regexp.MustCompile(`^\t\S+:\d+(?: \+0x[0-9a-f]+)?\s*$`)
	reMoreFrames  = regexp.MustCompile(`^\.\.\. \d+ (?:more|common frames omitted)\s*$`)
	reGoroutine   = regexp.MustCompile(`^goroutine \d+ \[[^\]]*\]:\s*$`)
	reAtFrame     = regexp.MustCompile(`^\s+at \S.*(?:\d\)?|\(Native Method\)|\(Unknown Source\)|\))\s*$`)
	reErrorHeader = regexp.MustCompile(`^[A-Za-z_][\w.]*(?:Error|Exception)(?::\s|$)`)
	reRubyFrame   = regexp.MustCompile(`^\s+(?:from )?\S+:\d+:in [\x60']`)
	rePythonFrame = regexp.MustCompile(`^\s*File ".+", line \d+`)
	reISOLog      = regexp.MustCompile(`^\[?\d{4}[-/]\d{2}[-/]\d{2}[T ]\d{2}:\d{2}(?::\d{2}(?:[.,]\d+)?)?(?:Z|[+-]\d{2}:?\d{2})?\]?\s+\S`)
	reSyslog      = regexp.MustCompile(`^(?:Jan|Feb|Mar|Apr|May|Jun|Jul|Aug|Sep|Oct|Nov|Dec) [ \d]\d \d{2}:\d{2}:\d{2} \S`)
	reLevelLog    = regexp.MustCompile(`^\[?(?:TRACE|DEBUG|INFO|NOTICE|WARN|WARNING|ERROR|ERR|FATAL|CRITICAL|PANIC)\]?(?::|\s)\s*\S`)
	reSlogText    = regexp.MustCompile(`^time=\S+ level=\S+`)
	reJSONLog     = regexp.MustCompile(`^\{\s*"(?:time|ts|timestamp|@timestamp|level|severity)"\s*:`)
	reJSONRPC     = regexp.MustCompile(`"jsonrpc"\s*:\s*"2\.0"`)
)

// isStackFrame reports lines of a stack trace: frames of Go (file lines;
// the function lines between them are gaps, since a Go call statement in a
// code sample looks the same), Java and C# ("at ..."), JavaScript, Python
// ("File ..."), Ruby, and the headers between them (goroutine N [...]:,
// panic:, Traceback, Exception in thread, TypeError: ..., Caused by:,
// ... N more).
func isStackFrame(line []byte) bool {
	if len(line) == 0 {
		return false
	}
	if (bytes.Contains(line, []byte("Error")) || bytes.Contains(line, []byte("Exception"))) && reErrorHeader.Match(line) {
		return true
	}
	switch c := line[0]; {
	case c == '\t' && bytes.IndexByte(line, ':') > 0 && reGoFile.Match(line):
		return true
	case c == 'g':
		return reGoroutine.Match(line)
	case c == 'T':
		return bytes.HasPrefix(line, []byte("Traceback (most recent call last):"))
	case c == 'E' && bytes.HasPrefix(line, []byte("Exception in thread ")):
		return true
	case c == 'p' && bytes.HasPrefix(line, []byte("panic: ")):
		return true
	case c == 'C':
		return bytes.HasPrefix(line, []byte("Caused by: "))
	}
	t := bytes.TrimLeft(line, " \t")
	switch {
	case bytes.HasPrefix(t, []byte("Traceback (most recent call last):")):
		return true
	case bytes.Contains(t, []byte(":in ")) && reRubyFrame.Match(line):
		return true
	case bytes.HasPrefix(t, []byte("at ")):
		return reAtFrame.Match(line)
	case bytes.HasPrefix(t, []byte("File \"")):
		return rePythonFrame.Match(line)
	case bytes.HasPrefix(t, []byte("... ")):
		return reMoreFrames.Match(t)
	}
	return false
}

func isLogLine(line []byte) bool {
	if len(line) < 8 {
		return false
	}
	c := line[0]
	switch {
	case '0' <= c && c <= '9' || c == '[':
		return reISOLog.Match(line) || c == '[' && reLevelLog.Match(line)
	case 'A' <= c && c <= 'Z':
		return reLevelLog.Match(line) || reSyslog.Match(line)
	case c == 't':
		return reSlogText.Match(line)
	case c == '{':
		return reJSONLog.Match(line)
	}
	return false
}

var (
	toolCallMarkers   = []string{"<tool_call", "<function_calls", "<invoke", "<tool_use", "[tool call", "[tool_call", "[tool use"}
	toolResultMarkers = []string{"<tool_result", "<function_results", "<function_result", "<tool_response", "[tool result", "[tool_result", "[tool output"}
	toolAnyMarkers    = append(append([]string{`"tool_use"`, `"tool_result"`}, toolCallMarkers...), toolResultMarkers...)
)

// toolMarker classifies a lower-cased line: +1 a tool call, -1 a tool
// result, 0 neither. Tag and bracket markers count at the start of a line
// only, so a spec may mention `<tool_call>` in prose; JSON content blocks
// ("type": "tool_use") count anywhere.
func toolMarker(lower []byte) int {
	t := bytes.TrimLeft(lower, " \t>")
	for _, m := range toolCallMarkers {
		if bytes.HasPrefix(t, []byte(m)) {
			return 1
		}
	}
	for _, m := range toolResultMarkers {
		if bytes.HasPrefix(t, []byte(m)) {
			return -1
		}
	}
	if i := bytes.Index(lower, []byte(`"tool_use"`)); i >= 0 && bytes.Contains(lower, []byte(`"type"`)) {
		return 1
	}
	if i := bytes.Index(lower, []byte(`"tool_result"`)); i >= 0 && bytes.Contains(lower, []byte(`"type"`)) {
		return -1
	}
	return 0
}

// run tracks a run of matching lines that tolerates short gaps.
type run struct {
	maxGap      int
	start, last int // line numbers; start 0 when no run is open
	count       int
}

// add records a matching line n and returns the size of the run it is in.
func (r *run) add(n int) int {
	if r.start == 0 || n-r.last-1 > r.maxGap {
		r.start, r.count = n, 0
	}
	r.last = n
	r.count++
	return r.count
}

type conversation struct {
	start, last, turns, alternations int
	prev                             role
	human, ai                        bool
	labels                           []string
	names                            [roleOther + 1]string // the label each role was first named by
}

// breaks reports whether a weak turn (a lower-case label, see speakerWeak)
// of role r named label cannot continue c: it names its role by another
// label than before. Weak labels are also keys of a list of definitions
// (user: ..., agent: ..., model: ...); a conversation keeps its two names.
func (c *conversation) breaks(r role, label string) bool {
	return c.names[r] != "" && c.names[r] != label
}

func (c *conversation) add(n int, r role, label string) {
	if c.turns == 0 || n-c.last > maxTurnGap {
		*c = conversation{start: n}
	}
	if c.turns > 0 && r != c.prev {
		c.alternations++
	}
	c.turns++
	c.last, c.prev = n, r
	c.human = c.human || r == roleHuman
	c.ai = c.ai || r == roleAI
	if c.names[r] == "" {
		c.names[r] = label
	}
	for _, l := range c.labels {
		if l == label {
			return
		}
	}
	if len(c.labels) < 4 {
		c.labels = append(c.labels, label)
	}
}

func (c *conversation) isTranscript() bool {
	return c.human && c.ai && c.alternations+1 >= minSpeakerTurns
}

// findTranscript returns a refusal when content looks like a session
// transcript or a tool log, or nil. lower is content with ASCII letters
// lower-cased.
func findTranscript(content, lower []byte) *Rejection {
	checkTools := containsAny(lower, toolAnyMarkers)
	checkRPC := bytes.Count(lower, []byte(`"jsonrpc"`)) >= minJSONRPC &&
		bytes.Contains(lower, []byte(`"method"`)) &&
		(bytes.Contains(lower, []byte(`"result"`)) || bytes.Contains(lower, []byte(`"error"`)))

	var (
		conv                  conversation
		stack                 = run{maxGap: maxStackGap}
		logs                  = run{maxGap: maxLogGap}
		calls, results, tools int
		toolStart             int
		rpc, rpcStart         int
	)
	if r := findTranscriptFormat(content, lower); r != nil {
		return r
	}
	weak := weakSpeakersConversational(content)
	lineNo := 0
	for off := 0; off < len(content); {
		start := off
		var line []byte
		line, off = nextLine(content, off)
		lline := lower[start : start+len(line)]
		lineNo++
		if bytes.IndexByte(line, '<') >= 0 {
			line = stripTags(line)
		}

		if r, label, lower := speakerWeak(line, weak); r != roleNone {
			if lower && conv.breaks(r, label) {
				conv = conversation{}
			}
			conv.add(lineNo, r, label)
			if conv.isTranscript() {
				// Count the rest of this conversation before reporting.
				return conversationRejection(content, off, lineNo, conv, weak)
			}
		}
		if isStackFrame(line) {
			if stack.add(lineNo) >= minStackFrames {
				n := finishRun(content, off, lineNo, &stack, isStackFrame)
				return reject(RuleTranscript, stack.start,
					fmt.Sprintf("The content looks like a tool log: a stack trace of %d frame lines starting at line %d.", n, stack.start),
					transcriptHint)
			}
		}
		if isLogLine(line) {
			if logs.add(lineNo) >= minLogLines {
				n := finishRun(content, off, lineNo, &logs, isLogLine)
				return reject(RuleTranscript, logs.start,
					fmt.Sprintf("The content looks like a tool log: %d timestamped or levelled log lines starting at line %d.", n, logs.start),
					transcriptHint)
			}
		}
		if checkTools {
			if m := toolMarker(lline); m != 0 {
				if tools == 0 {
					toolStart = lineNo
				}
				tools++
				if m > 0 {
					calls++
				} else {
					results++
				}
				if tools >= minToolMarkers || calls > 0 && results > 0 {
					return reject(RuleTranscript, toolStart,
						fmt.Sprintf("The content looks like a tool log: %d tool-call/tool-result blocks starting at line %d.", tools, toolStart),
						transcriptHint)
				}
			}
		}
		if checkRPC && reJSONRPC.Match(line) {
			if rpc == 0 {
				rpcStart = lineNo
			}
			rpc += len(reJSONRPC.FindAllIndex(line, -1))
			if rpc >= minJSONRPC {
				return reject(RuleTranscript, rpcStart,
					fmt.Sprintf("The content looks like a protocol log: %d JSON-RPC 2.0 messages starting at line %d.", rpc, rpcStart),
					transcriptHint)
			}
		}
	}
	return findDialogue(content)
}

// isChatValue reports values that talk to someone: a question, an
// exclamation, or first- or second-person chat ("can you", "thanks").
func isChatValue(v []byte) bool {
	t := bytes.TrimRight(v, " \t")
	return len(t) > 0 && (t[len(t)-1] == '?' || t[len(t)-1] == '!') || reChatFriend.Match(v)
}

// findDialogue returns the refusal of a short chat in weak labels, whose
// turns are too short to read as chat one by one, or nil: lines in a row
// (blank lines between allowed), each an unindented weak label
// (lower-case or an emoji, see weakLabel) or a list item holding one
// ("- me: ...", "2. user: ..."), also quoted ("> me: ..."), and its
// value, whose two labels, a human's and an AI's, take turns strictly
// (see dialogue), and that read as a chat: minSpeakerTurns or more whose
// values are not those of a list of keys or steps (see dialogue.isChat),
// or two or three that answer one another and stand alone in the
// content, the only turns in it (see dialogue.isShortChat and
// standsAlone). "me: status? / bot: green / me: deploy / bot: deployed",
// "🧑 totals for March? / 🤖 4.1M / ...", "user: check march / bot:
// done, 4.1M / user: now april / bot: done, 3.9M" and "user: run the
// export / bot: done" are chats; "user: alice / agent: nightly-report /
// ...", "- me: owns the export / - bot: posts the summary / ...", a
// runbook "🤖 export runs at 02:00 / 👤 review the totals / ..." and
// "Reply like this: / user: totals? / bot: 4.1M" are not.
func findDialogue(content []byte) *Rejection {
	var (
		d                dialogue
		short            conversation // the first short chat, turns 0 for none
		nonBlank, labels int          // non-blank lines, and turns among them
	)
	lineNo := 0
	for off := 0; off < len(content); {
		var line []byte
		line, off = nextLine(content, off)
		lineNo++
		if len(bytes.TrimSpace(line)) == 0 {
			continue
		}
		nonBlank++
		var (
			info  speakerInfo
			name  string
			value []byte
			ok    bool
		)
		item, listed := listItemText(unquoted(line))
		if listed || item[0] != ' ' && item[0] != '\t' {
			if name, value, ok = weakLabel(stripTags(item)); ok {
				info, ok = speakerLabel(name)
			}
		}
		ok = ok && (info.role == roleHuman || info.role == roleAI) && !capitalOnlyLabels[name] && len(value) > 0
		if !ok || d.conv.turns > 0 && (info.role == d.conv.prev || d.conv.breaks(info.role, info.label)) {
			if short.turns == 0 && d.isShortChat() {
				short = d.conv
			}
			d = dialogue{}
			if !ok {
				continue
			}
		}
		labels++
		d.add(lineNo, info, name, value, listed)
		if d.isChat() {
			return conversationRejection(content, off, lineNo, d.conv, true)
		}
	}
	if short.turns == 0 && d.isShortChat() {
		short = d.conv
	}
	if short.turns > 0 && short.turns == labels && standsAlone(content, short, nonBlank) {
		return turnsRejection(short)
	}
	return nil
}

// A dialogue is a run of turns in weak labels that take turns strictly,
// as findDialogue reads it, and the cues that make it read as a chat.
type dialogue struct {
	conv                          conversation
	turnValues, chat, acks, links int
	chatOnly                      bool // the human's label names a side of a chat and nothing else
	humanTurn                     bool // a human's value is a turn (see isTurnValue)
	listed                        bool // a turn is a list item
	words                         bool // a label is a word, not an emoji
	replies                       [answerStrong + 1]int
	prev                          []byte // the value of the turn before
}

// add records line n, a turn of the speaker info labelled name with value
// v; listed reports a list item.
func (d *dialogue) add(n int, info speakerInfo, name string, v []byte, listed bool) {
	d.conv.add(n, info.role, info.label)
	turn := isTurnValue(v)
	if info.role == roleHuman {
		_, d.chatOnly = labelOnlySpeakers[name]
		d.chatOnly = d.chatOnly && !capitalOnlyLabels[name] && !listed
		d.humanTurn = d.humanTurn || turn
	}
	d.listed = d.listed || listed
	d.words = d.words || !isEmojiName(name)
	if turn {
		d.turnValues++
	}
	if isChatValue(v) {
		d.chat++
	}
	switch replyCueOf(info.role, v, d.prev) {
	case cueAck:
		d.acks++
	case cueLink:
		d.links++
	}
	d.replies[answerOf(info.role, v, d.prev)]++
	d.prev = v
}

// isChat reports whether the dialogue is a chat of minSpeakerTurns or
// more turns: the human's label is me or you outside a list, or at least
// half the values are turns (see isTurnValue) and one is chat (see
// isChatValue) or two answer or follow up the turn before them, not both
// bare acknowledgements (see replyCueOf), or, in emoji labels alone,
// which are never keys, one turn answers the one before (see answerOf):
// "🧑 deploy / 🤖 deployed".
func (d *dialogue) isChat() bool {
	if !d.conv.isTranscript() {
		return false
	}
	return d.chatOnly || 2*d.turnValues >= d.conv.turns && (d.chat > 0 || d.links > 0 && d.acks+d.links >= minReplyCues) ||
		!d.words && d.replies[answerWeak]+d.replies[answerStrong] > 0
}

// isShortChat reports whether the dialogue, ended, is a chat too short
// for isChat: two or three turns of both sides, a human's value a turn
// (or the labels emoji alone, never keys), and one turn that answers the
// one before (see answerOf), with a question or a courtesy when the turns
// are list items ("- user: open the dashboard / - bot: done" is a
// checklist).
func (d *dialogue) isShortChat() bool {
	if d.conv.turns < 2 || d.conv.turns >= minSpeakerTurns || !d.conv.human || !d.conv.ai || !d.humanTurn && d.words {
		return false
	}
	return d.replies[answerStrong] > 0 || !d.listed && d.replies[answerWeak] > 0
}

// isEmojiName reports a label that is an emoji (see emojiLabel).
func isEmojiName(name string) bool {
	r, size := utf8.DecodeRuneInString(name)
	return size == len(name) && r >= utf8.RuneSelf
}

// How a turn answers the one before it (see answerOf).
const (
	answerNone   = iota
	answerWeak   // an acknowledgement or an echo of a request
	answerStrong // a reply to a question, or a courtesy
)

// questionWords start a question written without its question mark.
var questionWords = []string{"what", "what's", "how", "why", "which", "where", "can you", "could you", "would you",
	"will you", "do you", "did you", "are you", "is it", "is there", "are there", "did it"}

// reCourtesy matches the courtesies of a chat: "please", "thanks".
var reCourtesy = regexp.MustCompile(`(?i)\b(?:please|pls|thanks|thank you|thx|cheers)\b`)

// answerOf returns how v, the value of a turn of role r, answers prev,
// the value of the other side's turn before it (nil for none): strongly
// after a question (a question mark, or a question word first, see
// questionWords) or with a courtesy (see reCourtesy), weakly when an AI's
// turn after a request acknowledges it (see requestAcks) or echoes one of
// its verbs ("run the export" / "done", "export it" / "exported"). A
// human's value that reports a step done ("reviewed the totals") is a
// status, not a request: "done" after it is a checklist.
func answerOf(r role, v, prev []byte) int {
	switch {
	case prev == nil:
		return answerNone
	case reCourtesy.Match(v) || isQuestion(prev):
		return answerStrong
	case r != roleAI:
		return answerNone
	}
	for _, w := range leadingWords(prev, 3) {
		if echoesVerb(firstWord(v), w) {
			return answerWeak
		}
	}
	if first := firstWord(prev); len(first) > 4 && strings.HasSuffix(first, "ed") {
		return answerNone
	}
	for _, w := range requestAcks {
		if startsWithWord(v, w) {
			return answerWeak
		}
	}
	return answerNone
}

// isQuestion reports a value that asks: it ends with a question mark or
// starts with a question word (see questionWords).
func isQuestion(v []byte) bool {
	t := bytes.TrimRight(v, " \t")
	if len(t) > 0 && t[len(t)-1] == '?' {
		return true
	}
	for _, w := range questionWords {
		if startsWithWord(t, w) {
			return true
		}
	}
	return false
}

// leadingWords returns the first n words of v, lower-cased, as runs of
// ASCII letters.
func leadingWords(v []byte, n int) []string {
	var out []string
	for _, f := range bytes.Fields(v) {
		if len(out) == n {
			break
		}
		out = append(out, firstWord(f))
	}
	return out
}

// maxShortChatContext bounds the other lines beside a short chat (a
// heading, a date, the fences of a code block): with more the chat is a
// quotation inside a text.
const maxShortChatContext = 2

// framingWords are words of the text around a quoted exchange that
// present it as an example or a rule, not as a session.
var framingWords = []string{"example", "e.g.", "for instance", "such as", "like this", "like so", "sample", "template",
	"format", "never", "don't", "do not", "avoid", "instead", "style", "tone"}

// standsAlone reports whether the short chat c stands alone in content,
// of nonBlank non-blank lines: at most maxShortChatContext other lines,
// none of which presents it (see framingWords).
func standsAlone(content []byte, c conversation, nonBlank int) bool {
	if nonBlank-c.turns > maxShortChatContext {
		return false
	}
	lineNo := 0
	for off := 0; off < len(content); {
		var line []byte
		line, off = nextLine(content, off)
		lineNo++
		if lineNo >= c.start && lineNo <= c.last {
			continue
		}
		lower := bytes.ToLower(line)
		for _, w := range framingWords {
			if bytes.Contains(lower, []byte(w)) {
				return false
			}
		}
	}
	return true
}

// minReplyCues is how many answers and follow-ups (see replyCueOf), one
// of them a link, make the turns of a short chat read as one when none of
// them is chat.
const minReplyCues = 2

// unquoted returns line without the markers of a markdown quotation
// ("> ", ">> ") before it, or line when it has none.
func unquoted(line []byte) []byte {
	t := bytes.TrimLeft(line, " \t")
	if len(t) == 0 || t[0] != '>' {
		return line
	}
	t = bytes.TrimLeft(t, "> ")
	if len(t) == 0 {
		return line
	}
	return t
}

// listItemText returns line without its list marker ("- ", "* ", "+ ",
// "12. ", "3) ") and indentation, and whether it had one; else line.
func listItemText(line []byte) ([]byte, bool) {
	t := bytes.TrimLeft(line, " \t")
	if isListItem(t) {
		return t[2:], true
	}
	n := 0
	for n < len(t) && n < 3 && '0' <= t[n] && t[n] <= '9' {
		n++
	}
	if n > 0 && n+1 < len(t) && (t[n] == '.' || t[n] == ')') && t[n+1] == ' ' {
		return t[n+2:], true
	}
	return line, false
}

// Words that mark a value as an answer to the turn before it or a
// follow-up to it: an AI's acknowledgement ("done, 4.1M", "ok", "got
// it"), and a human's follow-up or question without its question mark
// ("and april?", "now march", "what about EMEA", "how big is it").
var (
	requestAcks   = []string{"done", "ok", "okay", "sure", "noted", "finished", "got it", "on it", "will do"}
	ackWords      = append([]string{"yes", "yep", "yeah", "nope"}, requestAcks...)
	followUpWords = []string{"and", "now", "again", "same for", "what", "how", "why", "which"}
)

// A replyCue is how a value ties a turn to the one before it.
type replyCue uint8

const (
	cueNone replyCue = iota
	// cueAck is an AI's acknowledgement (see ackWords); alone, done and
	// ok are also the statuses of a checklist.
	cueAck
	// cueLink is a human's follow-up (see followUpWords), or an AI's
	// value that starts with the past or progressive form of the verb
	// the turn before starts with: "check march" / "checked, 4.1M",
	// "load it" / "loading".
	cueLink
)

// replyCueOf returns the cue of v, the value of a turn of role r, to prev,
// the value of the turn before it.
func replyCueOf(r role, v, prev []byte) replyCue {
	if r == roleHuman {
		for _, w := range followUpWords {
			if startsWithWord(v, w) {
				return cueLink
			}
		}
		return cueNone
	}
	if echoesVerb(firstWord(v), firstWord(prev)) {
		return cueLink
	}
	for _, w := range ackWords {
		if startsWithWord(v, w) {
			return cueAck
		}
	}
	return cueNone
}

// startsWithWord reports whether v starts with the lower-case words w,
// in any case, followed by the end of v or a byte that is not a letter.
func startsWithWord(v []byte, w string) bool {
	return len(v) >= len(w) && bytes.EqualFold(v[:len(w)], []byte(w)) &&
		(len(v) == len(w) || !unicode.IsLetter(rune(v[len(w)])))
}

// firstWord returns the leading ASCII letters of v, lower-cased.
func firstWord(v []byte) string {
	n := 0
	for n < len(v) && ('a' <= v[n]|0x20 && v[n]|0x20 <= 'z') {
		n++
	}
	return strings.ToLower(string(v[:n]))
}

// echoesVerb reports whether a is the past or progressive form of the
// verb v, of three or more letters: load/loaded, save/saved, drop/dropped,
// run/running, rerun/rerunning.
func echoesVerb(a, v string) bool {
	if len(v) < 3 || len(a) <= len(v) || a[:len(v)-1] != v[:len(v)-1] {
		return false
	}
	last := v[len(v)-1:]
	forms := []string{v + "ed", v + "ing", v + last + "ed", v + last + "ing"}
	if last == "e" {
		forms = []string{v + "d", v[:len(v)-1] + "ing"}
	}
	return slices.Contains(forms, a)
}

// finishRun extends r over the lines that follow (the next line, number
// lineNo+1, starts at byte off) and returns its final count.
func finishRun(content []byte, off, lineNo int, r *run, match func([]byte) bool) int {
	for off < len(content) && lineNo-r.last <= r.maxGap {
		var line []byte
		line, off = nextLine(content, off)
		lineNo++
		if match(line) && lineNo-r.last-1 <= r.maxGap {
			r.last = lineNo
			r.count++
		}
	}
	return r.count
}

// conversationRejection finishes counting the conversation conv, found to be
// a transcript at line lineNo (the next line starts at byte off), with the
// weak speakers findTranscript chose, and builds the refusal.
func conversationRejection(content []byte, off, lineNo int, conv conversation, weak bool) *Rejection {
	for off < len(content) {
		var line []byte
		line, off = nextLine(content, off)
		lineNo++
		if lineNo-conv.last > maxTurnGap {
			break
		}
		if r, label, lower := speakerWeak(stripTags(line), weak); r != roleNone {
			if lower && conv.breaks(r, label) {
				break
			}
			conv.add(lineNo, r, label)
		}
	}
	return turnsRejection(conv)
}

// turnsRejection is the refusal of the conversation conv.
func turnsRejection(conv conversation) *Rejection {
	labels := make([]string, len(conv.labels))
	for i, l := range conv.labels {
		labels[i] = l + ":"
	}
	return reject(RuleTranscript, conv.start,
		fmt.Sprintf("The content looks like a session transcript: %d speaker turns (%s) starting at line %d.", conv.turns, strings.Join(labels, "/"), conv.start),
		transcriptHint)
}

func containsAny(b []byte, subs []string) bool {
	for _, s := range subs {
		if bytes.Contains(b, []byte(s)) {
			return true
		}
	}
	return false
}

// nextLine returns the line of content starting at byte off, without its
// line ending, and the offset of the next line.
func nextLine(content []byte, off int) (line []byte, next int) {
	end := bytes.IndexByte(content[off:], '\n')
	if end < 0 {
		end = len(content)
	} else {
		end += off
	}
	return bytes.TrimSuffix(content[off:end], []byte{'\r'}), end + 1
}
