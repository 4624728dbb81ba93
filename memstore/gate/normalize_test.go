package gate

import (
	"fmt"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestTableAssignments(t *testing.T) {
	tests := []struct {
		name string
		in   string
		want []string // "line: field: value"
	}{
		{"markdown header", "| service | user | password |\n|---|---|---|\n| db | admin | x1 |\n",
			[]string{"3: password: x1"}},
		{"markdown key value", "| name | value |\n|---|---|\n| API_TOKEN | x1 |\n| api key | x2 |\n",
			[]string{"3: API_TOKEN: x1", "4: api_key: x2"}},
		{"csv header", "user,password\nadmin,x1\nops,x2\n",
			[]string{"2: password: x1", "3: password: x2"}},
		{"tsv header", "user\tsecret\nadmin\tx1\n", []string{"2: secret: x1"}},
		{"csv header of several words", "the user,the password\nadmin,x1\n", nil},
		{"csv needs its header's width", "user,password\nadmin,x1,extra\n", nil},
		{"no adjacency in csv", "password,x1\n", nil},
		{"code is not a row", "setOf(ClassSecret, nameDict)\nf(a, b)\n", nil},
		{"non-credential columns", "| column | type |\n|---|---|\n| password_hash | text |\n", nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var got []string
			tableAssignments(strings.Split(strings.TrimSuffix(tt.in, "\n"), "\n"), func(l string, n int) {
				got = append(got, fmt.Sprintf("%d: %s", n, l))
			})
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("tableAssignments (-want +got):\n%s", diff)
			}
		})
	}
}

// TestFindSecret_ValueOnNextLine: a field ending a line takes a value
// alone on the next line; prose or a reference there is no secret.
func TestFindSecret_ValueOnNextLine(t *testing.T) {
	v := "Fake2Synth9x"
	for in, want := range map[string]int{
		"The password is\n" + v + "\n":         1,
		"notes\npassword:\n  " + v + "\n":      2,
		"**Token:**\n`" + v + "`\n":            1,
		"The password is\nkept in the vault\n": 0,
		"token:\n  ${API_TOKEN}\n":             0,
	} {
		got := 0
		if f := findSecret(in); f != nil {
			got = f.line
		}
		if got != want {
			t.Errorf("findSecret(%q) line = %d, want %d", in, got, want)
		}
	}
}

func TestSpelledWords(t *testing.T) {
	tests := []struct{ in, want string }{
		{"P-a-s-s-w-o-r-d: X", "Password: X"},
		{"p a s s w o r d : X", "password : X"},
		{"t.o.k.e.n = X", "token = X"},
		{"s_e_c_r_e_t=X", "secret=X"},
		{"The pass phrase is X", "The passphrase is X"},
		{"Mot de passe : X", "Motdepasse : X"},
		{"Contraseña: X", "Contrasena: X"},
		{"a-b-c and x-y", "a-b-c and x-y"},                 // three characters: a word's parts
		{"2024-01-03 and v1.2.3", "2024-01-03 and v1.2.3"}, // not single characters
		{"plain text", "plain text"},
	}
	for _, tt := range tests {
		if got := spelledWords(tt.in); got != tt.want {
			t.Errorf("spelledWords(%q) = %q, want %q", tt.in, got, tt.want)
		}
	}
}

