package gate

import (
	"encoding/base64"
	"encoding/json"
	"fmt"
	"regexp"
	"slices"
	"strings"
	"unicode"
	"unicode/utf8"
)

// A secretKind is one kind of credential the gate recognises.
type secretKind struct {
	id   string // stable identifier, used by tests
	what string // "an AWS access key id", completes "line N holds what looks like ..."
	env  string // the reference to suggest, e.g. "AWS_ACCESS_KEY_ID"
}

var (
	kindAWSKeyID      = &secretKind{"aws-access-key-id", "an AWS access key id", "AWS_ACCESS_KEY_ID"}
	kindAWSSecret     = &secretKind{"aws-secret-access-key", "an AWS secret access key", "AWS_SECRET_ACCESS_KEY"}
	kindAnthropic     = &secretKind{"anthropic-api-key", "an Anthropic API key", "ANTHROPIC_API_KEY"}
	kindOpenAI        = &secretKind{"openai-api-key", "an OpenAI API key", "OPENAI_API_KEY"}
	kindPrivateKey    = &secretKind{"private-key", "a private key block", "PRIVATE_KEY_FILE"}
	kindJWT           = &secretKind{"jwt", "a JSON Web Token", "API_TOKEN"}
	kindURLPassword   = &secretKind{"url-password", "a password inside a connection string or URL", "DB_PASSWORD"}
	kindAuthHeader    = &secretKind{"authorization-header", "a credential in an Authorization header", "API_TOKEN"}
	kindAssignment    = &secretKind{"assignment", "a literal secret assigned to a credential field", ""}
	kindPEMBody       = &secretKind{"private-key-body", "the base64 body of a key without its header", "PRIVATE_KEY_FILE"}
	kindPassphrase    = &secretKind{"passphrase", "a passphrase of several words", "KEY_PASSPHRASE"}
	kindPuTTY         = &secretKind{"putty-private-key", "a PuTTY private key file", "PRIVATE_KEY_FILE"}
	kindTelegram      = &secretKind{"telegram-bot-token", "a Telegram bot token", "TELEGRAM_BOT_TOKEN"}
	kindDiscord       = &secretKind{"discord-token", "a Discord bot token or webhook URL", "DISCORD_TOKEN"}
	kindHuggingFace   = &secretKind{"huggingface-token", "a Hugging Face access token", "HF_TOKEN"}
	kindMailchimp     = &secretKind{"mailchimp-api-key", "a Mailchimp API key", "MAILCHIMP_API_KEY"}
	kindMailgun       = &secretKind{"mailgun-api-key", "a Mailgun API key", "MAILGUN_API_KEY"}
	kindDockerAuth    = &secretKind{"docker-auth", "registry credentials in a Docker auths entry", "REGISTRY_PASSWORD"}
	kindAzureSAS      = &secretKind{"azure-sas", "an Azure shared access signature (the sig parameter is the credential)", "AZURE_SAS_TOKEN"}
	kindCLIPassword   = &secretKind{"cli-password", "a password on a command line (curl -u, mysql -p)", "CLI_PASSWORD"}
	kindNetrc         = &secretKind{"netrc-password", "a password in a .netrc entry", "NETRC_PASSWORD"}
	kindPgpass        = &secretKind{"pgpass-password", "a password in a .pgpass line", "PGPASSWORD"}
	kindCredPair      = &secretKind{"credential-pair", "a user name and password pair (user / password)", "LOGIN_PASSWORD"}
	kindComparison    = &secretKind{"comparison", "a literal secret a credential field is compared with in code", ""}
	kindScannerBroken = &secretKind{"scanner-unavailable", "content the secret scanner could not check (its rules failed to load)", "API_TOKEN"}
)

// shortWhat is what, for use where no field name is shown.
func (k *secretKind) shortWhat() string {
	if k == kindAssignment {
		return "a literal secret assigned to a credential field"
	}
	return k.what
}

// A secretFinding locates a credential: the line and the byte span of the
// secret within that line (used by tests to prove messages never hold it).
type secretFinding struct {
	kind       *secretKind
	line       int
	start, end int    // span of the secret in the line
	key        string // for assignments, the field name (not secret)
}

// A secretDetector finds one kind of credential. Needles are lower-case
// literals of at least two bytes, one of which must occur in a line for
// match to run on it; a detector without needles runs on lines holding
// one of its anyBytes.
type secretDetector struct {
	needles  []string
	anyBytes string
	// match returns the finding in line (kind, span, key), or ok false;
	// lower is line with ASCII letters lower-cased.
	match func(line, lower string) (f secretFinding, ok bool)
}

// Token patterns. Go's regexp is RE2 (linear time); all patterns are
// anchored on a literal prefix that the needle prefilter requires.
var (
	reAWSKeyID    = regexp.MustCompile(`\b(?:AKIA|ASIA)[A-Z0-9]{16}\b`)
	reAnthropic   = regexp.MustCompile(`\bsk-ant-[A-Za-z0-9_-]{20,}`)
	reOpenAI      = regexp.MustCompile(`\bsk-(?:proj-|svcacct-|admin-)?([A-Za-z0-9_-]{20,})`)
	rePrivateKey  = regexp.MustCompile(`(?i)-----BEGIN [A-Z0-9 ]*PRIVATE KEY(?: BLOCK)?-----`)
	rePuTTY       = regexp.MustCompile(`(?i)\bPuTTY-User-Key-File-\d+:`)
	reTelegram    = regexp.MustCompile(`(?:^|[^0-9])(\d{8,10}:AA[A-Za-z0-9_-]{33})(?:[^A-Za-z0-9_-]|$)`)
	reHuggingFace = regexp.MustCompile(`\b(?:hf_[A-Za-z]{34}|api_org_[A-Za-z]{34})\b`)
	reMailchimp   = regexp.MustCompile(`\b[0-9a-f]{32}-us[0-9]{1,2}\b`)
	reMailgun     = regexp.MustCompile(`\bkey-[0-9a-f]{32}\b`)
	reDiscordBot  = regexp.MustCompile(`\b[MNO][A-Za-z0-9_-]{23,27}\.[A-Za-z0-9_-]{6}\.[A-Za-z0-9_-]{27,40}\b`)
	reDiscordHook = regexp.MustCompile(`discord(?:app)?\.com/api/webhooks/\d+/[A-Za-z0-9_-]{40,}`)
	reDockerAuth  = regexp.MustCompile(`"auth"\s*:\s*"([A-Za-z0-9+/=]{8,})"`)
	reAzureSig    = regexp.MustCompile(`[?&]sig=([A-Za-z0-9%+/=]{20,})`)
	reCurlUser    = regexp.MustCompile(`(?:^|[\s\x60])(?:-u|--user)(?:=|\s+)["']?([^\s:"'$]+):([^\s"'@\x60]+)`)
	reMySQLPass   = regexp.MustCompile(`\bmysql(?:dump|admin)?\b.*\s-p([^\s"'\x60]{4,})`)
	// -p is the password to sshpass and to the registry logins, a port or
	// a path to most other commands.
	reLoginPass = regexp.MustCompile(`(?i)\b(?:sshpass|(?:docker|podman|nerdctl|buildah|skopeo|oras|helm\s+registry)\s+login)\b.*?\s-p(?:=|\s+)?["']?([^\s"'\x60]{4,})`)
	// --password followed by its value after a blank; = is matchAssignment's.
	rePasswordFlag = regexp.MustCompile(`(?:^|\s)--password\s+["']?([^\s"'\x60]{4,})`)
	reXMLProperty  = regexp.MustCompile(`name="([A-Za-z0-9_.-]+)"\s+value="([^"]+)"`)
	reHCLVariable  = regexp.MustCompile(`\bvariable\s+"([A-Za-z0-9_.-]+)"\s*\{[^}]*\bdefault\s*=\s*"([^"]+)"`)
	// rePassphraseQuoted: a passphrase stated in prose, in quotes:
	// the vault password is "purple monkey dishwasher".
	rePassphraseQuoted = regexp.MustCompile(`(?i)\b([\w.-]*(?:passphrase|pass_phrase|password|passwd|mnemonic|seed_phrase|seedphrase))\s+(?:is|was)\s+["'“‘]([a-z]+(?:[ -][a-z]+){2,23})["'”’]`)
	rePassphrase       = regexp.MustCompile(`(?i)\b([\w.-]*(?:passphrase|pass_phrase|password|passwd|mnemonic|seed_phrase|seedphrase|seed))["'*]*\s*[:=]\s*["']?([a-z]+(?:[ -][a-z]+){2,23})["']?\s*$`)
	reJWT              = regexp.MustCompile(`\beyJ[A-Za-z0-9_-]{5,}\.eyJ[A-Za-z0-9_-]{5,}\.[A-Za-z0-9_-]*`)
	reURLPassword      = regexp.MustCompile(`\b[A-Za-z][A-Za-z0-9+.-]{0,30}://([^\s:/?#@'"<>]*):([^\s/?#@'"<>]+)@[A-Za-z0-9\[]`)
	reAuthHeader       = regexp.MustCompile(`(?i)\bauthorization["']?\s*[:=]\s*["']?(?:bearer|basic|token)\s+([A-Za-z0-9._~+/=-]+)`)
	reAWSSecretBody    = regexp.MustCompile(`^[A-Za-z0-9/+]{40}$`)
)

