package gate

import (
	"encoding/base64"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"
)

// fake returns n characters of an obviously synthetic token body: mixed
// case and digits so it has the shape of a real one.
func fake(n int) string {
	const filler = "FakeSynthetic0Token1NotReal2Test3"
	return strings.Repeat(filler, n/len(filler)+1)[:n]
}

// fakeSecrets are assembled here rather than stored in testdata, so that
// no file in the repository holds a string shaped like a live credential
// (GitHub push protection scans files). Files under testdata/secrets/positive
// name them with @@MARKERS@@.
var fakeSecrets = map[string]string{
	"@@AWS_KEY_ID@@":         "AKIA" + "EXAMPLEFAKEKEY01",
	"@@AWS_SESSION_KEY_ID@@": "ASIA" + "EXAMPLEFAKEKEY02",
	"@@AWS_SECRET@@":         "FAKEfake/SYNTHETIC+" + fake(21),
	"@@GITHUB_PAT@@":         "ghp_" + fake(36),
	"@@GITHUB_OAUTH@@":       "gho_" + fake(36),
	"@@GITHUB_FINEGRAINED@@": "github_pat_" + fake(22) + "_" + fake(59),
	"@@GITLAB@@":             "glpat-" + fake(20),
	"@@SLACK_BOT@@":          "xoxb-" + "123456789012-1234567890123-" + fake(24),
	"@@SLACK_APP@@":          "xapp-" + "1-A1234567890-1234567890123-" + fake(32),
	"@@SLACK_WEBHOOK@@":      "https://hooks.slack" + ".com/services/T12345678/B12345678/" + fake(24),
	"@@OPENAI@@":             "sk-" + fake(48),
	"@@OPENAI_PROJ@@":        "sk-proj-" + fake(100),
	"@@ANTHROPIC@@":          "sk-ant-" + "api03-" + fake(93) + "AA",
	"@@GOOGLE@@":             "AIza" + fake(35),
	"@@STRIPE@@":             "sk_live" + "_" + fake(24),
	"@@STRIPE_RK@@":          "rk_live" + "_" + fake(24),
	"@@JWT@@":                fakeJWT(),
	"@@PEM_RSA@@":            "-----BEGIN RSA " + "PRIVATE KEY-----",
	"@@PEM_OPENSSH@@":        "-----BEGIN OPENSSH " + "PRIVATE KEY-----",
	"@@PEM_PGP@@":            "-----BEGIN PGP " + "PRIVATE KEY BLOCK-----",
}

func fakeJWT() string {
	enc := base64.RawURLEncoding.EncodeToString
	return enc([]byte(`{"alg":"HS256","typ":"JWT"}`)) + "." + enc([]byte(`{"sub":"fake-user","name":"Example Only"}`)) + "." + fake(43)
}

// expandFakes replaces the @@MARKERS@@ in s and returns the fakes used.
func expandFakes(t *testing.T, s string) (string, []string) {
	t.Helper()
	var used []string
	for m, v := range fakeSecrets {
		if strings.Contains(s, m) {
			s = strings.ReplaceAll(s, m, v)
			used = append(used, v)
		}
	}
	if strings.Contains(s, "@@") {
		t.Fatalf("unknown @@MARKER@@ in %q", s)
	}
	return s, used
}

