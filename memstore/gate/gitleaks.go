package gate

import (
	"sort"
	"strings"
	"sync"

	"github.com/rs/zerolog"
	"github.com/spf13/viper"
	"github.com/zricethezav/gitleaks/v8/config"
	"github.com/zricethezav/gitleaks/v8/detect"
	"github.com/zricethezav/gitleaks/v8/logging"
)

// The gitleaks detector with its default rules, built once: compiling its
// few hundred rules takes tens of milliseconds, scanning is read-only and
// safe for concurrent use.
var (
	gitleaksOnce     sync.Once
	gitleaksDetector *detect.Detector
	gitleaksErr      error
)

// Warm builds the secret rules now rather than on the first write, which
// would otherwise wait for them.
func Warm() error {
	_, err := gitleaks()
	return err
}

// gitleaks returns the shared detector, or an error when the embedded
// default configuration does not load (a broken build, not a user error).
func gitleaks() (*detect.Detector, error) {
	gitleaksOnce.Do(func() {
		// gitleaks logs through its own global zerolog logger to stderr;
		// the gate reports through its return values only.
		logging.Logger = logging.Logger.Level(zerolog.Disabled)
		// A private viper instance: NewDetectorDefaultConfig would load the
		// rules into viper's global instance, which cmd uses for selmem's
		// own configuration.
		v := viper.New()
		v.SetConfigType("toml")
		if err := v.ReadConfig(strings.NewReader(config.DefaultConfig)); err != nil {
			gitleaksErr = err
			return
		}
		var vc config.ViperConfig
		if err := v.Unmarshal(&vc); err != nil {
			gitleaksErr = err
			return
		}
		cfg, err := vc.Translate()
		if err != nil {
			gitleaksErr = err
			return
		}
		// The generic rule (a keyword such as key or token, an operator and
		// a value) is what the gate's own assignment detector does, with
		// selmem's field-name and value tests; its regex is also the most
		// expensive of the set.
		delete(cfg.Rules, "generic-api-key")
		d := detect.NewDetector(cfg)
		d.MaxDecodeDepth = 0 // the gate decodes itself (normalize.go), keeping line numbers
		d.IgnoreGitleaksAllow = true
		gitleaksDetector = d
	})
	return gitleaksDetector, gitleaksErr
}

// gitleaksFindings scans text with the default gitleaks rules and returns
// findings as the gate's, with 1-based lines of text and, where the secret
// is found verbatim on its line, its span.
//
// A gitleaks rule's regex runs over the whole fragment it is given once
// its keyword occurs anywhere in it; so the lines that may hold a token
// (see mayHoldToken) are scanned one at a time, which keeps the cost
// proportional to those lines. Multi-line rules lose their context this way; the gate's own
// detectors cover private keys and secrets split over lines.
func gitleaksFindings(text string) []secretFinding {
	d, err := gitleaks()
	if err != nil {
		// Fail closed: a gate that cannot load its rules refuses writes.
		return []secretFinding{{kind: kindScannerBroken, line: 1}}
	}
	var (
		out    []secretFinding
		chunk  strings.Builder
		origin []int // origin[i]: line of text that line i of chunk is
		lines  []string
	)
	flush := func() {
		if chunk.Len() == 0 {
			return
		}
		for _, f := range d.DetectString(chunk.String()) {
			if isDocPlaceholder(f.Secret) || isDocPlaceholder(f.Match) {
				continue
			}
			if f.StartLine < 0 || f.StartLine >= len(origin) {
				continue
			}
			n := origin[f.StartLine]
			sf := secretFinding{kind: gitleaksKind(f.RuleID), line: n}
			if i := strings.Index(lines[n-1], f.Secret); i >= 0 && f.Secret != "" {
				sf.start, sf.end = i, i+len(f.Secret)
			}
			out = append(out, sf)
		}
		chunk.Reset()
		origin = origin[:0]
	}
	lines = strings.Split(text, "\n")
	for i, line := range lines {
		if !mayHoldToken(line) {
			continue
		}
		chunk.WriteString(line)
		chunk.WriteByte('\n')
		origin = append(origin, i+1)
		if chunk.Len() >= gitleaksChunk {
			flush()
		}
	}
	flush()
	// gitleaks keeps its rules in a map, so findings come in random order:
	// sort them for a stable message.
	sort.SliceStable(out, func(i, j int) bool {
		a, b := out[i], out[j]
		if a.line != b.line {
			return a.line < b.line
		}
		return a.kind.id < b.kind.id
	})
	return out
}

// gitleaksChunk is the size of the fragments handed to gitleaks: large
// enough to spread its per-call cost (a pass over every rule), small enough
// that a rule triggered by one line's keyword runs over few others.
const gitleaksChunk = 2 << 10

var gitleaksKinds sync.Map // rule id -> *secretKind

// gitleaksKind returns the secret kind for a gitleaks rule id, e.g.
// "github-pat" -> "a GitHub token (gitleaks rule github-pat)".
func gitleaksKind(id string) *secretKind {
	if k, ok := gitleaksKinds.Load(id); ok {
		return k.(*secretKind)
	}
	vendor, _, _ := strings.Cut(id, "-")
	name, ok := vendorNames[vendor]
	if !ok {
		name = strings.ToUpper(vendor[:1]) + vendor[1:]
	}
	what := "a " + name + " credential"
	if strings.IndexByte("AEIOU", name[0]) >= 0 {
		what = "an " + name + " credential"
	}
	switch id {
	case "private-key":
		what = "a private key block"
	case "jwt", "jwt-base64":
		what = "a JSON Web Token"
	case "curl-auth-user", "curl-auth-header":
		what = "a credential in a curl command"
	}
	env := strings.ToUpper(strings.ReplaceAll(vendor, ".", "_")) + "_TOKEN"
	if vendor == "curl" || vendor == "jwt" {
		env = "API_TOKEN"
	}
	k := &secretKind{id: id, what: what + " (gitleaks rule " + id + ")", env: env}
	actual, _ := gitleaksKinds.LoadOrStore(id, k)
	return actual.(*secretKind)
}

// vendorNames spells the vendors of gitleaks rule ids as they write
// themselves.
var vendorNames = map[string]string{
	"github": "GitHub", "gitlab": "GitLab", "openai": "OpenAI", "aws": "AWS", "gcp": "Google Cloud",
	"npm": "npm", "sendgrid": "SendGrid", "pypi": "PyPI", "digitalocean": "DigitalOcean",
	"huggingface": "Hugging Face", "hashicorp": "HashiCorp", "vault": "Vault", "jfrog": "JFrog",
	"newrelic": "New Relic", "new": "New Relic", "1password": "1Password", "flyio": "Fly.io",
	"azure": "Azure", "planetscale": "PlanetScale", "launchdarkly": "LaunchDarkly",
}

// mayHoldToken reports whether line has a run of token characters that
// could be a credential: at least 20 long, or at least 8 long with a digit
// or an upper-case letter after its first character. Lines of plain words
// are skipped before the gitleaks regexes run.
func mayHoldToken(line string) bool {
	run, mixed := 0, false
	for i := 0; i <= len(line); i++ {
		if i < len(line) && isTokenByte(line[i]) {
			c := line[i]
			if run > 0 && ('0' <= c && c <= '9' || 'A' <= c && c <= 'Z') {
				mixed = true
			}
			run++
			if run >= 20 || run >= 8 && mixed {
				return true
			}
			continue
		}
		run, mixed = 0, false
	}
	return false
}