func simple(k *secretKind, re *regexp.Regexp, needles ...string) secretDetector {
	return secretDetector{needles: needles, match: func(line, _ string) (secretFinding, bool) {
		for _, m := range re.FindAllStringIndex(line, -1) {
			if !isDocPlaceholder(line[m[0]:m[1]]) {
				return secretFinding{kind: k, start: m[0], end: m[1]}, true
			}
		}
		return secretFinding{}, false
	}}
}

// detectors are listed by priority: when two find a secret on the same
// line, the earlier one names it. There are at most 64.
var detectors = []secretDetector{
	simple(kindPrivateKey, rePrivateKey, "private key"),
	simple(kindAWSKeyID, reAWSKeyID, "akia", "asia"),
	simple(kindPuTTY, rePuTTY, "putty-user-key-file"),
	simple(kindAnthropic, reAnthropic, "sk-ant-"),
	{needles: []string{"sk-"}, match: matchOpenAI},
	{needles: []string{":aa"}, match: matchTelegram},
	simple(kindDiscord, reDiscordHook, "discord"),
	simple(kindHuggingFace, reHuggingFace, "hf_", "api_org_"),
	simple(kindMailchimp, reMailchimp, "-us"),
	simple(kindMailgun, reMailgun, "key-"),
	{needles: []string{`"auth"`}, match: matchDockerAuth},
	{needles: []string{"sig="}, match: matchAzureSAS},
	{needles: []string{"-u", "--user", "mysql", "login", "sshpass", "--password"}, match: matchCLIPassword},
	{needles: []string{"value="}, match: matchXMLProperty},
	{needles: []string{"variable"}, match: matchHCLVariable},
	{needles: []string{"pass", "mnemonic", "seed"}, match: matchPassphrase},
	{needles: []string{"eyj"}, match: matchJWT},
	{needles: []string{"://"}, match: matchURLPassword},
	{needles: []string{"authorization"}, match: matchAuthHeader},
	{needles: assignmentNeedles, match: matchAssignment},
	{needles: credPairNeedles, match: matchCredentialPair},
	{anyBytes: "/", match: matchTightPair},
	{needles: comparisonNeedles, match: matchComparison},
}

// needleRef ties a needle to the detector it triggers.
type needleRef struct {
	needle   string
	detector int
}

// needleIndex finds every needle of every detector in one pass over a line:
// firstTwo marks the byte pairs needles start with, byPair lists the
// needles starting with each pair.
var needleIndex = func() (ix struct {
	pair   [1 << 16]uint8 // 1 + index into groups, 0 when no needle starts with the pair
	groups [][]needleRef
}) {
	for d, det := range detectors {
		for _, n := range det.needles {
			p := uint16(n[0])<<8 | uint16(n[1])
			if ix.pair[p] == 0 {
				ix.groups = append(ix.groups, nil)
				ix.pair[p] = uint8(len(ix.groups))
			}
			g := ix.pair[p] - 1
			ix.groups[g] = append(ix.groups[g], needleRef{n, d})
		}
	}
	return ix
}()

// byteDetectors are the detectors that run on lines holding one of their
// anyBytes.
var byteDetectors = func() []int {
	var ds []int
	for d, det := range detectors {
		if det.anyBytes != "" {
			ds = append(ds, d)
		}
	}
	return ds
}()

// findSecret returns the earliest line of text holding a credential, or
// nil. It reads the raw text and its normalised views (see
// [normalizedViews]) with the gate's own detectors and gitleaks' default
// rules; on one line the raw text and the gate's own detectors name the
// secret first. Only findings in the raw text carry a span.
func findSecret(text string) *secretFinding {
	best := scanView(text, nil)
	for _, v := range normalizedViews(text) {
		if f := scanView(v.text, v.lineOf); f != nil && (best == nil || f.line < best.line) {
			f.start, f.end = 0, 0
			best = f
		}
	}
	return best
}

// scanView returns the earliest finding in text; lineOf, when not nil,
// maps its lines to lines of the content.
func scanView(text string, lineOf func(int) int) *secretFinding {
	var best *secretFinding
	consider := func(f secretFinding) {
		if lineOf != nil {
			f.line = lineOf(f.line)
		}
		// On one line a vendor's rule names the secret better than the
		// generic assignment detector.
		if best == nil || f.line < best.line || f.line == best.line && best.kind == kindAssignment && f.kind != kindAssignment {
			best = &f
		}
	}
	if f := findSecretLines(text); f != nil {
		consider(*f)
	}
	for _, f := range findSecretBlocks(text) {
		consider(f)
	}
	for _, f := range gitleaksFindings(text) {
		consider(f)
	}
	return best
}

// findSecretLines returns the first line of text on which one of the
// line detectors finds a credential, or nil. Each line is scanned once for
// the needles of all detectors; the detectors it triggers then run in
// priority order.
func findSecretLines(text string) *secretFinding {
	ltext := strings.ToLower(text)
	if len(ltext) != len(text) {
		ltext = string(asciiLower([]byte(text)))
	}
	lineNo := 0
	for off := 0; off < len(ltext); {
		end := strings.IndexByte(ltext[off:], '\n')
		if end < 0 {
			end = len(ltext)
		} else {
			end += off
		}
		line, lline := text[off:end], ltext[off:end]
		off = end + 1
		lineNo++
		triggered := triggeredDetectors(lline)
		for d := 0; triggered != 0; d++ {
			if triggered&(1<<d) == 0 {
				continue
			}
			triggered &^= 1 << d
			if f, ok := detectors[d].match(line, lline); ok {
				found := f
				found.line = lineNo
				return &found
			}
		}
	}
	return nil
}

// triggeredDetectors returns the set of detectors, as a bit mask, whose
// needles occur in the lower-cased line.
func triggeredDetectors(lline string) uint64 {
	var mask uint64
	for _, d := range byteDetectors {
		if strings.ContainsAny(lline, detectors[d].anyBytes) {
			mask |= 1 << d
		}
	}
	for i := 0; i+1 < len(lline); i++ {
		g := needleIndex.pair[uint16(lline[i])<<8|uint16(lline[i+1])]
		if g == 0 {
			continue
		}
		for _, r := range needleIndex.groups[g-1] {
			if mask&(1<<r.detector) == 0 && strings.HasPrefix(lline[i:], r.needle) {
				mask |= 1 << r.detector
			}
		}
	}
	return mask
}

func matchOpenAI(line, _ string) (secretFinding, bool) {
	for _, m := range reOpenAI.FindAllStringSubmatchIndex(line, -1) {
		if strings.HasPrefix(line[m[0]:], "sk-ant-") {
			continue
		}
		body := line[m[2]:m[3]]
		if hasClasses(body, true, true, true) && !isDocPlaceholder(line[m[0]:m[1]]) {
			return secretFinding{kind: kindOpenAI, start: m[0], end: m[1]}, true
		}
	}
	return secretFinding{}, false
}

// hasClasses reports whether s holds a digit, an upper- and a lower-case
// ASCII letter, as far as each is asked for.
func hasClasses(s string, digit, upper, lower bool) bool {
	var d, u, l bool
	for _, c := range []byte(s) {
		switch {
		case '0' <= c && c <= '9':
			d = true
		case 'A' <= c && c <= 'Z':
			u = true
		case 'a' <= c && c <= 'z':
			l = true
		}
	}
	return (d || !digit) && (u || !upper) && (l || !lower)
}

func matchJWT(line, _ string) (secretFinding, bool) {
	for _, m := range reJWT.FindAllStringIndex(line, -1) {
		tok := line[m[0]:m[1]]
		head, _, _ := strings.Cut(tok, ".")
		raw, err := base64.RawURLEncoding.DecodeString(strings.TrimRight(head, "="))
		if err != nil {
			continue
		}
		var h map[string]any
		if json.Unmarshal(raw, &h) != nil {
			continue
		}
		if _, ok := h["alg"]; ok {
			return secretFinding{kind: kindJWT, start: m[0], end: m[1]}, true
		}
	}
	return secretFinding{}, false
}

func matchURLPassword(line, _ string) (secretFinding, bool) {
	if !strings.Contains(line, "@") {
		return secretFinding{}, false
	}
	for _, m := range reURLPassword.FindAllStringSubmatchIndex(line, -1) {
		pass := line[m[4]:m[5]]
		if isReference(pass) || isPlaceholder(pass) {
			continue
		}
		return secretFinding{kind: kindURLPassword, start: m[4], end: m[5]}, true
	}
	return secretFinding{}, false
}

func matchAuthHeader(line, _ string) (secretFinding, bool) {
	m := reAuthHeader.FindStringSubmatchIndex(line)
	if m == nil {
		return secretFinding{}, false
	}
	v := line[m[2]:m[3]]
	if len(v) < 12 || isReference(v) || isPlaceholder(v) {
		return secretFinding{}, false
	}
	return secretFinding{kind: kindAuthHeader, start: m[2], end: m[3]}, true
}

// Assignments.
//
// A field name is a credential field when its last component (split at _ . -
// and camelCase) ends in one of secretSuffixes, equals "pwd" or "pass", or is
// "key" after one of keyQualifiers: db_password, client_secret, apiKey,
// x-api-key, aws_secret_access_key, GITHUB_TOKEN. Names whose last component
// says they hold something else are not: password_policy, secret_ref,
// token_env, max_tokens, api_key_file.