// secretWants gives, for each file under testdata/secrets/positive, the
// kind of secret and the line it is on.
var secretWants = map[string]struct {
	kind string
	line int
}{
	"aws-access-key-id.txt":      {"aws-access-key-id", 3},
	"aws-session-key-id.yaml":    {"aws-access-key-id", 3},
	"aws-secret-access-key.yaml": {"aws-secret-access-key", 2},
	"aws-secret-env.txt":         {"aws-secret-access-key", 3},
	"github-pat.md":              {"github-pat", 3},
	"github-oauth.json":          {"github-oauth", 4},
	"github-fine-grained.yaml":   {"github-fine-grained-pat", 4},
	"gitlab-token.yaml":          {"gitlab-pat", 3},
	"slack-bot-token.yaml":       {"slack-bot-token", 3},
	"slack-app-token.txt":        {"slack-app-token", 2},
	"slack-webhook.md":           {"slack-webhook-url", 3},
	"openai-key.txt":             {"openai-api-key", 2},
	"openai-project-key.json":    {"openai-api-key", 4},
	"anthropic-key.yaml":         {"anthropic-api-key", 3},
	"google-api-key.md":          {"gcp-api-key", 1},
	"stripe-live-key.yaml":       {"stripe-access-token", 3},
	"stripe-restricted-key.txt":  {"stripe-access-token", 1},
	"private-key-rsa.txt":        {"private-key", 2},
	"private-key-openssh.md":     {"private-key", 6},
	"private-key-pgp.txt":        {"private-key", 3},
	"jwt.yaml":                   {"jwt", 3},
	"authorization-header.md":    {"authorization-header", 3},
	"postgres-url.yaml":          {"url-password", 2},
	"mongodb-url.txt":            {"url-password", 1},
	"redis-url-no-user.md":       {"url-password", 1},
	"password-yaml.yaml":         {"assignment", 4},
	"passwd-colon.txt":           {"assignment", 2},
	"api-key-export.txt":         {"assignment", 1},
	"apikey-json.json":           {"assignment", 1},
	"client-secret.yaml":         {"assignment", 3},
	"token-env.txt":              {"assignment", 2},
	"secret-yaml.yaml":           {"assignment", 2},
	"access-key.yaml":            {"assignment", 3},
	"db-password-json.json":      {"assignment", 3},
	"cli-flag.md":                {"assignment", 3},
	"url-token-query.md":         {"assignment", 1},
	"password-tight-prose.md":    {"assignment", 4},
	"libpq-keywords.txt":         {"assignment", 3},
	"password-prose.md":          {"assignment", 4},
	"api-key-prose-value.md":     {"assignment", 3},
	"registry-login.md":          {"cli-password", 4},
	"sshpass.txt":                {"cli-password", 2},
}

func readCorpus(t *testing.T, dir string) map[string]string {
	t.Helper()
	entries, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	files := map[string]string{}
	for _, e := range entries {
		b, err := os.ReadFile(filepath.Join(dir, e.Name()))
		if err != nil {
			t.Fatal(err)
		}
		files[e.Name()] = string(b)
	}
	return files
}

func sortedKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}

func TestContent_SecretsPositive(t *testing.T) {
	files := readCorpus(t, filepath.Join("testdata", "secrets", "positive"))
	if got, min := len(files), 25; got < min {
		t.Errorf("positive corpus has %d files, want >= %d", got, min)
	}
	for name := range secretWants {
		if _, ok := files[name]; !ok {
			t.Errorf("secretWants lists %s, which is not in testdata/secrets/positive", name)
		}
	}
	var golden strings.Builder
	for _, name := range sortedKeys(files) {
		t.Run(name, func(t *testing.T) {
			want, ok := secretWants[name]
			if !ok {
				t.Fatalf("add %s to secretWants", name)
			}
			content, fakes := expandFakes(t, files[name])
			f := findSecret(content)
			if f == nil {
				t.Fatalf("findSecret found nothing, want %s on line %d", want.kind, want.line)
			}
			if got := f.kind.id; got != want.kind {
				t.Errorf("kind = %q, want %q", got, want.kind)
			}
			if got := f.line; got != want.line {
				t.Errorf("line = %d, want %d", got, want.line)
			}
			secret := strings.Split(content, "\n")[f.line-1][f.start:f.end]
			if len(secret) < 6 {
				t.Errorf("secret span %q is implausibly short", secret)
			}

			err := Content("tools/"+name, []byte(content), DefaultLimits())
			var rej *Rejection
			if !errors.As(err, &rej) {
				t.Fatalf("Content = %v, want a *Rejection", err)
			}
			if got, want := rej.Rule, RuleSecret; got != want {
				t.Errorf("Rule = %q, want %q", got, want)
			}
			if got, want := rej.Line, want.line; got != want {
				t.Errorf("Line = %d, want %d", got, want)
			}
			msg := rej.Error()
			for _, s := range append(fakes, secret) {
				if strings.Contains(msg, s) {
					t.Errorf("message %q contains the secret %q", msg, s)
				}
			}
			if !strings.Contains(msg, "Nothing was written.") {
				t.Errorf("message %q does not say nothing was written", msg)
			}
			fmt.Fprintf(&golden, "%s\t%s\n", name, msg)
		})
	}
	checkGolden(t, "secrets", golden.String())
}

