package gate

import (
	"errors"
	"fmt"
	"path/filepath"
	"strings"
	"testing"
)

// transcriptWants gives the start line reported for each file under
// testdata/transcripts/positive.
var transcriptWants = map[string]int{
	"chat-plain.md":      3,
	"chat-human-ai.txt":  3,
	"chat-headings.md":   1,
	"chat-quoted.md":     1,
	"chat-bold.md":       1,
	"tool-xml.md":        3,
	"tool-use-json.json": 2,
	"tool-brackets.txt":  1,
	"jsonrpc.json":       1,
	"go-panic.txt":       1,
	"java-trace.txt":     1,
	"python-trace.txt":   1,
	"js-trace.md":        2,
	"iso-log.txt":        1,
	"level-log.txt":      1,
	"slog-log.md":        3,
}

func TestContent_TranscriptPositive(t *testing.T) {
	files := readCorpus(t, filepath.Join("testdata", "transcripts", "positive"))
	if got, min := len(files), 10; got < min {
		t.Errorf("positive corpus has %d files, want >= %d", got, min)
	}
	var golden strings.Builder
	for _, name := range sortedKeys(files) {
		t.Run(name, func(t *testing.T) {
			wantLine, ok := transcriptWants[name]
			if !ok {
				t.Fatalf("add %s to transcriptWants", name)
			}
			err := Content("notes/"+name, []byte(files[name]), DefaultLimits())
			var rej *Rejection
			if !errors.As(err, &rej) {
				t.Fatalf("Content = %v, want a *Rejection", err)
			}
			if got, want := rej.Rule, RuleTranscript; got != want {
				t.Errorf("Rule = %q, want %q (%v)", got, want, err)
			}
			if got, want := rej.Line, wantLine; got != want {
				t.Errorf("Line = %d, want %d (%v)", got, want, err)
			}
			if !strings.Contains(rej.Hint, "task specifications, data schemas, tool configurations and output constraints") {
				t.Errorf("Hint %q does not say what memory keeps", rej.Hint)
			}
			fmt.Fprintf(&golden, "%s\t%s\n", name, rej.Error())
		})
	}
	checkGolden(t, "transcripts", golden.String())
}

func TestContent_TranscriptNegative(t *testing.T) {
	files := readCorpus(t, filepath.Join("testdata", "transcripts", "negative"))
	if got, min := len(files), 10; got < min {
		t.Errorf("negative corpus has %d files, want >= %d", got, min)
	}
	for _, name := range sortedKeys(files) {
		t.Run(name, func(t *testing.T) {
			if err := Content("notes/"+name, []byte(files[name]), DefaultLimits()); err != nil {
				t.Errorf("Content = %v, want nil", err)
			}
		})
	}
}

// Every file type is checked for transcripts: a chat saved as code, HTML
// or CSV is still a chat.
func TestContent_TranscriptInEveryFileType(t *testing.T) {
	chat := []byte("User: a\nAssistant: b\nUser: c\nAssistant: d\n")
	for _, rel := range []string{"artifacts/chat/app.js", "artifacts/chat/index.html", "artifacts/chat/data/log.csv", "notes/chat.md"} {
		var r *Rejection
		if err := Content(rel, chat, DefaultLimits()); !errors.As(err, &r) || r.Rule != RuleTranscript {
			t.Errorf("Content(%q) = %v, want a transcript rejection", rel, err)
		}
	}
}

func TestSpeaker(t *testing.T) {
	tests := []struct {
		line string
		want role
	}{
		{"User: hi", roleHuman},
		{"USER: hi", roleHuman},
		{"user: alice", roleNone},
		{"> user", roleHuman},
		{"> **Assistant:** ok", roleAI},
		{"### Assistant", roleAI},
		{"## user", roleHuman},
		{"**Human:** x", roleHuman},
		{"System: be brief", roleOther},
		{"Users: many", roleNone},
		{"Userland: x", roleNone},
		{"User", roleNone},
		{"Assistant manager: Bob", roleNone},
		{"Me: can you check it", roleHuman},
		{"me: can you check it", roleNone}, // lower-case: speakerWeak's
		{"You said:", roleHuman},
		{"ChatGPT said:", roleAI},
		{"[10:02] Claude: done", roleAI},
		{"10:02:11 User: hi", roleHuman},
		{"Mesa: 4", roleNone},
		{"Alice (human): can you check it", roleHuman},
		{"**Claude (AI):** done", roleAI},
		{"Bob (data): owns the pipeline", roleNone},
		{"Prompt: summarise it", roleHuman},
		{"Response: 4.1%", roleAI},
		{"", roleNone},
	}
	for _, tt := range tests {
		if got, _ := speaker([]byte(tt.line)); got != tt.want {
			t.Errorf("speaker(%q) = %v, want %v", tt.line, got, tt.want)
		}
	}
}