var assignmentNeedles = []string{"pass", "pw", "secret", "token", "key", "credential", "kennwort", "wachtwoord", "senha", "contrasena"}

// passwordWords end the names of password fields; passwort and kennwort,
// wachtwoord, senha, contrasena and motdepasse are password in German,
// Dutch, Portuguese, Spanish and French.
var passwordWords = []string{"password", "passwd", "passphrase", "passwort", "kennwort", "wachtwoord", "senha", "contrasena", "motdepasse"}

// secretSuffixes end the names of credential fields: the passwordWords
// and the names of other credentials.
var secretSuffixes = append([]string{"secret", "token", "apikey", "accesskey", "secretkey", "privatekey", "credential"}, passwordWords...)

var keyQualifiers = map[string]bool{
	"api": true, "access": true, "secret": true, "private": true, "signing": true,
	"encryption": true, "master": true, "client": true, "auth": true, "app": true, "account": true,
}

func isKeyChar(c byte) bool {
	return 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9' || c == '_' || c == '-' || c == '.'
}

// isCredentialField reports whether the field name key names a credential.
func isCredentialField(key string) bool {
	last, rest := lastComponent(key)
	if last == "" {
		return false
	}
	if eqFold(last, "pwd") || eqFold(last, "pw") || eqFold(last, "pass") {
		return true
	}
	if eqFold(last, "key") {
		prev, _ := lastComponent(rest)
		return keyQualifiers[strings.ToLower(prev)]
	}
	if eqFold(last, "token") {
		prev, _ := lastComponent(rest)
		if nonSecretTokens[strings.ToLower(prev)] {
			return false
		}
	}
	for _, s := range secretSuffixes {
		if len(last) >= len(s) && eqFold(last[len(last)-len(s):], s) {
			return true
		}
	}
	return eqFold(last, "credentials")
}

// nonSecretTokens qualify tokens that are protocol state, not credentials:
// progressToken, next_page_token, sync_token, idempotency_token.
var nonSecretTokens = map[string]bool{
	"progress": true, "page": true, "next": true, "continuation": true, "sync": true,
	"cancel": true, "cancellation": true, "resume": true, "pagination": true,
	"idempotency": true, "cursor": true, "max": true, "min": true, "stop": true, "end": true,
	"start": true, "eos": true, "bos": true, "pad": true, "unk": true, "sep": true, "special": true,
}

func eqFold(a, b string) bool { return len(a) == len(b) && strings.EqualFold(a, b) }

// lastComponent returns the last component of a field name, split at _ . -
// and lower-to-upper camelCase boundaries, and what precedes it.
func lastComponent(key string) (last, rest string) {
	key = strings.TrimRight(key, "_.-")
	for i := len(key) - 1; i > 0; i-- {
		c, p := key[i], key[i-1]
		if p == '_' || p == '.' || p == '-' {
			return key[i:], key[:i-1]
		}
		if 'A' <= c && c <= 'Z' && 'a' <= p && p <= 'z' {
			return key[i:], key[:i]
		}
	}
	return key, ""
}

// splitKey splits a field name into lower-case components at _ . - and
// lower-to-upper camelCase boundaries.
func splitKey(key string) []string {
	var parts []string
	for key != "" {
		last, rest := lastComponent(key)
		if last == "" {
			break
		}
		parts = append([]string{strings.ToLower(last)}, parts...)
		key = rest
	}
	return parts
}

// matchAssignment finds `field: value`, `field=value`, `"field": "value"`
// and `--field=value` forms whose field is a credential field and whose
// value is a literal that looks like a credential.
func matchAssignment(line, lower string) (secretFinding, bool) {
	for _, n := range assignmentNeedles {
		for off := 0; off < len(lower); {
			i := strings.Index(lower[off:], n)
			if i < 0 {
				break
			}
			i += off
			ks, ke := i, i+len(n)
			for ks > 0 && isKeyChar(line[ks-1]) {
				ks--
			}
			for ke < len(line) && isKeyChar(line[ke]) {
				ke++
			}
			off = ke
			if ke == i { // cannot happen; guards the loop
				off = i + 1
			}
			key := strings.TrimLeft(line[ks:ke], "-.")
			if vs, ve, bare, ok := spokenValue(line, ke); ok {
				// Prose stating the value: "the staging password is
				// Tr0ub4dor-88", "the API key was …", "log in with password
				// Tr0ub4dor-88". Prose says more than values, so only a
				// value with letters and digits counts, and after the bare
				// name one with both cases too; after is or was, a word
				// that ends the clause may be a password ("the wifi
				// password is hunterstaging").
				field := spokenField(line, ks, key)
				if isCredentialField(field) && (isSpokenSecret(line[vs:ve], bare) || !bare && endsClause(line, ve) && isWordPassword(field, line[vs:ve])) {
					return secretFinding{kind: kindAssignment, start: vs, end: ve, key: field}, true
				}
				if !bare {
					continue
				}
			}
			if !isCredentialField(key) {
				// A field named in words with an operator: "API key: X",
				// "secret key → X". As in prose, only a value with letters,
				// digits and both cases counts ("Encryption key:
				// AES-256-GCM" names an algorithm).
				if field := spokenField(line, ks, key); field != key && isCredentialField(field) {
					if vs, ve, ok := assignedValue(line, ke, false); ok && isSpokenSecret(line[vs:ve], true) {
						return secretFinding{kind: kindAssignment, start: vs, end: ve, key: field}, true
					}
				}
				continue
			}
			// A --flag=value, an environment prefix (PGPASSWORD=x psql) or
			// any field=value written tight, which prose never is (note:
			// password=x for now; host=db password=x dbname=prod), ends its
			// value at the first blank: what follows is other text.
			tight := ke+1 < len(line) && line[ke] == '=' && line[ke+1] != ' ' && line[ke+1] != '\t'
			word := strings.HasPrefix(line[ks:ke], "--") || tight || ke < len(line) && line[ke] == '=' && isUpperName(key)
			vs, ve, ok := assignedValue(line, ke, word)
			if !ok {
				continue
			}
			v := line[vs:ve]
			quoted := vs > 0 && strings.ContainsRune("\"'`", rune(line[vs-1]))
			if !quoted && isCodeExpression(v) || !looksLikeSecretValue(v) && !isWordPassword(key, v) {
				continue
			}
			k := kindAssignment
			if lk := strings.ToLower(key); strings.Contains(lk, "secret") && (strings.Contains(lk, "aws") || strings.Contains(lk, "access")) && reAWSSecretBody.MatchString(v) {
				k = kindAWSSecret
			}
			return secretFinding{kind: k, start: vs, end: ve, key: key}, true
		}
	}
	return secretFinding{}, false
}

// spokenValue returns the span of the word stated in prose as the value
// of the field name ending at byte i of line: after is or was ("password
// is X", "the key was X."), or, bare, after one blank ("with password
// X"); without a closing stop, and without the quotes or backticks around
// it ("API key `X`"). ok is false for anything else.
func spokenValue(line string, i int) (start, end int, bare, ok bool) {
	rest := line[i:]
	if m := reSpokenQualifier.FindStringSubmatchIndex(rest); m != nil {
		// "the password for the staging box is X": the qualifier is
		// skipped to its is or was.
		i, rest = i+m[2], rest[m[2]:]
	}
	switch {
	case len(rest) > 4 && strings.EqualFold(rest[:4], " is "):
		start = i + 4
	case len(rest) > 5 && strings.EqualFold(rest[:5], " was "):
		start = i + 5
	case len(rest) > 1 && rest[0] == ' ' && rest[1] != ' ' && rest[1] != '\t':
		start, bare = i+1, true
	default:
		return 0, 0, false, false
	}
	if q := line[start]; q == '"' || q == '\'' || q == '`' {
		j := strings.IndexByte(line[start+1:], q)
		if j < 0 {
			return 0, 0, false, false
		}
		return start + 1, start + 1 + j, bare, j > 0
	}
	end = start
	for end < len(line) && !strings.ContainsRune(" \t,;)\"'`", rune(line[end])) {
		end++
	}
	for end > start && strings.ContainsRune(".!?:", rune(line[end-1])) {
		end--
	}
	return start, end, bare, end > start
}

// isSpokenSecret reports whether v, stated in prose as the value of a
// credential field, is one: prose says more than values, so only a value
// of 8 or more characters with letters and digits counts, and, bare (after
// the field name and a blank, or a field named in words), one with both
// cases too, or a random lower-case token (see isRandomLower).
func isSpokenSecret(v string, bare bool) bool {
	return looksLikeSecretValue(v) && len(v) >= 8 && (hasClasses(v, true, bare, bare) || isRandomLower(v)) &&
		strings.ContainsFunc(v, unicode.IsLetter)
}

// reSpokenQualifier matches a qualifier between a field name and the is
// or was that states its value, group 1 from the blank before the verb:
// " for the staging box is ".
var reSpokenQualifier = regexp.MustCompile(`(?i)^\s+(?:for|of|on|in|at|to)\s[^.,;:=]{1,40}?(\s(?:is|was)\s)`)

// endsClause reports whether the value ending at byte end of line ends
// its clause: the line ends there, or a closing quote or a stop, comma,
// semicolon or parenthesis follows.
func endsClause(line string, end int) bool {
	rest := strings.TrimLeft(line[end:], "\"'`")
	return rest == "" || strings.IndexByte(".,;:!?)", rest[0]) >= 0
}