func TestContent_SecretsNegative(t *testing.T) {
	files := readCorpus(t, filepath.Join("testdata", "secrets", "negative"))
	if got, min := len(files), 25; got < min {
		t.Errorf("negative corpus has %d files, want >= %d", got, min)
	}
	for _, name := range sortedKeys(files) {
		t.Run(name, func(t *testing.T) {
			dir := "tools/"
			if strings.HasSuffix(name, ".js") {
				dir = "artifacts/app/"
			}
			if err := Content(dir+name, []byte(files[name]), DefaultLimits()); err != nil {
				t.Errorf("Content = %v, want nil", err)
			}
		})
	}
}

func TestIsCredentialField(t *testing.T) {
	tests := []struct {
		key  string
		want bool
	}{
		{"password", true}, {"passwd", true}, {"PGPASSWORD", true}, {"db_password", true},
		{"DB_PASS", true}, {"pwd", true}, {"client_secret", true}, {"secret", true},
		{"api_key", true}, {"apiKey", true}, {"x-api-key", true}, {"apikey", true},
		{"access_key", true}, {"aws_secret_access_key", true}, {"private_key", true},
		{"GITHUB_TOKEN", true}, {"accessToken", true}, {"refresh_token", true}, {"credentials", true},
		{"password_policy", false}, {"secret_ref", false}, {"token_env", false},
		{"max_tokens", false}, {"tokenizer", false}, {"api_key_file", false}, {"key", false},
		{"monkey", false}, {"sort_key", false}, {"primary_key", false}, {"password_hash", false},
		{"client_id", false}, {"access_key_id", false}, {"progressToken", false},
		{"next_page_token", false}, {"eos_token", false}, {"session_token", true},
	}
	for _, tt := range tests {
		if got := isCredentialField(tt.key); got != tt.want {
			t.Errorf("isCredentialField(%q) = %v, want %v", tt.key, got, tt.want)
		}
	}
}

func TestEnvNameFor(t *testing.T) {
	for in, want := range map[string]string{
		"db_password": "DB_PASSWORD", "apiKey": "API_KEY", "x-api-key": "X_API_KEY",
		"GITHUB_TOKEN": "GITHUB_TOKEN", "": "SECRET_NAME",
	} {
		if got := envNameFor(in); got != want {
			t.Errorf("envNameFor(%q) = %q, want %q", in, got, want)
		}
	}
}

// TestFindSecret_Deterministic checks that a line several rules match is
// always reported as the same kind (gitleaks keeps its rules in a map).
func TestFindSecret_Deterministic(t *testing.T) {
	line := "curl -H 'Authorization: token ghp_" + fake(36) + "' -u bot:" + fake(16) + " https://api.github.com\nsendgrid_api_key = SG." + fake(22) + "." + fake(43) + "\n"
	first := findSecret(line)
	if first == nil {
		t.Fatal("findSecret found nothing")
	}
	for range 20 {
		if got := findSecret(line); got == nil || got.kind != first.kind || got.line != first.line {
			t.Fatalf("findSecret = %+v, then %+v", first, got)
		}
	}
}

func TestHoldsSecret(t *testing.T) {
	for in, want := range map[string]bool{
		"postgres://app:" + fake(16) + "@db.internal/prod": true,
		"password=" + fake(12):                             true,
		"token ghp_" + fake(36):                            true,
		"shipped on Tuesday":                               false,
		"password reset requested":                         false,
		"":                                                 false,
	} {
		if got := HoldsSecret(in); got != want {
			t.Errorf("HoldsSecret(%q) = %v, want %v", in, got, want)
		}
	}
}

