package gate

import (
	"bufio"
	"encoding/base64"
	"encoding/hex"
	"errors"
	"fmt"
	"hash/fnv"
	"math/rand/v2"
	"net/url"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"testing"
)

// A corpusCase is one case of testdata/corpus (see its README).
type corpusCase struct {
	id, kind, ext string
	text          string
	secrets       []string // generated secret-shaped parts, which no message may repeat
}

// readCorpusFile parses a corpus file and expands its markers.
func readCorpusFile(t *testing.T, name string) []corpusCase {
	t.Helper()
	f, err := os.Open(filepath.Join("testdata", "corpus", name))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var (
		cases []corpusCase
		cur   *corpusCase
		body  []string
	)
	flush := func() {
		if cur != nil {
			cur.text = strings.Join(body, "\n") + "\n"
			cases = append(cases, *cur)
		}
	}
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	for sc.Scan() {
		line := sc.Text()
		if h, ok := strings.CutPrefix(line, "=== "); ok {
			flush()
			parts := strings.Split(h, " | ")
			if len(parts) != 3 {
				t.Fatalf("%s: bad header %q", name, line)
			}
			cur, body = &corpusCase{id: parts[0], kind: parts[1], ext: parts[2]}, nil
			continue
		}
		if cur == nil {
			continue // comments before the first case
		}
		body = append(body, line)
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	flush()
	seen := map[string]bool{}
	for i := range cases {
		c := &cases[i]
		if seen[c.id] {
			t.Fatalf("%s: duplicate id %s", name, c.id)
		}
		seen[c.id] = true
		c.text, c.secrets = expandMarkers(t, c.id, c.text)
		if c.ext == "path" {
			c.text = strings.TrimSuffix(c.text, "\n")
		}
	}
	return cases
}

var charsets = map[string]string{
	"A": "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789",
	"a": "abcdefghijklmnopqrstuvwxyz0123456789",
	"l": "abcdefghijklmnopqrstuvwxyz",
	"L": "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz",
	"h": "0123456789abcdef",
	"H": "0123456789ABCDEF",
	"U": "ABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789",
	"C": "QPZRY9X8GF2TVDW0S3JN54KHCE6MUA7L",
	"b": "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/",
	"u": "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_",
	"d": "0123456789",
}

var reMarker = regexp.MustCompile(`\{\{(r|b64|b64u|b64wrap|hex|hexu|url|zw|shy|fw|ent):([^{}]*)\}\}|\{\{(jwt|jwt1|jwt2|pembody|uuid)\}\}`)

// expandMarkers expands the markers of text, innermost first, with a
// generator seeded by id, and returns the random parts it made.
func expandMarkers(t *testing.T, id, text string) (string, []string) {
	t.Helper()
	h := fnv.New64a()
	h.Write([]byte(id))
	rng := rand.New(rand.NewPCG(h.Sum64(), 0x5e1e))
	var made []string
	randStr := func(cs string, n int) string {
		b := make([]byte, n)
		for i := range b {
			b[i] = cs[rng.IntN(len(cs))]
		}
		made = append(made, string(b))
		return string(b)
	}
	for i := 0; strings.Contains(text, "{{") && reMarker.MatchString(text); i++ {
		if i > 100 {
			t.Fatalf("%s: markers do not terminate", id)
		}
		text = reMarker.ReplaceAllStringFunc(text, func(m string) string {
			s := reMarker.FindStringSubmatch(m)
			op, arg := s[1], s[2]
			if op == "" {
				op = s[3]
			}
			switch op {
			case "r":
				cs, n, _ := strings.Cut(arg, ":")
				var k int
				fmt.Sscan(n, &k)
				if charsets[cs] == "" || k <= 0 {
					t.Fatalf("%s: bad marker %s", id, m)
				}
				return randStr(charsets[cs], k)
			case "b64":
				return base64.StdEncoding.EncodeToString([]byte(arg))
			case "b64u":
				return base64.URLEncoding.EncodeToString([]byte(arg))
			case "b64wrap":
				e := base64.StdEncoding.EncodeToString([]byte(arg))
				var lines []string
				for len(e) > 76 {
					lines, e = append(lines, e[:76]), e[76:]
				}
				return strings.Join(append(lines, e), "\n")
			case "hex":
				return hex.EncodeToString([]byte(arg))
			case "hexu":
				return strings.ToUpper(hex.EncodeToString([]byte(arg)))
			case "url":
				return url.QueryEscape(arg)
			case "zw", "shy":
				mark := "\u200b"
				if op == "shy" {
					mark = "\u00ad"
				}
				mid := len(arg) / 2
				return arg[:mid] + mark + arg[mid:]
			case "fw":
				var b strings.Builder
				for _, r := range arg {
					if r > ' ' && r < 0x7f {
						r += 0xFF01 - '!'
					}
					b.WriteRune(r)
				}
				return b.String()
			case "ent":
				var b strings.Builder
				for _, r := range arg {
					fmt.Fprintf(&b, "&#%d;", r)
				}
				return b.String()
			case "jwt", "jwt1", "jwt2":
				enc := base64.RawURLEncoding.EncodeToString
				head := enc([]byte(`{"alg":"HS256","typ":"JWT"}`))
				body := enc([]byte(fmt.Sprintf(`{"sub":"%s","iat":1700000000}`, randStr(charsets["a"], 12))))
				sig := randStr(charsets["u"], 43)
				switch op {
				case "jwt1":
					return head + "." + body[:len(body)/2]
				case "jwt2":
					return body[len(body)/2:] + "." + sig
				}
				return head + "." + body + "." + sig
			case "pembody":
				lines := make([]string, 6)
				for i := range lines {
					lines[i] = randStr(charsets["b"], 64)
				}
				return strings.Join(lines, "\n") + "\n" + randStr(charsets["b"], 28) + "=="
			case "uuid":
				x := randStr(charsets["h"], 32)
				return x[:8] + "-" + x[8:12] + "-4" + x[13:16] + "-a" + x[17:20] + "-" + x[20:]
			}
			t.Fatalf("%s: unknown marker %s", id, m)
			return ""
		})
	}
	return text, made
}

// corpusVerdict runs one case through the gate: Path for path cases,
// Content otherwise. It returns the refusal, or nil.
func corpusVerdict(c corpusCase) *Rejection {
	var err error
	if c.ext == "path" {
		_, err = Path(c.text, Limits{})
	} else {
		err = Content("notes/"+c.id+c.ext, []byte(c.text), Limits{})
	}
	var r *Rejection
	if errors.As(err, &r) {
		return r
	}
	return nil
}

// TestCorpus runs every corpus case through the gate and fails unless at
// least 99% of secrets and raw data and 95% of transcripts are refused and
// no benign, legitimate or list case is.
func TestCorpus(t *testing.T) {
	type class struct {
		file             string
		rule             string  // the rule a refusal must carry ("" for must-accept classes)
		minShare         float64 // share that must be refused; 0 means none may be
		minCases, minKin int     // the corpus may not shrink below these
	}
	classes := []class{
		{"secrets.txt", RuleSecret, 0.99, 150, 60},
		{"benign.txt", "", 0, 80, 1},
		{"transcripts.txt", RuleTranscript, 0.95, 40, 10},
		{"legit.txt", "", 0, 30, 1},
		{"rawdata.txt", RuleRawData, 0.99, 10, 3},
		{"lists.txt", "", 0, 10, 1},
	}
	for _, cl := range classes {
		cases := readCorpusFile(t, cl.file)
		refused, kinds := 0, map[string]bool{}
		var misses []string
		for _, c := range cases {
			kinds[c.kind] = true
			r := corpusVerdict(c)
			if r != nil {
				for _, s := range c.secrets {
					if len(s) >= 8 && strings.Contains(r.Error(), s) {
						t.Errorf("%s/%s: the message repeats the secret", cl.file, c.id)
					}
				}
			}
			switch {
			case cl.rule != "" && r != nil && r.Rule == cl.rule:
				refused++
			case cl.rule != "":
				why := "accepted"
				if r != nil {
					why = "refused by rule " + r.Rule + ": " + r.Msg
				}
				misses = append(misses, c.id+" ("+why+")")
			case r != nil:
				refused++
				misses = append(misses, c.id+" (refused: "+r.Msg+")")
			}
		}
		if len(cases) < cl.minCases || len(kinds) < cl.minKin {
			t.Errorf("%s: %d cases of %d kinds; want at least %d of %d", cl.file, len(cases), len(kinds), cl.minCases, cl.minKin)
		}
		sort.Strings(misses)
		t.Logf("%s: %d cases, %d kinds: refused %d, accepted %d", cl.file, len(cases), len(kinds), refused, len(cases)-refused)
		for _, m := range misses {
			t.Logf("  %s: %s", cl.file, m)
		}
		if cl.rule == "" {
			if refused > 0 {
				t.Errorf("%s: %d of %d cases refused; none may be", cl.file, refused, len(cases))
			}
			continue
		}
		if share := float64(refused) / float64(len(cases)); share < cl.minShare {
			t.Errorf("%s: %d of %d cases refused (%.1f%%); at least %.0f%% must be", cl.file, refused, len(cases), 100*share, 100*cl.minShare)
		}
	}
}