// minWordPassword is the length from which a single word given as a
// password is one (see isWordPassword).
const minWordPassword = 8

// maxPasswordWords bounds the words of a password written as words
// joined by a separator ("sunshine-tractor"): more are a sentence.
const maxPasswordWords = 6

// isWordPassword reports whether v, the value of the field key, is a
// password written as a word of lower-case letters (a capital first
// allowed): "hunterstaging", "correcthorsebattery", which
// looksLikeSecretValue reads as a name, or as words joined by a hyphen,
// an underscore or a dot: "sunshine-tractor", "purple_monkey". Only a
// password field counts (see isPasswordField: a token or key is never
// one word), only minWordPassword or more letters that are no
// placeholder (changeme, required, none), and only words that do not
// describe a password rather than give it: a word alone that is
// descriptive (see isDescriptiveWord: "password: encrypted", "the
// password is optional"); among joined words, none descriptive, a
// function word, a credential field name or shorter than three letters
// ("vault-managed", "read-only", "single-sign-on", "netrw-passwd").
func isWordPassword(key, v string) bool {
	if len(v) < minWordPassword || len(v) > 64 || !isPasswordField(key) || isPlaceholder(v) {
		return false
	}
	for i := 0; i < len(v); i++ {
		if c := v[i] | 0x20; (c < 'a' || c > 'z') && !isWordJoiner(rune(v[i])) {
			return false
		}
	}
	words := strings.FieldsFunc(v, isWordJoiner)
	if len(words) == 0 || len(words) > maxPasswordWords {
		return false
	}
	for _, w := range words {
		if strings.ToLower(w[1:]) != w[1:] {
			return false // capitals inside a word: looksLikeSecretValue's
		}
		w = strings.ToLower(w)
		if isDescriptiveWord(w) || len(words) > 1 && (len(w) < 3 || functionWords[w] || isCredentialField(w)) {
			return false
		}
	}
	return true
}

// isWordJoiner reports the separators of a password written as words.
func isWordJoiner(r rune) bool { return r == '-' || r == '_' || r == '.' }

// isPasswordField reports field names that hold a password: their last
// component ends in one of passwordWords, or is pwd, or pass after a
// qualifier (db_pass; "first pass" is prose).
func isPasswordField(key string) bool {
	last, rest := lastComponent(key)
	last = strings.ToLower(last)
	if last == "pwd" || last == "pass" && rest != "" {
		return true
	}
	for _, w := range passwordWords {
		if strings.HasSuffix(last, w) {
			return true
		}
	}
	return false
}

// descriptiveSuffixes end the words that describe a password rather than
// give it: participles and adjectives (encrypted, nullable, interactive,
// passwordless), adverbs and abstract nouns (monthly, rotation,
// environment). Nouns in -ness, -ity and -ful, -ous adjectives are as
// often words a password is made of (happiness, serendipity, wonderful);
// the few that describe one are descriptiveWords.
var descriptiveSuffixes = []string{"ed", "able", "ible", "less", "ive", "ly", "tion", "sion", "ment"}

// descriptiveWords describe a password, its state, type or source, and
// end in none of descriptiveSuffixes; they are values of documentation
// and configuration, not passwords.
var descriptiveWords = map[string]bool{}

func init() {
	for _, w := range strings.Fields(`mandatory optional external internal personal temporary permanent separate different identical standard
		default defaults expiring rotating pending missing matching existing changing remaining prompting unknown insecure
		anything whatever nothing something multiple individual plaintext cleartext character datetime timestamp varchar
		nvarchar varbinary longtext mediumtext unicode database environment keychain keyring keystore keepass lastpass
		bitwarden vaultwarden onepassword dashlane kerberos terraform ansible kubernetes jenkins doppler infisical keycloak
		secretsmanager parameterstore anonymous identity plain text write single sign time auto self user local remote
		service shared random blank ask contact request`) {
		descriptiveWords[w] = true
	}
}

// Bounds of a descriptive word (see isDescriptiveWord): its letters, and
// those of the word after a modifier.
const (
	maxDescriptiveWord     = 13
	maxModifiedDescriptive = 11
)

// descriptiveModifiers come before a descriptive word written as one with
// it: nonexpiring, unencrypted, autogenerated, vaultmanaged.
var descriptiveModifiers = []string{"non", "un", "pre", "auto", "self", "user", "vault", "system", "server", "client",
	"admin", "env", "environment", "externally", "internally", "manually", "randomly", "centrally", "separately"}

// isDescriptiveWord reports lower-case words that describe a password:
// one of descriptiveWords, a word of at most maxDescriptiveWord letters
// ending in one of descriptiveSuffixes ("encrypted", "nullable"; not in
// -fly, as butterfly), or either of those, of at most
// maxModifiedDescriptive letters, after one of descriptiveModifiers
// ("nonexpiring", "vaultmanaged"). A longer word ending in a suffix is
// words run together, as passwords are: "sunflowerpowered",
// "tractorfriendly".
func isDescriptiveWord(w string) bool {
	if isDescriptive(w, maxDescriptiveWord) {
		return true
	}
	for _, m := range descriptiveModifiers {
		if rest, ok := strings.CutPrefix(w, m); ok && isDescriptive(rest, maxModifiedDescriptive) {
			return true
		}
	}
	return false
}

// isDescriptive reports one of descriptiveWords, or a word of at most
// most letters ending in one of descriptiveSuffixes.
func isDescriptive(w string, most int) bool {
	if descriptiveWords[w] {
		return true
	}
	if len(w) > most || strings.HasSuffix(w, "fly") {
		return false
	}
	for _, s := range descriptiveSuffixes {
		if strings.HasSuffix(w, s) {
			return true
		}
	}
	return false
}

// isRandomLower reports values such as 9f8e7d6c5b4a3f2e9d8c: 16 or more
// lower-case letters and digits, both, as lower-case hex and base36
// tokens are written, and not a 0x number (an address or a constant).
// After a credential field in prose ("token 9f8e...") such a value is the
// credential; after commit, sha or digest it is a hash, and those are not
// credential fields.
func isRandomLower(v string) bool {
	if len(v) < 16 || strings.HasPrefix(v, "0x") {
		return false
	}
	for i := 0; i < len(v); i++ {
		if c := v[i]; !('a' <= c && c <= 'z' || '0' <= c && c <= '9') {
			return false
		}
	}
	return hasClasses(v, true, false, true)
}

// spokenField returns the field name key, starting at byte ks of line,
// joined to the word before it when key is the bare word key or token, as
// prose names one: "API key" is API_key, "secret key" secret_key, "page
// token" page_token (not a credential).
func spokenField(line string, ks int, key string) string {
	if !strings.EqualFold(key, "key") && !strings.EqualFold(key, "token") || ks < 2 || line[ks-1] != ' ' {
		return key
	}
	ws := ks - 1
	for ws > 0 && isKeyChar(line[ws-1]) {
		ws--
	}
	return line[ws:ks-1] + "_" + key
}

// assignedValue parses the assignment operator (see operatorEnd) and value
// after a field name ending at byte i of line. It returns the span of the
// value, or ok false when there is no assignment or the value is prose
// (several words). It reads markdown emphasis around the name, operator or
// value (**Password:** X), and a qualifier before a colon ("password
// (staging): X", "token for the CI bot: X").
func assignedValue(line string, i int, word bool) (start, end int, ok bool) {
	i = skipAny(line, i, `"'*_`+"`")
	qualified := false
	if m := reFieldQualifier.FindStringIndex(line[i:]); m != nil {
		i, qualified = i+m[1]-1, true // at the colon
	}
	i = skipAny(line, i, " \t")
	if i, ok = operatorEnd(line, i); !ok {
		return 0, 0, false
	}
	// Markdown emphasis around the value: **Password:** X, password: *X*.
	i = skipAny(line, i, " \t*_")
	if i == len(line) {
		return 0, 0, false
	}
	if q := line[i]; q == '"' || q == '\'' || q == '`' {
		j := strings.IndexByte(line[i+1:], q)
		if j < 0 {
			return 0, 0, false
		}
		start, end = i+1, i+1+j
		if strings.ContainsAny(line[start:end], " \t") {
			return 0, 0, false // prose; passphrases are matchPassphrase's
		}
	} else {
		j := i
		for j < len(line) && !strings.ContainsRune(" \t,;}&)`\"'", rune(line[j])) {
			j++
		}
		rest := strings.TrimLeft(line[j:], " \t")
		if !word && j < len(line) && (line[j] == ' ' || line[j] == '\t') && rest != "" && rest[0] != '#' && !strings.HasPrefix(rest, "//") &&
			!strings.HasPrefix(rest, "-->") && !strings.HasPrefix(rest, "*/") {
			return 0, 0, false // several words: prose
		}
		start, end = i, j
	}
	// After a qualifier the line is prose ("the credential of the OS user:
	// PostgreSQL"): as there, only a value with a digit counts.
	if qualified && !hasClasses(line[start:end], true, false, false) {
		return 0, 0, false
	}
	return start, end, true
}

// maxOperatorRunes bounds the characters of an assignment operator.
const maxOperatorRunes = 4