func TestSpeakerWeak(t *testing.T) {
	tests := []struct {
		line  string
		want  role
		lower bool
	}{
		{"me: can you check the nightly job", roleHuman, true},
		{"claude: the disk was full", roleAI, true},
		{"claude: Done.", roleAI, true},
		{"claude: sonnet", roleNone, false}, // a name, not a turn
		{"model: claude-sonnet-4", roleNone, false},
		{"user: ok", roleHuman, true}, // user: always counts
		{"[10:03] bot: Fixed; March is included.", roleAI, true},
		{"**me:** please rerun it", roleHuman, true},
		{"claude said: I reran it", roleAI, true},
		{"q: how do I rerun it", roleHuman, false},
		{"User: hi", roleHuman, false},
		{"- user: alice asks for reports", roleNone, false}, // a YAML list item
		{"manager: please rerun it", roleNone, false},
		{"prompt: summarise the churn numbers, please.", roleNone, false}, // a configuration key
		{"🧑: why did the export fail?", roleHuman, true},
		{"👤 can you check it", roleHuman, true},
		{"**🧑‍💻:** please rerun it", roleHuman, true},
		{"👋🏽 hi there", roleNone, false}, // a hand, not a person
		{"🤖 : Done.", roleAI, true},
		{"🤖x", roleNone, false},
		{"✅ tests pass", roleNone, false},
		{"💬 it failed on lint", roleAI, true},
		{"✨: I reran it", roleAI, true},
		{"🦾 rerunning", roleNone, false}, // one word: not a turn
		{"💡 keep files small", roleNone, false},
	}
	for _, tt := range tests {
		if got, _, lower := speakerWeak([]byte(tt.line), true); got != tt.want || lower != tt.lower {
			t.Errorf("speakerWeak(%q) = %v, %v; want %v, %v", tt.line, got, lower, tt.want, tt.lower)
		}
	}
	if got, _, _ := speakerWeak([]byte("me: can you check it"), false); got != roleNone {
		t.Errorf("speakerWeak without weak = %v, want none", got)
	}
}

