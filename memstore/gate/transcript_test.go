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
		{"", roleNone},
	}
	for _, tt := range tests {
		if got, _ := speaker([]byte(tt.line)); got != tt.want {
			t.Errorf("speaker(%q) = %v, want %v", tt.line, got, tt.want)
		}
	}
}