// operatorEnd returns the offset after the assignment operator starting at
// byte i of line, or ok false when none starts there. An operator is a run
// of up to maxOperatorRunes operator characters (see isOperatorRune),
// single blanks between them allowed: : = := => -> and equally "password
// >> X", "token ⇒ X", "secret ▸ X", "password = > X". A run of hyphens
// needs a blank on both sides (a spaced dash, not a hyphenated word); a
// run of two or more characters other than := => -> needs a blank after
// it, or else its first character alone, : or =, is the operator
// (${PASSWORD:-X}). Comparisons (==) and :// are not assignments.
func operatorEnd(line string, i int) (end int, ok bool) {
	if strings.HasPrefix(line[i:], "==") || strings.HasPrefix(line[i:], "://") {
		return 0, false
	}
	var ops []byte // the run without its blanks, non-ASCII runes as 0x80
	for j, n := i, 0; j < len(line) && n < maxOperatorRunes; n++ {
		r, size := utf8.DecodeRuneInString(line[j:])
		if !isOperatorRune(r) {
			break
		}
		j += size
		end = j
		ops = append(ops, byte(min(r, utf8.RuneSelf)))
		if j+1 < len(line) && line[j] == ' ' && line[j+1] != ' ' {
			j++ // a single blank inside the run: "= >"
		}
	}
	blankAfter := end == len(line) || line[end] == ' ' || line[end] == '\t'
	run := string(ops)
	switch {
	case run == "" || strings.Contains(run, "=="):
		return 0, false
	case strings.Trim(run, "-") == "":
		return end, i > 0 && (line[i-1] == ' ' || line[i-1] == '\t') && blankAfter
	case blankAfter || len(ops) == 1 || run == ":=" || run == "=>" || run == "->":
		return end, true
	case line[i] == ':' || line[i] == '=':
		return i + 1, true
	}
	return 0, false
}

// isOperatorRune reports the characters an assignment operator is made
// of: the ASCII : = - > ~ + and, outside ASCII, mathematical and other
// symbols, dashes and other punctuation that is not a bracket or quote
// (→ ⇒ ▸ ➜ — – ≔ •).
func isOperatorRune(r rune) bool {
	if r < utf8.RuneSelf {
		return strings.ContainsRune(":=->~+", r)
	}
	return unicode.In(r, unicode.Sm, unicode.So, unicode.Pd, unicode.Po)
}

// reFieldQualifier matches a qualifier between a field name and its
// colon: "password (staging):", "token for the CI bot:".
var reFieldQualifier = regexp.MustCompile(`^(?:\s*\([^()\n]{1,40}\)|\s+(?:for|of|on|in|at)\s[^:=()\n]{1,40}?)["'*_\x60]*:`)

// skipAny returns the offset of the first byte of line at or after i that
// is not in set.
func skipAny(line string, i int, set string) int {
	for i < len(line) && strings.IndexByte(set, line[i]) >= 0 {
		i++
	}
	return i
}

// looksLikeSecretValue reports whether the literal v assigned to a
// credential field looks like a credential rather than a reference,
// placeholder, name or prose.
func looksLikeSecretValue(v string) bool {
	if len(v) < 6 || isReference(v) || isPlaceholder(v) || isDocPlaceholder(v) {
		return false
	}
	allDigits, plainWord, ident := true, true, true
	for i := 0; i < len(v); i++ {
		c := v[i]
		if c < '0' || c > '9' {
			allDigits = false
		}
		isLower := 'a' <= c && c <= 'z'
		if !(isLower || i == 0 && 'A' <= c && c <= 'Z') {
			plainWord = false
		}
		if !(isLower || (c == '_' || c == '-' || c == '.' || c == '/') && i > 0 && i < len(v)-1) {
			ident = false
		}
	}
	switch {
	case allDigits: // a number is a setting, not a credential
		return false
	case plainWord && len(v) < 16: // a word: "required", "Optional"
		return false
	case ident && len(v) < 40: // a lower-case name such as db_password or vault/app/db
		return false
	case isEnvName(v): // OPENAI_API_KEY: the name of a variable
		return false
	}
	return true
}

// isCodeExpression reports unquoted values that are code rather than
// literals: calls, generics and indexing (getToken(), Option<String>,
// cfg["key"]) and member chains (config.apiKey, this.props.secret).
func isCodeExpression(v string) bool {
	if strings.ContainsAny(v, "(<[") {
		return true
	}
	if !reMemberChain.MatchString(v) {
		return false
	}
	// A segment that mixes digits and both cases over 16 characters is a
	// token (dp.st.prd.X7f..., a file named after one), not an identifier.
	for _, seg := range strings.Split(v, ".") {
		if len(seg) >= 16 && hasClasses(seg, true, true, true) {
			return false
		}
	}
	return true
}

var reMemberChain = regexp.MustCompile(`^[A-Za-z_$][\w$]*(?:\.[A-Za-z_$][\w$]*)+$`)

// isReference reports values that point at a secret instead of holding it:
// $VAR, ${VAR}, $(cmd), %(name)s, {{ .X }}, <name>, env:NAME, vault:...,
// scheme URLs (vault://, op://), and file paths.
func isReference(v string) bool {
	v = strings.Trim(v, `"'`)
	switch {
	case v == "":
		return true
	case strings.HasPrefix(v, "$"), strings.HasPrefix(v, "%("), strings.HasPrefix(v, "%{"),
		strings.HasPrefix(v, "{{"), strings.HasPrefix(v, "<"), strings.HasPrefix(v, "#{"),
		strings.HasPrefix(v, "/"), strings.HasPrefix(v, "~/"), strings.HasPrefix(v, "./"), strings.HasPrefix(v, "../"):
		return true
	}
	lv := strings.ToLower(v)
	for _, p := range []string{"env:", "env.", "vault:", "secret:", "secrets.", "file:", "op:", "ssm:", "keyring:", "keychain:", "awssm:", "gcpsm:", "sops:"} {
		if strings.HasPrefix(lv, p) {
			return true
		}
	}
	if i := strings.Index(v, "://"); i > 0 && !strings.Contains(v[i+3:], "@") {
		return true
	}
	return reEnvRef.MatchString(v)
}

// reEnvRef matches code that reads the environment: process.env.X,
// os.Getenv("X"), os.environ["X"], ENV["X"].
var reEnvRef = regexp.MustCompile(`(?i)(?:^|[^a-z])(?:env|environ|getenv)\s*[.(\[]`)

// isUpperName reports names of upper-case letters, digits and
// underscores, as environment variables are spelled.
func isUpperName(v string) bool {
	return v != "" && strings.Trim(v, "ABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_") == ""
}

// isEnvName reports names like OPENAI_API_KEY: upper-case letters, digits
// and at least one underscore.
func isEnvName(v string) bool {
	if !strings.Contains(v, "_") || v[0] < 'A' || v[0] > 'Z' {
		return false
	}
	for _, c := range []byte(v) {
		if !('A' <= c && c <= 'Z' || '0' <= c && c <= '9' || c == '_') {
			return false
		}
	}
	return true
}

// placeholderWords are values that stand in for a secret in documentation.
// They pass: they are not credentials, and specs and tool configurations
// show the shape of a configuration with them.
var placeholderWords = map[string]bool{
	"password": true, "passwd": true, "pass": true, "pwd": true, "secret": true, "token": true,
	"none": true, "null": true, "nil": true, "n/a": true, "tbd": true, "todo": true, "hidden": true,
	"masked": true, "removed": true, "unset": true, "empty": true, "required": true, "optional": true,
	"string": true, "true": true, "false": true, "undefined": true,
}

var placeholderParts = []string{"redacted", "changeme", "change_me", "change-me", "placeholder", "example", "dummy", "your", "replace", "xxxx", "****", "...", "…", "<", "fixme", "insert"}

// isPlaceholder reports values such as <redacted>, ***, changeme,
// your-api-key-here and [REDACTED].
func isPlaceholder(v string) bool {
	v = strings.ToLower(strings.Trim(v, `"'[]()`))
	if v == "" || placeholderWords[v] {
		return true
	}
	for _, p := range placeholderParts {
		if strings.Contains(v, p) {
			return true
		}
	}
	same := true
	for i := 1; i < len(v); i++ {
		if v[i] != v[0] {
			same = false
			break
		}
	}
	return same
}

// secretRejection builds the model-facing refusal for f. It names the line
// and kind, never the secret.
func secretRejection(f *secretFinding) *Rejection {
	what, env := f.kind.what, f.kind.env
	if f.kind == kindAssignment || f.kind == kindComparison {
		field := f.key
		if !isSafeFieldName(field) {
			field = "a credential field"
		}
		what = "a literal secret assigned to " + field
		if f.kind == kindComparison {
			what = "a literal secret compared with " + field
		}
		env = envNameFor(f.key)
	}
	example := fmt.Sprintf("${%s} or `env: %s`", env, env)
	if f.kind == kindURLPassword {
		example = "postgres://user:${DB_PASSWORD}@host/db"
	}
	if f.kind == kindPrivateKey {
		example = "`key_file: /run/secrets/deploy_key` or `env: PRIVATE_KEY`"
	}
	return reject(RuleSecret, f.line,
		fmt.Sprintf("Line %d holds what looks like %s.", f.line, what),
		fmt.Sprintf("Nothing was written. Store a reference instead of the value, such as %s, and keep the secret itself in the environment or a secret manager.", example))
}