func TestFindDialogue(t *testing.T) {
	for in, want := range map[string]int{
		"me: status?\nbot: green\nme: deploy\nbot: deployed\n":                                          1,
		"# Chat\n\nme: check march\n\nclaude: ok done\n\nme: and april\n\nclaude: also done\n":          3,
		"user: totals for march?\nbot: 4.1M\nuser: and april?\nbot: 3.9M\n":                             1,
		"🧑 totals?\n🤖 4.1M\n🧑 and april, please\n🤖 3.9M\n":                                              1,
		"me: status?\nbot: green\nme: deploy\n":                                                         1, // three turns, alone
		"user: run the export\nbot: done\n":                                                             1, // two turns, alone
		"🧑 export it\n🤖 done\n🧑 thanks\n":                                                               1,
		"# 2026-03-01\nme: rerun the backfill\nclaude: rerunning it\n":                                  2,
		"For example:\nuser: run the export\nbot: done\n":                                               0, // presented as an example
		"Rules:\n\nA\nB\nC\nuser: run the export\nbot: done\n":                                          0, // inside a text
		"- user: open the dashboard\n- bot: done\n":                                                     0, // a checklist
		"user: reviewed the totals\nbot: done\n":                                                        0, // a status
		"user: asks for the report\nbot: posts it on Monday\n":                                          0, // duties
		"user: deploy\nbot: deployed\n":                                                                 0, // keys
		"> user: run the export\n> bot: done\n":                                                         1, // quoted
		"Example:\n> user: run the export\n> bot: done\n":                                               0,
		"me: status?\nme: again?\nbot: green\n":                                                         0, // not the only turns
		"🧑 status\n🤖 green\n🧑 deploy\n🤖 deployed\n":                                                     1, // emoji, one word each
		"👤 export\n🤖 exported\n":                                                                        1,
		"👤 Alice\n🤖 nightly-bot\n👤 Bob\n🤖 triage-bot\n":                                                 0, // a legend
		"me: status?\nme: again?\nbot: green\nme: deploy\n":                                             0, // not in turn
		"me: status?\nbot: green\nsee the runbook\nme: deploy\nbot: deployed\n":                         0, // other lines between
		"user: alice\nagent: nightly-report\nuser: bob\nagent: triage-bot\n":                            0, // keys
		"🤖 export runs at 02:00\n👤 review the totals\n🤖 report is mailed\n👤 sign off\n":                 0,
		"me: a\nyou: b\nme: c\nyou: d\n":                                                                0, // two people
		"  me: status?\n  bot: green\n  me: deploy\n  bot: deployed\n":                                  0, // indented: YAML
		"- me: status?\n- bot: green\n- me: deploy\n- bot: deployed\n":                                  0, // a list
		"me: status?\nagent: green\nme: deploy\nbot: deployed\n":                                        0, // a third name
		"- me: can you check it?\n- bot: it failed on lint\n- me: fix it\n- bot: fixed\n":               1, // a list of chat
		"Log:\n  2. user: check march\n  3. bot: checked, 4.1M\n  4. user: now april\n  5. bot: done\n": 2,
		"🧑 can you check it?\n💬 it failed on lint\n🧑 fix it\n💬 fixed and pushed\n":                      1,
		"user: check march totals\nbot: done, 4.1M\nuser: now april\nbot: done, 3.9M\n":                 1, // an answer and a follow-up
		"user: load orders\nbot: loaded 12k rows\nuser: drop tests\nbot: dropped 40 rows\n":             1, // echoed verbs
		"- me: owns the export\n- bot: posts the summary\n- me: signs off\n- bot: archives it\n":        0, // owners
		"1. user: open the dashboard\n2. bot: refresh the cache\n3. user: check it\n4. bot: send it\n":  0, // steps
		"- user: reviewed the totals\n- bot: done at 02:00\n- user: signed off\n- bot: done by 9\n":     0, // statuses alone
		"✨ add parquet export\n👷 fix the ci pipeline\n✨ add region column\n👷 bump the runner\n":         0, // a changelog
	} {
		got := 0
		if r := findDialogue([]byte(in)); r != nil {
			got = r.Line
		}
		if got != want {
			t.Errorf("findDialogue(%q) line = %d, want %d", in, got, want)
		}
	}
}

func TestReplyCueOf(t *testing.T) {
	tests := []struct {
		r           role
		value, prev string
		want        replyCue
	}{
		{roleAI, "done, 4.1M", "check march", cueAck},
		{roleAI, "Got it.", "rerun it", cueAck},
		{roleAI, "checked, 4.1M", "check march", cueLink},
		{roleAI, "dropped 40 rows", "drop the test rows", cueLink},
		{roleAI, "saved", "save it", cueLink},
		{roleAI, "rerunning it now", "rerun the backfill", cueLink},
		{roleAI, "reports nightly", "report owners", cueNone}, // a third person, not an answer
		{roleAI, "donezo", "check", cueNone},
		{roleAI, "posts the summary", "owns the export", cueNone},
		{roleHuman, "and april?", "done", cueLink},
		{roleHuman, "now april", "done", cueLink},
		{roleHuman, "what about EMEA", "done", cueLink},
		{roleHuman, "android build", "done", cueNone}, // and is not a word here
		{roleHuman, "done", "check", cueNone},         // acknowledgements are the AI's
		{roleHuman, "owns the export", "", cueNone},
	}
	for _, tt := range tests {
		if got := replyCueOf(tt.r, []byte(tt.value), []byte(tt.prev)); got != tt.want {
			t.Errorf("replyCueOf(%v, %q, %q) = %v, want %v", tt.r, tt.value, tt.prev, got, tt.want)
		}
	}
}