// fakeLower returns n lower-case letters and digits, shaped like a hex or
// base36 token and plainly synthetic.
func fakeLower(n int) string {
	const filler = "0fake1synthetic2not3real4test5"
	return strings.Repeat(filler, n/len(filler)+1)[:n]
}

func TestIsRandomLower(t *testing.T) {
	for in, want := range map[string]bool{
		fakeLower(16):               true,
		fakeLower(40):               true,
		fakeLower(15):               false, // short
		"0x" + fakeLower(40):        false, // an address or constant
		"abcdefghijklmnopqrst":      false, // no digit
		"12345678901234567890":      false, // no letter
		"Fake1Synthetic2NotReal34":  false, // upper case: hasClasses' case
		"fake-synthetic-2-not-real": false,
	} {
		if got := isRandomLower(in); got != want {
			t.Errorf("isRandomLower(%q) = %v, want %v", in, got, want)
		}
	}
}

func TestIsWordPassword(t *testing.T) {
	tests := []struct {
		key, v string
		want   bool
	}{
		{"password", "hunterstaging", true},
		{"db_password", "correcthorsebattery", true},
		{"DB_PASS", "sunshinebeach", true},
		{"passphrase", "Sunshinebeach", true},
		{"wachtwoord", "zonnebloem", true},
		{"password", "hunter", false},          // short
		{"password", "changeme", false},        // a documented default
		{"password", "required", false},        // a placeholder word
		{"password", "encrypted", false},       // describes it
		{"password", "nullable", false},        // a column's type
		{"password", "keychain", false},        // names where it is kept
		{"password", "case-sensitive", false},  // words that describe it
		{"password", "sunshine-tractor", true}, // words joined
		{"db_password", "purple_monkey_dish", true},
		{"password", "correct.horse.battery", true},
		{"password", "Granite-Lantern", true},
		{"password", "sunflowerpowered", true}, // words run together, in -ed
		{"password", "tractorfriendly", true},
		{"password", "butterfly", true}, // -fly is no adverb
		{"password", "happiness", true},
		{"password", "vault-managed", false},
		{"password", "read-only", false},
		{"password", "single-sign-on", false},
		{"password", "plain-text", false},
		{"password", "autogenerated", false}, // a modifier and a description
		{"password", "nonexpiring", false},
		{"password", "vaultmanaged", false},
		{"password", "ask-security-team", false},
		{"password", "a-b-c-d-e-f-g", false},
		{"password", "sunshineBeach", false},    // mixed case: looksLikeSecretValue's
		{"token", "correcthorsebattery", false}, // a token is never a word
		{"api_key", "correcthorsebattery", false},
		{"pass", "overnight", false}, // "first pass: overnight"
		{"password_policy", "strictest", false},
	}
	for _, tt := range tests {
		if got := isWordPassword(tt.key, tt.v); got != tt.want {
			t.Errorf("isWordPassword(%q, %q) = %v, want %v", tt.key, tt.v, got, tt.want)
		}
	}
}

func TestIsDescriptiveWord(t *testing.T) {
	for in, want := range map[string]bool{
		"encrypted":         true,
		"interactive":       true,
		"monthly":           true,
		"environment":       true,
		"keychain":          true,
		"unencrypted":       true,
		"nonexpiring":       true,
		"externallymanaged": true,
		"butterfly":         false,
		"serendipity":       false,
		"sunflowerpowered":  false, // longer than one word
		"unicornpowered":    false, // un and a word that is no description
		"tractor":           false,
	} {
		if got := isDescriptiveWord(in); got != want {
			t.Errorf("isDescriptiveWord(%q) = %v, want %v", in, got, want)
		}
	}
}