// isSafeFieldName reports field names short and plain enough to repeat.
func isSafeFieldName(k string) bool {
	if k == "" || len(k) > 64 {
		return false
	}
	for _, c := range []byte(k) {
		if !isKeyChar(c) {
			return false
		}
	}
	return true
}

// envNameFor turns a field name into a variable name: db_password ->
// DB_PASSWORD, apiKey -> API_KEY.
func envNameFor(key string) string {
	var b strings.Builder
	for _, p := range splitKey(key) {
		if b.Len() > 0 {
			b.WriteByte('_')
		}
		for _, c := range []byte(p) {
			if 'a' <= c && c <= 'z' || '0' <= c && c <= '9' {
				b.WriteByte(byte(unicode.ToUpper(rune(c))))
			}
		}
	}
	s := strings.Trim(b.String(), "_")
	if s == "" || len(s) > 48 || s[0] >= '0' && s[0] <= '9' {
		return "SECRET_NAME"
	}
	return s
}

func matchTelegram(line, _ string) (secretFinding, bool) {
	for _, m := range reTelegram.FindAllStringSubmatchIndex(line, -1) {
		if !isDocPlaceholder(line[m[2]:m[3]]) {
			return secretFinding{kind: kindTelegram, start: m[2], end: m[3]}, true
		}
	}
	return secretFinding{}, false
}

// matchDockerAuth finds "auth": "<base64 of user:password>" entries of a
// Docker or Podman auths configuration.
func matchDockerAuth(line, _ string) (secretFinding, bool) {
	for _, m := range reDockerAuth.FindAllStringSubmatchIndex(line, -1) {
		v := line[m[2]:m[3]]
		raw, err := base64.StdEncoding.DecodeString(v)
		if err != nil {
			continue
		}
		user, pass, ok := strings.Cut(string(raw), ":")
		if ok && user != "" && len(pass) >= 4 && !isReference(pass) && !isPlaceholder(pass) {
			return secretFinding{kind: kindDockerAuth, start: m[2], end: m[3]}, true
		}
	}
	return secretFinding{}, false
}

// matchAzureSAS finds the sig parameter of a shared access signature URL
// (one that also carries a version, expiry or permission parameter).
func matchAzureSAS(line, lower string) (secretFinding, bool) {
	if !strings.Contains(lower, "sv=") && !strings.Contains(lower, "se=") && !strings.Contains(lower, "sp=") {
		return secretFinding{}, false
	}
	m := reAzureSig.FindStringSubmatchIndex(line)
	if m == nil || isPlaceholder(line[m[2]:m[3]]) {
		return secretFinding{}, false
	}
	return secretFinding{kind: kindAzureSAS, start: m[2], end: m[3]}, true
}

// matchCLIPassword finds passwords given on a command line: curl -u
// user:password, --user=user:password and mysql -pPASSWORD.
func matchCLIPassword(line, lower string) (secretFinding, bool) {
	// -u means something else to date, sort and most other commands.
	if strings.Contains(lower, "curl") || strings.Contains(lower, "wget") || strings.Contains(lower, "http") {
		for _, m := range reCurlUser.FindAllStringSubmatchIndex(line, -1) {
			pass := line[m[4]:m[5]]
			if len(pass) >= 4 && !isReference(pass) && !isPlaceholder(pass) && !isEnvName(pass) {
				return secretFinding{kind: kindCLIPassword, start: m[4], end: m[5]}, true
			}
		}
	}
	for _, cmd := range []struct {
		needle string
		re     *regexp.Regexp
	}{{"mysql", reMySQLPass}, {"login", reLoginPass}, {"sshpass", reLoginPass}, {"--password", rePasswordFlag}} {
		if !strings.Contains(lower, cmd.needle) {
			continue
		}
		if m := cmd.re.FindStringSubmatchIndex(line); m != nil {
			pass := line[m[2]:m[3]]
			if !isReference(pass) && !isPlaceholder(pass) && !isEnvName(pass) {
				return secretFinding{kind: kindCLIPassword, start: m[2], end: m[3]}, true
			}
		}
	}
	return secretFinding{}, false
}

// matchXMLProperty finds <property name="password" value="..."/> forms.
func matchXMLProperty(line, _ string) (secretFinding, bool) {
	for _, m := range reXMLProperty.FindAllStringSubmatchIndex(line, -1) {
		key, v := line[m[2]:m[3]], line[m[4]:m[5]]
		if isCredentialField(key) && looksLikeSecretValue(v) {
			return secretFinding{kind: kindAssignment, start: m[4], end: m[5], key: key}, true
		}
	}
	return secretFinding{}, false
}

// matchHCLVariable finds a Terraform variable whose name is a credential
// field and whose default is a literal secret.
func matchHCLVariable(line, _ string) (secretFinding, bool) {
	m := reHCLVariable.FindStringSubmatchIndex(line)
	if m == nil {
		return secretFinding{}, false
	}
	key, v := line[m[2]:m[3]], line[m[4]:m[5]]
	if !isCredentialField(key) || !looksLikeSecretValue(v) {
		return secretFinding{}, false
	}
	return secretFinding{kind: kindAssignment, start: m[4], end: m[5], key: key}, true
}

// matchPassphrase finds passphrases and seed phrases: a password,
// passphrase or mnemonic field whose value, assigned or stated in quotes
// after is or was, is three or more lower-case words, none of them a function word or one of descriptiveWords (so
// prose such as "must be at least 12 characters", "a short name for the
// metric" or "ask-security-team" is not one).
func matchPassphrase(line, lower string) (secretFinding, bool) {
	m := rePassphrase.FindStringSubmatchIndex(line)
	if m == nil && statesQuoted(line, lower) {
		m = rePassphraseQuoted.FindStringSubmatchIndex(line)
	}
	if m == nil {
		return secretFinding{}, false
	}
	words := strings.FieldsFunc(line[m[4]:m[5]], func(r rune) bool { return r == ' ' || r == '-' })
	for _, w := range words {
		if lw := strings.ToLower(w); len(w) < 3 || functionWords[lw] || descriptiveWords[lw] {
			return secretFinding{}, false
		}
	}
	return secretFinding{kind: kindPassphrase, start: m[4], end: m[5], key: line[m[2]:m[3]]}, true
}

// statesQuoted is the cheap test before rePassphraseQuoted: the line
// says is or was and holds a quote.
func statesQuoted(line, lower string) bool {
	return (strings.Contains(lower, " is ") || strings.Contains(lower, " was ")) && strings.ContainsAny(line, "\"'“‘")
}

// functionWords are words prose is made of and passphrases avoid.
var functionWords = map[string]bool{}

func init() {
	for _, w := range strings.Fields(`the and for are but not you your all any can her was one our out has him his how its may new now see two way who did get let put say she too use via per from into with this that than then them they what when where which while will would shall should must might could been being have here there these those only also just like such some each both more most other about above after again against before below between during under over same very own off once few nor set must never always please store stored read kept keep use used using required optional value values field name names secret password example file vault environment variable env`) {
		functionWords[w] = true
	}
}

var (
	reNetrc  = regexp.MustCompile(`(?m)^[ \t]*machine[ \t]+\S+(?:\s+login[ \t]+\S+)?\s+password[ \t]+(\S+)`)
	rePgpass = regexp.MustCompile(`^[A-Za-z0-9_.*-]+:(?:\d{2,5}|\*):[A-Za-z0-9_*-]+:[A-Za-z0-9_*-]+:(\S{6,})$`)
	rePEMRow = regexp.MustCompile(`^[A-Za-z0-9+/]{64}$`)
)

// minPEMRows is how many 64-column base64 lines in a row make a key body.
const minPEMRows = 4

// findSecretBlocks finds credentials that span lines or need the whole
// text: .netrc entries, .pgpass lines, and the base64 body of a PEM key
// pasted without its header (a block of 64-column base64 lines that no
// BEGIN line of a public key or certificate introduces).
func findSecretBlocks(text string) []secretFinding {
	var out []secretFinding
	if strings.Contains(text, "machine") {
		for _, m := range reNetrc.FindAllStringSubmatchIndex(text, -1) {
			if p := text[m[2]:m[3]]; !isReference(p) && !isPlaceholder(p) {
				out = append(out, secretFinding{kind: kindNetrc, line: lineAt([]byte(text), m[2])})
				break
			}
		}
	}
	rows, start, header, pgpass, discord := 0, 0, "", false, false
	for i, l := range strings.Split(text, "\n") {
		if !pgpass && strings.Count(l, ":") == 4 && !strings.ContainsAny(l, " \t") {
			if m := rePgpass.FindStringSubmatch(l); m != nil && looksLikeSecretValue(m[1]) {
				out = append(out, secretFinding{kind: kindPgpass, line: i + 1})
				pgpass = true
			}
		}
		if !discord && strings.Count(l, ".") >= 2 && hasRun(l, 23) {
			for _, m := range reDiscordBot.FindAllStringIndex(l, -1) {
				if first, _, _ := strings.Cut(l[m[0]:m[1]], "."); hasClasses(first, true, true, true) {
					out = append(out, secretFinding{kind: kindDiscord, line: i + 1})
					discord = true
					break
				}
			}
		}
		t := strings.TrimSpace(l)
		if k := strings.Index(t, "-----"); k >= 0 {
			// A BEGIN or END line, also inside a string literal.
			header, rows = strings.ToUpper(t[k:]), 0
			continue
		}
		if len(t) != 64 || !rePEMRow.MatchString(t) {
			rows = 0
			if t != "" && !strings.Contains(t, ":") {
				header = "" // a block's headers (Proc-Type: ...) may sit between BEGIN and body
			}
			continue
		}
		if rows == 0 {
			start = i + 1
		}
		rows++
		if rows == minPEMRows && !strings.HasPrefix(header, "-----BEGIN") {
			out = append(out, secretFinding{kind: kindPEMBody, line: start})
		}
	}
	return out
}

