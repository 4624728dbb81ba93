package gate

import (
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
func gitleaksFindings(text string) []secretFinding {
	d, err := gitleaks()
	if err != nil {
		// Fail closed: a gate that cannot load its rules refuses writes.
		return []secretFinding{{kind: kindScannerBroken, line: 1}}
	}
	var (
		out   []secretFinding
		lines []string
	)
	for _, f := range d.DetectString(text) {
		if isDocPlaceholder(f.Secret) || isDocPlaceholder(f.Match) {
			continue
		}
		if f.RuleID == "generic-api-key" && !genericLooksSecret(f.Secret) {
			continue
		}
		sf := secretFinding{kind: gitleaksKind(f.RuleID), line: f.StartLine + 1}
		if lines == nil {
			lines = strings.Split(text, "\n")
		}
		if sf.line <= len(lines) && f.Secret != "" {
			if i := strings.Index(lines[sf.line-1], f.Secret); i >= 0 {
				sf.start, sf.end = i, i+len(f.Secret)
			}
		}
		out = append(out, sf)
	}
	return out
}

// genericLooksSecret filters gitleaks' generic-api-key rule, whose keyword
// list (key, token, auth, ...) also matches identifiers and references:
// the value must pass the gate's own literal-credential test.
func genericLooksSecret(v string) bool {
	return looksLikeSecretValue(v) && !isPlaceholder(v)
}

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
	case "generic-api-key":
		what = "an API key or token"
	case "curl-auth-user", "curl-auth-header":
		what = "a credential in a curl command"
	}
	env := strings.ToUpper(strings.ReplaceAll(vendor, ".", "_")) + "_TOKEN"
	if vendor == "generic" || vendor == "curl" || vendor == "jwt" {
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