func TestMatchTightPair(t *testing.T) {
	for in, want := range map[string]bool{
		"Log in with admin/Fake2Synth!":                 true,
		"- staging: admin/fake2synth#":                  true,
		"The account is etl_reader/fake2synth$ now":     true,
		"Use `jdoe/fake2@123` on the portal":            true,
		"(root/Fake2Synth%)":                            true,
		"root/Config2Dir is the folder":                 false, // no symbol: a path
		"src/admin/Users2Page!.tsx":                     false, // inside a path
		"see [setup](docs/Setup!2)":                     false, // a link target
		"admin/Config2024!.yaml":                        false, // a file
		"uses: acme/deploy-Action@v3":                   false, // a reference
		"lodash/fp@4.17.21":                             false,
		"admin/users?tab=Roles2":                        false, // a query
		"hotfix/INC-2042!":                              false, // a ticket
		"https://x.example/admin/Fake2Synth!":           false, // a URL
		"admin/${ADMIN_PASSWORD}":                       false,
		"read/write!":                                   false,
		"data/Prod2!x/more":                             false,
		"stdout '^m rsc.io/quote@v1.5.2$'":              false, // a pattern
		"must end in gopkg.in/pkg.v1$":                  false, // a module path
		"- **Build/Lint**: make lint":                   false, // emphasis
		"&#34;html/template&#34;":                       false, // character references
		"Dual MIT/GPL&quot;":                            false,
		"ou/o-${OrganizationId}":                        false, // a variable
		"cp mycmd/mycmd$GOEXE .":                        false,
		"rm -rf deps/icu4c*":                            false, // a glob
		"is primary/instance@REALM":                     false, // a realm
		`"role/?[a-zA-Z_0-9+=,.@\\-_/]+$"`:              false, // a pattern
		"index.cgi?back=archive98/now0327.txt&line=179": false,
		"go get example.net/m@v0.1.0\r":                 false,
	} {
		_, got := matchTightPair(in, strings.ToLower(in))
		if got != want {
			t.Errorf("matchTightPair(%q) = %v, want %v", in, got, want)
		}
	}
}

func TestMatchComparison(t *testing.T) {
	v := "Fake2Synth9x"
	for in, want := range map[string]bool{
		`if password == "` + v + `":`:                                 true,
		`if (pwd === '` + v + `') {`:                                  true,
		`if ("` + v + `" == req.body.password) {`:                     true,
		`if token != "` + v + `" {`:                                   true,
		`if (password.equals("` + v + `")) {`:                         true,
		`if (PASSWORD.equalsIgnoreCase("` + v + `"))`:                 true,
		`if (strcmp(password, "` + v + `") == 0)`:                     true,
		`subtle.ConstantTimeCompare([]byte(pw), []byte("` + v + `"))`: true,
		`return password == "correcthorsebattery"`:                    true,
		`if password == expected {`:                                   false,
		`if token == "" {`:                                            false,
		`if password == "<redacted>" {`:                               false,
		`if status == "` + v + `" {`:                                  false,
		`if (strcmp(password, confirm) != 0)`:                         false,
		`if form.password.value === "` + v + `"`:                      false, // value is no credential field
		`if password == os.Getenv("DB_PASSWORD") {`:                   false,
	} {
		_, got := matchComparison(in, strings.ToLower(in))
		if got != want {
			t.Errorf("matchComparison(%q) = %v, want %v", in, got, want)
		}
	}
}

func TestIsPairPassword(t *testing.T) {
	for in, want := range map[string]bool{
		"Fake2Synth":    true,
		"fake2synth":    true,
		"Fake!Synth":    true,
		"Fake2":         false, // short
		"db-prod-2":     false, // a lower-case name
		"16-alpine":     false,
		"v1.2.3-rc1":    false,
		"15:22Z":        false, // one letter: a time
		"Settings":      false, // a word
		"data/Prod2":    false, // a path
		"${DB_PASS}":    false, // a reference
		"changeme123":   false, // a placeholder
		"DB_PASSWORD_2": false, // a variable name
	} {
		if got := isPairPassword(in); got != want {
			t.Errorf("isPairPassword(%q) = %v, want %v", in, got, want)
		}
	}
}