// docPlaceholders are credentials published in vendor documentation as
// examples; they are accepted wherever they appear.
var docPlaceholders = map[string]bool{
	"AKIAIOSFODNN7EXAMPLE":                         true,
	"ASIAIOSFODNN7EXAMPLE":                         true,
	"wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY":     true,
	"je7MtGbClwBF/2Zp9Utk/h3yCo8nvbEXAMPLEKEY":     true,
	"123456789:ABC-DEF1234ghIkl-zyx57W2v1u123ew11": true, // Telegram Bot API docs
	"xoxb-not-a-real-token-this-will-not-work":     true, // Slack docs
}

// isDocPlaceholder reports whether a token-shaped secret is a documentation
// placeholder: one of docPlaceholders, a token ending in EXAMPLE or
// EXAMPLEKEY (the AWS convention), a <your-token> style name, or a token
// whose body is padded with a run of at least 8 x, X, 0, * or . characters
// (ghp_xxxxxxxx, sk-000000000000). A token that merely contains the word
// "example" elsewhere is not one.
func isDocPlaceholder(s string) bool {
	s = strings.Trim(s, "\"'`<>[](){} ")
	if docPlaceholders[s] {
		return true
	}
	if strings.HasSuffix(s, "EXAMPLE") || strings.HasSuffix(s, "EXAMPLEKEY") {
		return true
	}
	if ls := strings.ToLower(s); strings.HasPrefix(ls, "your") || strings.Contains(ls, "-your-") || strings.Contains(ls, "_your_") {
		return true
	}
	run := 0
	for i := 0; i < len(s); i++ {
		if i > 0 && s[i] == s[i-1] && strings.IndexByte("xX0*.", s[i]) >= 0 {
			run++
			if run >= 7 {
				return true
			}
		} else {
			run = 0
		}
	}
	return false
}

// Credential pairs: a user name and its password written as user / password
// or user:password after a word that announces a login ("staging login:
// admin / X", "sign in with ops:X"), as user/password after one that names
// credentials ("creds are deploy/X"), in prose ("logged in as admin with
// X"), or after a well-known account name without a word ("root / X",
// "sa / `X`", "sa:X").
var (
	credPairNeedles  = []string{"log", "sign", "cred", "account", "user", "admin", "root", "sa", "postgres", "deploy", "ubuntu", "oracle", "guest"}
	reCredPair       = regexp.MustCompile(`(?i)^(?:log[- ]?(?:in|on)|sign[- ]?(?:in|on)|creds?|credentials|account|user(?:name)?\s*/\s*pass(?:word)?)s?\b[^\n/:=]{0,30}?[:=]?[\s*_\x60"'(]*\b([A-Za-z][\w.@+-]{0,63})(\s*/\s*|:)([^\s\x60"'*<>]+)`)
	reLoginAs        = regexp.MustCompile(`(?i)^log(?:ged|s)?[- ]?(?:in|on)\s+as\s+([\w.@-]{1,64})(\s+(?:with|using)\s+(?:(?:the\s+)?password\s+)?)([^\s\x60"'*<>]+)`)
	knownUsers       = `(admin|administrator|root|sa|postgres|deploy|ubuntu|ec2-user|oracle|guest|superuser)`
	reKnownUserSlash = regexp.MustCompile(`(?i)^` + knownUsers + `[*_\x60"']*(\s+/\s+)[*_\x60"']*([^\s\x60"'*<>]+)`)
	reKnownUserColon = regexp.MustCompile(`(?i)^` + knownUsers + `(:)([^\s\x60"'*<>]+)`)
)

// A pairForm is one way to write a credential pair: its pattern, anchored
// at one of the lower-case words it starts with, which must start a word.
// Its groups are the user, the separator and the password.
type pairForm struct {
	starts []string
	re     *regexp.Regexp
}

var pairForms = []pairForm{
	{[]string{"log", "sign", "cred", "account", "user"}, reCredPair},
	{[]string{"log"}, reLoginAs},
	{knownUserStarts, reKnownUserSlash},
	{knownUserStarts, reKnownUserColon},
}

// knownUserStarts are the words the well-known account names start with.
var knownUserStarts = []string{"admin", "root", "sa", "postgres", "deploy", "ubuntu", "ec2-user", "oracle", "guest", "superuser"}

// pairWindow bounds the text after a start word a pair form reads.
const pairWindow = 256

// matchCredentialPair finds user / password pairs (see pairForms) whose
// password looks like one (see isPairPassword).
func matchCredentialPair(line, lower string) (secretFinding, bool) {
	for _, form := range pairForms {
		for _, w := range form.starts {
			for off := 0; ; {
				i := strings.Index(lower[off:], w)
				if i < 0 {
					break
				}
				i += off
				off = i + len(w)
				if i > 0 && isWordByte(lower[i-1]) {
					continue
				}
				window := line[i:min(len(line), i+pairWindow)]
				m := form.re.FindStringSubmatchIndex(window)
				if m == nil {
					continue
				}
				// Tight, user/password is also a path (docs/Login2Page):
				// only after a word that names credentials.
				if window[m[4]:m[5]] == "/" && w != "cred" && w != "user" {
					continue
				}
				ps, pe := m[6], m[7]
				// Spaced, a slash also lists alternatives: "NA / SA /
				// EMEA-2", "viewer / admin / Ops-2024" name no password.
				if strings.TrimSpace(window[m[4]:m[5]]) == "/" && inSlashList(line, i, i+pe) {
					continue
				}
				for pe > ps && strings.IndexByte(".,;:)?", window[pe-1]) >= 0 {
					pe--
				}
				if isPairPassword(window[ps:pe]) {
					return secretFinding{kind: kindCredPair, start: i + ps, end: i + pe}, true
				}
			}
		}
	}
	return secretFinding{}, false
}

// inSlashList reports whether the pair line[start:end] is one item of a
// list with a slash before or after it: "a / b / c".
func inSlashList(line string, start, end int) bool {
	before := strings.TrimRight(line[:start], " \t*_`\"'")
	after := strings.TrimLeft(line[end:], " \t*_`\"'")
	return strings.HasSuffix(before, "/") || strings.HasPrefix(after, "/")
}

// isWordByte reports ASCII letters, digits and the underscore.
func isWordByte(c byte) bool {
	return isAlnumByte(c) || c == '_'
}

// isPairPassword reports whether p, the second half of a user / password
// pair, looks like a password: 6 or more characters with two letters and a
// digit or symbol, and not a path, reference, placeholder, variable name or
// lower-case name such as db-prod-2, 16-alpine or v1.2.3-rc1. A colon
// makes it a name of parts, as in an ARN (account: arn:aws:iam::1:root).
func isPairPassword(p string) bool {
	if len(p) < 6 || len(p) > 128 || strings.ContainsAny(p, "/\\:") || isReference(p) || isPlaceholder(p) || isDocPlaceholder(p) || isEnvName(p) {
		return false
	}
	letters, others, name := 0, 0, true
	for i := 0; i < len(p); i++ {
		switch c := p[i]; {
		case 'a' <= c && c <= 'z':
			letters++
		case 'A' <= c && c <= 'Z':
			letters++
			name = false
		case '0' <= c && c <= '9':
			others++
		default:
			others++
			if c != '-' && c != '_' && c != '.' {
				name = false
			}
		}
	}
	if letters < 2 || others == 0 {
		return false
	}
	return !name || !strings.ContainsAny(p, "-_.")
}

// Tight credential pairs: user/password with a slash and no blanks
// ("admin/S3cr3tPass!"), which is also how paths, branches, units and
// alternatives are written (src/admin/Users2Page.tsx, feature/ABC-1234,
// km/h, read/write). A pair stands alone: no path or URL goes on before
// or after it, and its password is not a file name.
const (
	maxTightUser     = 32
	maxTightPassword = 40
	// tightSymbols make the second half of a tight pair a password after
	// any user name; + = and # also after a well-known account name, as
	// base64 runs, anchors and C++ hold them in paths.
	tightSymbols      = "!@$%^&*?~"
	knownUserSymbols  = tightSymbols + "#+="
	tightUserBefore   = " \t([{\"'`*:,;=>|"
	tightPasswordStop = " \t\r\"'`)]},;<>|"
)