func TestPlainFieldNames(t *testing.T) {
	tests := []struct{ in, want string }{
		{"p@ssw0rd: X", "password: X"},
		{"PASS-WORD = X", "password = X"},
		{`"t0k3n": "X"`, `"token": "X"`},
		{"API_K3Y: X and s3cr3t=Y", "apikey: X and secret=Y"},
		{"DB_P4SS=X", "DB_pass=X"},
		{"pass_word: X", "password: X"},
		{"pass.word = X", "password = X"},
		{"Staging Pass Word: X", "Staging password: X"},
		{"passWord: X", "password: X"},
		{`{"pass word": "X"}`, `{"password": "X"}`},
		{"secret~key ▸ X", "secretkey ▸ X"},
		{"to·ken: X", "token: X"},
		{"pass - word >> X", "password >> X"},
		{"p.a.s.s_word: X", "password: X"},
		{"s3: bucket", "s3: bucket"},                             // not a credential field plain
		{"pass-through: true", "pass-through: true"},             // passthrough is not one
		{"next_page_token: X", "next_page_token: X"},             // page_token is not one
		{"pass_word_policy: strict", "pass_word_policy: strict"}, // the word is not last
		{"API key: X", "API key: X"},                             // prose's compound: matchAssignment's
		{"by pass: X", "by pass: X"},
		{"10:02 and 3=3", "10:02 and 3=3"},
		{"password: X", "password: X"}, // plain already
		{"no assignment here", "no assignment here"},
		{"db pass|word: X", "db password: X"},
		{"pa|ss|word -> X", "password -> X"},
		{"api to|ken = X", "api token = X"},
		{"| pass | word: X |", "| pass | word: X |"}, // cells of a table row
		{"mode: pass|fail", "mode: pass|fail"},
	}
	for _, tt := range tests {
		if got := plainFieldNames(tt.in); got != tt.want {
			t.Errorf("plainFieldNames(%q) = %q, want %q", tt.in, got, tt.want)
		}
	}
}

func TestFoldConfusables(t *testing.T) {
	tests := []struct{ in, want string }{
		{"p\u0430ssword: X", "password: X"},        // Cyrillic a
		{"t\u043eken = X", "token = X"},            // Cyrillic o
		{"t\u03bfken: X", "token: X"},              // Greek omicron
		{"\u0440\u0430\u0455\u0455: X", "pass: X"}, // look-alikes alone that spell a field name
		{"DB_\u0420\u0410SSW\u041eRD=X", "DB_PASSWORD=X"},
		{"\u041f\u0430\u0440\u043e\u043b\u044c: X", "\u041f\u0430\u0440\u043e\u043b\u044c: X"}, // Russian: other letters too
		{"\u0441\u043e\u0440 X", "\u0441\u043e\u0440 X"},                                       // look-alikes alone that name nothing
		{"10\u03bcs", "10\u03bcs"},                                                             // mu looks like no Latin letter
		{"plain ascii", "plain ascii"},
	}
	for _, tt := range tests {
		if got := foldConfusables(tt.in, isCredentialField); got != tt.want {
			t.Errorf("foldConfusables(%q) = %q, want %q", tt.in, got, tt.want)
		}
	}
}

func TestLabelView(t *testing.T) {
	for in, want := range map[string]string{
		"Us\u0435r: hi\nplain line":       "User: hi\nplain line", // Cyrillic e in a Latin word
		"\uff35\uff33\uff25\uff32: hi":    "USER: hi",             // fullwidth
		"User\uff1a hi":                   "User: hi",             // fullwidth colon
		"\u0391\u0399: done":              "AI: done",             // Greek look-alikes alone that spell a label
		"\u041c\u0415: status?":           "ME: status?",          // Cyrillic
		"Us\u200ber: hi":                  "User: hi",             // a zero-width space
		"\U0001F9D1\u200d\U0001F4BB: hi":  "",                     // an emoji sequence keeps its joiner
		"\u0441\u043e\u0440 \u0434\u0430": "",                     // Russian that names nothing
		"plain ascii":                     "",
		"\u1d1cs\u1d07\u0280: hi":         "user: hi", // small capitals
		"User\u2236 hi":                   "User: hi", // a ratio sign as colon
		"\u00dcser: hi":                   "User: hi", // a combining mark
		"no colon \u00e9t\u00e9":          "",         // no label head
	} {
		got := string(labelView([]byte(in)))
		if got != want {
			t.Errorf("labelView(%q) = %q, want %q", in, got, want)
		}
	}
}