func TestMatchCredentialPair(t *testing.T) {
	for in, want := range map[string]bool{
		"staging login: admin / Fake2Synth!":        true,
		"creds are deploy/Fake2Synth":               true,
		"log in with ops:fake2synth":                true,
		"I logged in as admin with Fake2Synth":      true,
		"logged in as admin using password fake2x9": true,
		"the rig runs as sa:Fake2Synth":             true,
		"then root / Fake2Synth on the box":         true,
		"login page at docs/Login2Page":             false, // a path after login
		"account view in src/Account2View":          false,
		"root/Config2Dir is the folder":             false, // tight: a path
		"The test rig runs as sa / Fake2Synth":      true,
		"SA / fake2synth":                           true,
		"Console: `admin` / `Fake2Synth`":           true,
		"- **sa** / **Fake2Synth!**":                true,
		`admin / "Fake2Synth" until the rotation`:   true,
		"Regions: NA / SA / EMEA-2 / APAC":          false, // a list
		"Roles: viewer / admin / Ops-2024 / owner":  false,
		"usage / Fake2Synth":                        false, // not a word of its own
		"sa / dbo schemas differ":                   false,
		"admin / ${ADMIN_PASSWORD}":                 false,
		"postgres:16-alpine":                        false,
		"Login at 09:15:22Z failed":                 false,
		"credentials at secret/data/prod":           false,
		"log in as admin with SSO":                  false,
	} {
		_, got := matchCredentialPair(in, strings.ToLower(in))
		if got != want {
			t.Errorf("matchCredentialPair(%q) = %v, want %v", in, got, want)
		}
	}
}

// TestMatchAssignment_Forms covers the ways prose and markup write a field
// and its value besides field: value.
func TestMatchAssignment_Forms(t *testing.T) {
	v := "Fake2Synth9x"
	for in, want := range map[string]bool{
		"- **Password:** " + v:                         true,
		"**Password**: " + v:                           true,
		"password (staging): " + v:                     true,
		"Password for staging: " + v:                   true,
		"the password for the staging box is " + v:     true,
		"db password -> " + v:                          true,
		"password → " + v:                              true,
		"password — " + v:                              true,
		"password - " + v:                              true,
		"<!-- password: " + v + " -->":                 true,
		"/* token: " + v + " */":                       true,
		"Passwort: " + v:                               true,
		"token " + fakeLower(20):                       true,
		"the api key " + fakeLower(20) + " is live":    true,
		"API key `" + fakeLower(24) + "`":              true,
		"password ▸ " + v:                              true,
		"token ⇒ " + v:                                 true,
		"password >> " + v:                             true,
		"password = > " + v:                            true,
		"password: -> " + v:                            true,
		"DB_PASSWORD ⟶ " + v:                           true,
		"client_secret ~> " + v:                        true,
		"password --> " + v:                            true,
		"${DB_PASSWORD:-" + v + "}":                    true,
		"API key: " + v:                                true,
		"Secret key ▸ " + v:                            true,
		"Encryption key: AES-256-GCM":                  false, // prose's compound: a value of both cases
		"password → stored in the vault":               false,
		"token ⇒ ${API_TOKEN}":                         false,
		"password: <" + v + ">":                        false, // a placeholder
		"password == " + v:                             false, // a comparison
		"password-" + v:                                false, // a hyphenated word
		"page token " + fakeLower(20):                  false, // protocol state
		"commit " + fakeLower(40):                      false,
		"token 0x" + fakeLower(40):                     false,
		"the credential of the OS user: PostgreSQL":    false, // qualified, no digit
		"Password for the admin account: rotate it":    false,
		"password (optional): the bearer token to use": false,
		"token - see the vault":                        false,
	} {
		_, got := matchAssignment(in, strings.ToLower(in))
		if got != want {
			t.Errorf("matchAssignment(%q) = %v, want %v", in, got, want)
		}
	}
}