// reNotPassword matches what, in the second half of a tight pair, makes
// it a path, reference, pattern or markup rather than a password: a file
// extension (admin/Config2024.yaml, an address's .com), a version or
// commit after @ (actions/setup-go@v5, lodash/fp@4.17.21,
// rsc.io/breaker@v2.0.0+incompatible), a realm after @
// (primary/instance@REALM), each also with the $ that ends a pattern
// (quote@v1.5.2$), a query (admin/users?tab=Roles2), a variable
// (bin/x$GOEXE, ou/o-${Id}), a glob or pattern (.* *. or a leading *),
// an HTML character reference (MIT/GPL&quot;), brackets and backslashes
// (role/?[a-z_0-9+=]+).
var reNotPassword = regexp.MustCompile(`(?:\.[A-Za-z]{1,5}|@(?:v\d[\w.+-]*|\d+\.\d[\w.+-]*|\d{1,2}|main|master|latest|stable|canary|[0-9a-f]{7,40}))\$?$|` +
	`@[A-Z][A-Z0-9.-]*$|[?&]\w+=|\$[A-Za-z_{(]|\.\*|\*\.|^\*|&#?\w+(?:;|$)|[\[\](){}\\<>]`)

// matchTightPair finds user/password pairs written tight, without a word
// that announces them (see matchCredentialPair for those): a user name
// that starts with a letter and stands after a blank, bracket, quote or
// colon, outside a URL, and is no host name (see reHostName), a slash, and a password that runs to a blank,
// quote or closing bracket without another slash, without the stop or
// emphasis after it. The password must look like one (see
// isPairPassword), be no path, reference, pattern or markup (see
// reNotPassword), and hold a symbol (see tightSymbols; after a
// well-known account name such as admin or root also knownUserSymbols)
// with lower-case letters and a digit or capitals: without one,
// root/Config2Dir is a folder, and a ticket such as hotfix/INC-2042!
// names a branch. A pair inside a markdown link target is a path.
func matchTightPair(line, lower string) (secretFinding, bool) {
	for off := 0; off < len(line); {
		i := strings.IndexByte(line[off:], '/')
		if i < 0 {
			break
		}
		i += off
		off = i + 1
		us := i
		for us > 0 && i-us <= maxTightUser && (isWordByte(line[us-1]) || strings.IndexByte(".@+-", line[us-1]) >= 0) {
			us--
		}
		if us == i || i-us > maxTightUser || !isASCIILetter(line[us]) ||
			us > 0 && strings.IndexByte(tightUserBefore, line[us-1]) < 0 ||
			us > 1 && line[us-1] == '(' && line[us-2] == ']' || inURL(line, us) || reHostName.MatchString(line[us:i]) {
			continue
		}
		pe := i + 1
		for pe < len(line) && strings.IndexByte(tightPasswordStop, line[pe]) < 0 {
			pe++
		}
		for pe > i+1 && strings.IndexByte(".,:;*_", line[pe-1]) >= 0 {
			pe--
		}
		p := line[i+1 : pe]
		if len(p) > maxTightPassword || !isPairPassword(p) || reNotPassword.MatchString(p) {
			continue
		}
		symbols := tightSymbols
		if slices.Contains(knownUserStarts, lower[us:i]) {
			symbols = knownUserSymbols
		}
		if strings.ContainsAny(p, symbols) && (hasClasses(p, true, false, true) || hasClasses(p, false, true, true)) {
			return secretFinding{kind: kindCredPair, start: i + 1, end: pe}, true
		}
	}
	return secretFinding{}, false
}

// reHostName matches a host name, as the first half of a module path or
// URL without its scheme is (gopkg.in/yaml.v3, github.com/acme/etl).
var reHostName = regexp.MustCompile(`\.(?:com|org|net|io|in|dev|co|edu|gov|de|uk|eu|ai|app|cloud|internal|local)$`)

// inURL reports whether byte i of line is inside a URL: the run of
// non-blank bytes up to it holds ://.
func inURL(line string, i int) bool {
	s := strings.LastIndexAny(line[:i], " \t") + 1
	return strings.Contains(line[s:i], "://")
}

// isASCIILetter reports ASCII letters.
func isASCIILetter(c byte) bool {
	return 'a' <= c|0x20 && c|0x20 <= 'z'
}

// Comparisons in code: a credential field compared with a literal
// (if password == "X", pwd === 'X', "X" == req.body.password,
// password.equals("X"), strcmp(password, "X")) holds the credential as
// surely as an assignment.
var comparisonNeedles = []string{"==", "!=", "equal", "cmp", "compare"}

// matchComparison finds a credential field compared with a quoted
// literal that looks like a credential (see looksLikeSecretValue and
// isWordPassword): on either side of ==, ===, != or !==, in
// .equals(...) and .equalsIgnoreCase(...), and as the two arguments of a
// function that compares (see comparisonAt). A comparison with an
// identifier, an empty string, a reference or a placeholder passes.
func matchComparison(line, lower string) (secretFinding, bool) {
	for off := 0; off < len(line); {
		c, ok := comparisonAt(line, lower, off)
		if !ok {
			break
		}
		off = c.next
		left := strings.TrimRight(line[c.left:c.op], " \t)")
		right := unwrapCall(line[c.right:c.end])
		rs := c.end - len(right)
		var key string
		var vs, ve int
		if s, e, ok := literalBefore(left); ok {
			key, vs, ve = leadingOperand(right), c.left+s, c.left+e
		} else if s, e, ok := literalAfter(right); ok {
			key, vs, ve = trailingKey(left), rs+s, rs+e
		} else {
			continue
		}
		v := line[vs:ve]
		if key == "" || !isCredentialField(key) || !looksLikeSecretValue(v) && !isWordPassword(key, v) {
			continue
		}
		return secretFinding{kind: kindComparison, start: vs, end: ve, key: key}, true
	}
	return secretFinding{}, false
}

// A comparison is where comparisonAt found two operands compared: the
// left one is line[left:op], the right one starts at right and ends by
// end; the search goes on at next.
type comparison struct {
	left, op, right, end, next int
}

// reCompareCall matches the name and opening parenthesis of a function
// that compares its two arguments: strcmp(, strcasecmp(, compare_digest(,
// ConstantTimeCompare(, timingSafeEqual(.
var reCompareCall = regexp.MustCompile(`(?i)\b[\w.]*(?:cmp|compare|compare_digest|equal)\(`)

// comparisonAt returns the first comparison in line at or after off: ==
// === != !== and .equals( .equalsIgnoreCase( between two operands, or
// the two arguments of a call to a function that compares (see
// reCompareCall).
func comparisonAt(line, lower string, off int) (comparison, bool) {
	call := reCompareCall.FindStringIndex(line[off:])
	for k := off; k+1 < len(line); k++ {
		if call != nil && k == off+call[0] {
			open := off + call[1]
			args, end := line[open:], len(line)
			if i := strings.IndexByte(args, ')'); i >= 0 {
				// The first ) closes an argument's wrapper ([]byte(pw))
				// or the call; the second argument runs to the last one.
				end = open + strings.LastIndexByte(args, ')')
			}
			if comma := strings.IndexByte(line[open:end], ','); comma >= 0 {
				return comparison{left: open, op: open + comma, right: open + comma + 1, end: end, next: open}, true
			}
		}
		switch {
		case (line[k] == '=' || line[k] == '!') && line[k+1] == '=':
			e := k + 2
			if e < len(line) && line[e] == '=' {
				e++
			}
			return comparison{left: 0, op: k, right: e, end: len(line), next: e}, true
		case line[k] == '.' && strings.HasPrefix(lower[k+1:], "equals"):
			e := k + 1 + len("equals")
			if strings.HasPrefix(lower[e:], "ignorecase") {
				e += len("ignorecase")
			}
			if e < len(line) && line[e] == '(' {
				return comparison{left: 0, op: k, right: e + 1, end: len(line), next: e + 1}, true
			}
		}
	}
	return comparison{}, false
}

// unwrapCall returns s, an operand, without blanks before it and without
// a conversion wrapping it: []byte("X") as "X"), String(x) as x).
func unwrapCall(s string) string {
	s = strings.TrimLeft(s, " \t")
	i := strings.IndexByte(s, '(')
	if i <= 0 {
		return s
	}
	for _, c := range []byte(s[:i]) {
		if !isWordByte(c) && c != '.' && c != '[' && c != ']' {
			return s
		}
	}
	return s[i+1:]
}

// literalBefore returns the span of the quoted literal that ends s
// ("X", 'X' or `X`), without blanks inside; ok false for none.
func literalBefore(s string) (start, end int, ok bool) {
	if s == "" || strings.IndexByte("\"'`", s[len(s)-1]) < 0 {
		return 0, 0, false
	}
	q := s[len(s)-1]
	k := strings.LastIndexByte(s[:len(s)-1], q)
	if k < 0 || k+1 == len(s)-1 || strings.ContainsAny(s[k+1:len(s)-1], " \t") {
		return 0, 0, false
	}
	return k + 1, len(s) - 1, true
}

// literalAfter returns the span of the quoted literal that starts s,
// without blanks inside; ok false for none.
func literalAfter(s string) (start, end int, ok bool) {
	if s == "" || strings.IndexByte("\"'`", s[0]) < 0 {
		return 0, 0, false
	}
	k := strings.IndexByte(s[1:], s[0])
	if k <= 0 || strings.ContainsAny(s[1:1+k], " \t") {
		return 0, 0, false
	}
	return 1, 1 + k, true
}

// leadingOperand returns the field name that the expression starting s
// ends in: "req.body.password)" gives req.body.password, "$pwd)" pwd.
func leadingOperand(s string) string {
	s = strings.TrimLeft(s, "$@")
	e := 0
	for e < len(s) && isKeyChar(s[e]) {
		e++
	}
	return strings.Trim(s[:e], ".-")
}