func TestAnswerOf(t *testing.T) {
	tests := []struct {
		r           role
		value, prev string
		want        int
	}{
		{roleAI, "4.1M", "totals for march?", answerStrong},
		{roleAI, "240 ms", "what's the p95", answerStrong},
		{roleHuman, "the march export", "hi, what do you need?", answerStrong},
		{roleHuman, "thanks", "done", answerStrong},
		{roleAI, "done", "run the export", answerWeak},
		{roleAI, "exported 4,120 rows", "export march", answerWeak},
		{roleAI, "rerunning it now", "rerun the backfill", answerWeak},
		{roleAI, "done at 02:00", "reviewed the totals", answerNone}, // a status
		{roleAI, "yes", "read-only access", answerNone},
		{roleAI, "posts it on Monday", "asks for the report", answerNone},
		{roleHuman, "done", "run the export", answerNone},
		{roleAI, "done", "", answerNone},
	}
	for _, tt := range tests {
		var prev []byte
		if tt.prev != "" {
			prev = []byte(tt.prev)
		}
		if got := answerOf(tt.r, []byte(tt.value), prev); got != tt.want {
			t.Errorf("answerOf(%v, %q, %q) = %d, want %d", tt.r, tt.value, tt.prev, got, tt.want)
		}
	}
}

func TestListItemText(t *testing.T) {
	for in, want := range map[string]string{
		"- me: hi":       "me: hi",
		"  * bot: ok":    "bot: ok",
		"12. user: hi":   "user: hi",
		"3) user: hi":    "user: hi",
		"2024. user: hi": "2024. user: hi", // a year, not an item number
		"-me: hi":        "-me: hi",
		"me: hi":         "me: hi",
	} {
		if got, _ := listItemText([]byte(in)); string(got) != want {
			t.Errorf("listItemText(%q) = %q, want %q", in, got, want)
		}
	}
}

func TestIsProseTurn(t *testing.T) {
	for in, want := range map[string]bool{
		"can you check it":                      true, // chat
		"the disk was full.":                    true, // a sentence
		"the disk on the runner was full again": true, // six words
		"alice":                                 false,
		"claude-sonnet-4":                       false,
		"runs the nightly report":               false, // a description
		"the model used for search":             false,
		"":                                      false,
	} {
		if got := isProseTurn([]byte(in)); got != want {
			t.Errorf("isProseTurn(%q) = %v, want %v", in, got, want)
		}
	}
}

func TestConversation_Breaks(t *testing.T) {
	var c conversation
	c.add(1, roleHuman, "User")
	c.add(2, roleAI, "Agent")
	if c.breaks(roleAI, "Agent") || c.breaks(roleHuman, "User") {
		t.Error("the same two names break the conversation")
	}
	if !c.breaks(roleAI, "Model") {
		t.Error("a third name does not break the conversation")
	}
}

func TestRunnerLine(t *testing.T) {
	for in, want := range map[string]runnerKind{
		"  ✓ parses dates (45ms)":                runnerStrong,
		"  ✓ renders (5 ms)":                     runnerStrong,
		" ✓ src/a.test.ts (3 tests) 5ms":         runnerStrong,
		"  ✓ parses dates":                       runnerPassMark,
		"    ✔ parses times":                     runnerPassMark,
		"  1) fails on empty input":              runnerFailMark,
		"  ✕ renders":                            runnerFailMark,
		"  12 passing (3s)":                      runnerStrong,
		"ok 1 - parses dates":                    runnerStrong,
		"not ok 3 - fails":                       runnerStrong,
		"1..4":                                   runnerStrong,
		"5 examples, 1 failure":                  runnerStrong,
		"Finished in 0.01 seconds":               runnerStrong,
		"rspec ./spec/parser_spec.rb:4 # Parser": runnerStrong,
		"OK (12 tests, 30 assertions)":           runnerStrong,
		"✓ schema reviewed":                      runnerNone, // not indented: a checklist
		"- ✓ schema reviewed":                    runnerNone,
		"1) export the orders":                   runnerNone,
		"ok, 1 more thing":                       runnerNone,
	} {
		if got := runnerLine([]byte(in)); got != want {
			t.Errorf("runnerLine(%q) = %v, want %v", in, got, want)
		}
	}
}
