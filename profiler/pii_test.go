package profiler

import (
	"context"
	"encoding/csv"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
)

// readCSV returns the header and records of a fixture.
func readCSV(t *testing.T, path string) ([]string, [][]string) {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	recs, err := csv.NewReader(f).ReadAll()
	if err != nil {
		t.Fatal(err)
	}
	return recs[0], recs[1:]
}

// profileOutputs is everything a profile is turned into: the markdown at
// a generous budget, the schema file, the JSON and the join sketches.
func profileOutputs(t *testing.T, tp *TableProfile) map[string]string {
	t.Helper()
	js, err := json.Marshal(tp)
	if err != nil {
		t.Fatal(err)
	}
	return map[string]string{
		"markdown": tp.Markdown(20000), "default markdown": tp.Markdown(0),
		"schema file": tp.SchemaFile("file", 20000), "json": string(js),
		"join sketches": string(tp.JoinSketchesCSV(0)),
	}
}

func stripSeps(s string) string {
	return strings.NewReplacer(" ", "", "-", "", "(", "", ")", "", ".", "").Replace(s)
}

// assertAbsent fails when any value, or its digits without separators,
// appears in any output.
func assertAbsent(t *testing.T, outs map[string]string, what string, values []string) {
	t.Helper()
	for name, out := range outs {
		bare := stripSeps(out)
		for _, v := range values {
			if v == "" {
				continue
			}
			if strings.Contains(out, v) {
				t.Errorf("%s: the %s holds the raw value %q", what, name, v)
			}
			if b := stripSeps(v); len(b) >= 9 && strings.Contains(bare, b) {
				t.Errorf("%s: the %s holds %q without separators", what, name, v)
			}
		}
	}
}

func TestProfile_SensitiveCustomers(t *testing.T) {
	path := filepath.Join("testdata", "pii", "customers.csv")
	tp := profileFile(t, path)
	header, recs := readCSV(t, path)
	want := map[string]Class{
		"name": ClassName, "email": ClassEmail, "phone": ClassPhone, "ssn": ClassNationalID,
		"card_number": ClassCard, "iban": ClassIBAN, "ip": ClassIP, "api_token": ClassSecret,
	}
	for _, c := range tp.Columns {
		cls, ok := want[c.Name]
		switch {
		case ok && (c.Sensitive == nil || c.Sensitive.Class != cls.String()):
			t.Errorf("column %s: sensitive = %+v, want class %s", c.Name, c.Sensitive, cls)
		case !ok && c.Sensitive != nil:
			t.Errorf("column %s: sensitive = %+v, want none", c.Name, c.Sensitive)
		}
		if c.Sensitive != nil && (len(c.Top) > 0 || len(c.Rare) > 0 || c.Numeric != nil || c.Join != nil) {
			t.Errorf("column %s is sensitive but keeps values: %+v", c.Name, c)
		}
	}
	outs := profileOutputs(t, tp)
	checkGolden(t, "customers-20000.md", []byte(outs["markdown"]))
	for ci, name := range header {
		var values []string
		for _, r := range recs {
			if _, ok := want[name]; ok || name == "notes" && findSensitive(r[ci]) != ClassNone {
				values = append(values, r[ci])
			}
		}
		assertAbsent(t, outs, name, values)
	}
	// the rest of the profile is intact: numbers exact, categories listed,
	// masked values merged under their mask
	md := outs["markdown"]
	for _, s := range []string{"- balance: decimal", "Germany", "Prefers email", "<email>", "domains ", "customer_id"} {
		if !strings.Contains(md, s) {
			t.Errorf("the markdown lacks %q:\n%s", s, md)
		}
	}
	if n := col(tp, "balance").Numeric; n == nil || n.Min < 0 || n.Max > 500 {
		t.Errorf("balance lost its numbers: %+v", n)
	}
	if col(tp, "customer_id").Join == nil {
		t.Errorf("customer_id lost its join sketch")
	}
}

func TestProfile_SensitiveTokensOnly(t *testing.T) {
	path := filepath.Join("testdata", "pii", "npm-tokens.csv")
	tp := profileFile(t, path)
	raw, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	tokens := strings.Fields(string(raw))
	if got, want := tp.Rows, int64(len(tokens)); got != want {
		t.Errorf("rows = %d, want %d (the first token is not a header)", got, want)
	}
	c := tp.Columns[0]
	if c.Sensitive == nil || c.Sensitive.Class != "secret" || c.Sensitive.Share != 1 {
		t.Errorf("sensitive = %+v, want secret at 100%%", c.Sensitive)
	}
	outs := profileOutputs(t, tp)
	assertAbsent(t, outs, "tokens", tokens)
	for _, tok := range tokens {
		// not even a long piece of one
		for name, out := range outs {
			if strings.Contains(out, tok[4:16]) {
				t.Errorf("the %s holds part of token %q", name, tok)
			}
		}
	}
	if md := outs["markdown"]; !strings.Contains(md, "sensitive secret 100%") || !strings.Contains(md, "npm_…") {
		t.Errorf("the markdown does not say what the column holds:\n%s", md)
	}
}

func TestProfile_SensitiveHeaderAndJSONKeys(t *testing.T) {
	// a JSON object keyed by emails makes columns named by data
	p := writeTemp(t, "keys.jsonl", `{"jane.doe@example.com": 1, "id": 2}`+"\n"+`{"jane.doe@example.com": 3, "id": 4}`+"\n")
	tp := profileFile(t, p)
	for name, out := range profileOutputs(t, tp) {
		if strings.Contains(out, "jane.doe@example.com") {
			t.Errorf("the %s holds a column name that is an email", name)
		}
	}
}

func TestProfile_SensitiveByName(t *testing.T) {
	var b strings.Builder
	b.WriteString("id,password,dob,tokens,street_address,first_name,mobile\n")
	for i := range 40 {
		b.WriteString(strings.Join([]string{
			strconv.Itoa(i), "hunter" + strconv.Itoa(i*7), "19" + strconv.Itoa(50+i%40) + "-0" + strconv.Itoa(1+i%9) + "-1" + strconv.Itoa(i%9),
			strconv.Itoa(100 + i), strconv.Itoa(i+1) + " High Street", []string{"Ann", "Bo", "Cy", "Di"}[i%4],
			strconv.Itoa(4155550100 + i),
		}, ",") + "\n")
	}
	tp := profileFile(t, writeTemp(t, "people.csv", b.String()))
	for name, want := range map[string]string{"password": "secret", "dob": "birth-date", "street_address": "address", "first_name": "name", "mobile": "phone"} {
		if s := col(tp, name).Sensitive; s == nil || s.Class != want {
			t.Errorf("%s: sensitive = %+v, want %s", name, s, want)
		}
	}
	if s := col(tp, "tokens").Sensitive; s != nil {
		t.Errorf("tokens (a count) is sensitive: %+v", s)
	}
	if d := col(tp, "dob").Dates; d == nil || d.Min != "1950" || d.Max != "1989" || d.Quantiles != nil {
		t.Errorf("dob dates = %+v, want years 1950..1989 only", d)
	}
	md := tp.Markdown(20000)
	if c := col(tp, "mobile"); c.Type != TypeInteger || c.Numeric != nil {
		t.Errorf("mobile: type %s, numeric %+v; want integer without numbers", c.Type, c.Numeric)
	}
	for _, s := range []string{"hunter", "High Street", "1950-", "41555501"} {
		if strings.Contains(md, s) {
			t.Errorf("the markdown holds %q:\n%s", s, md)
		}
	}
}

// TestProfile_NotSensitive: identifiers, codes and places that resemble
// personal data are profiled as usual.
func TestProfile_NotSensitive(t *testing.T) {
	var b strings.Builder
	b.WriteString("order_id,uuid,commit,version,zip,sku,shipped,city,product_name,tokens\n")
	cities := []string{"New York", "San Francisco", "Buenos Aires", "Cape Town"}
	products := []string{"Red Shirt", "Blue Jeans", "Green Hat"}
	for i := range 40 {
		b.WriteString(strings.Join([]string{
			strconv.Itoa(4155550100 + i),
			"550e8400-e29b-41d4-a716-4466554400" + strconv.Itoa(10+i),
			"da39a3ee5e6b4b0d3255bfef95601890afd807" + strconv.Itoa(10+i),
			"1." + strconv.Itoa(i%3) + "." + strconv.Itoa(i%7),
			strconv.Itoa(94100 + i%9),
			"SKU-AB" + strconv.Itoa(10+i) + "-CD34",
			"2024-03-" + strconv.Itoa(10+i%18),
			cities[i%len(cities)], products[i%len(products)],
			strconv.Itoa(1000 + 17*i),
		}, ",") + "\n")
	}
	tp := profileFile(t, writeTemp(t, "orders.csv", b.String()))
	for _, c := range tp.Columns {
		if c.Sensitive != nil {
			t.Errorf("column %s is sensitive: %+v", c.Name, c.Sensitive)
		}
	}
	md := tp.Markdown(20000)
	for _, s := range []string{"New York", "Red Shirt", "4155550100..4155550139", "SKU-AB10-CD34"} {
		if !strings.Contains(md, s) {
			t.Errorf("the markdown lacks %q:\n%s", s, md)
		}
	}
	if strings.Contains(md, "<") {
		t.Errorf("the markdown masks a value:\n%s", md)
	}
}

// TestProfile_MaskBeforeClip: a value is masked on what was counted, not
// on its clipped display, so a card number straddling the clip does not
// leave its first digits.
func TestProfile_MaskBeforeClip(t *testing.T) {
	long := "Please refund the order placed yesterday with card 4111 1111 1111 1111 today"
	var b strings.Builder
	b.WriteString("id,comment\n")
	for i := range 12 {
		v := []string{long, "ok", "late"}[i%3]
		b.WriteString(strconv.Itoa(i) + ",\"" + v + "\"\n")
	}
	tp := profileFile(t, writeTemp(t, "comments.csv", b.String()))
	for name, out := range profileOutputs(t, tp) {
		if strings.Contains(out, "4111") {
			t.Errorf("the %s holds part of the card number:\n%s", name, out)
		}
	}
	if md := tp.Markdown(20000); !strings.Contains(md, "<card> 4") {
		t.Errorf("the markdown does not list the masked value:\n%s", md)
	}
}

// TestProfile_JoinSketchSkipsSensitive: in a column that is not sensitive
// as a whole, the values that are personal data stay out of the join
// sketch (their hashes could be matched against guesses) and out of the
// catalog.
func TestProfile_JoinSketchSkipsSensitive(t *testing.T) {
	var b strings.Builder
	b.WriteString("contact\n")
	var emails []string
	for i := range 50 {
		v := "desk-" + strconv.Itoa(i)
		if i%5 < 2 {
			v = "person" + strconv.Itoa(i) + "@example.com"
			emails = append(emails, v)
		}
		b.WriteString(v + "\n")
	}
	tp := profileFile(t, writeTemp(t, "contacts.csv", b.String()))
	c := col(tp, "contact")
	if c.Sensitive != nil || c.Join == nil {
		t.Fatalf("contact: sensitive %+v, join %v; want a plain column with a join sketch", c.Sensitive, c.Join)
	}
	if got, want := len(c.Join.Hashes), 30; got != want {
		t.Errorf("join sketch has %d hashes, want %d (the non-email values)", got, want)
	}
	for _, e := range emails {
		h := hash64([]byte(e))
		for _, x := range c.Join.Hashes {
			if x == h {
				t.Errorf("the join sketch holds the hash of %s", e)
			}
		}
	}
	assertAbsent(t, profileOutputs(t, tp), "contact", emails)
}

// TestProfile_SensitiveSpellings: internationalised and spelled-out
// addresses and social security numbers named in free text are withheld
// or masked, while nine-digit codes and ids in columns whose names say
// nothing of national ids stay visible.
func TestProfile_SensitiveSpellings(t *testing.T) {
	idn := []string{"jörg@bücher.de", "用户@例子.广告", "anna@münchen.example", "ivan@пример.рф", "info@xn--bcher-kva.de"}
	spelled := []string{"alice(at)example.com", "bob [at] example [dot] com", "carol at example dot com", "dave{at}example{dot}com"}
	notes := []string{
		"Kontakt: jörg@bücher.de, danke", "reach me: alice(at)example.com", "write to carol at example dot com",
		"SSN 123456789 on file", "social security no. 234567890", "ok", "late delivery", "ok",
	}
	var b strings.Builder
	b.WriteString("id,who,spelled,notes,zip4,order_ref\n")
	var zips, refs []string
	for i := range 40 {
		zip := fmt.Sprintf("0%04d%04d", 2138+i, 1000+7*i) // ZIP+4 without its dash, SSN-valid
		ref := strconv.Itoa(123456789 + 1013*i)           // SSN-valid
		zips, refs = append(zips, zip), append(refs, ref)
		fmt.Fprintf(&b, "%d,%s,%q,%q,%s,%s\n", i, idn[i%len(idn)], spelled[i%len(spelled)], notes[i%len(notes)], zip, ref)
	}
	tp := profileFile(t, writeTemp(t, "spellings.csv", b.String()))
	for _, name := range []string{"who", "spelled"} {
		if s := col(tp, name).Sensitive; s == nil || s.Class != "email" {
			t.Errorf("%s: sensitive = %+v, want email", name, s)
		}
	}
	for _, name := range []string{"id", "notes", "zip4", "order_ref"} {
		if s := col(tp, name).Sensitive; s != nil {
			t.Errorf("%s: sensitive = %+v, want none", name, s)
		}
	}
	outs := profileOutputs(t, tp)
	assertAbsent(t, outs, "who", idn)
	assertAbsent(t, outs, "spelled", spelled)
	assertAbsent(t, outs, "notes", notes[:5])
	for name, out := range outs {
		for _, part := range []string{"jörg", "alice", "carol", "bob", "dave", "123456789 on", "234567890"} {
			if strings.Contains(out, part) {
				t.Errorf("the %s holds %q", name, part)
			}
		}
	}
	md := outs["markdown"]
	for _, s := range []string{"domains example.com", "<email>", "<national-id>", "late delivery",
		"- 0 | <email> | <email> | <email> | " + zips[0] + " | " + refs[0], refs[0] + ".." + refs[len(refs)-1]} {
		if !strings.Contains(md, s) {
			t.Errorf("the markdown lacks %q:\n%s", s, md)
		}
	}
}

// TestProfile_WideStopsAndSpelledProse: addresses written with wide stops
// are withheld or masked and their domains kept with plain dots, while
// prose holding a bare at and dot, and Chinese sentences ended by 。,
// stay visible.
func TestProfile_WideStopsAndSpelledProse(t *testing.T) {
	wide := []string{"zhang@example。com", "li＠example．com", "wang@example｡com", "用户@例子。广告"}
	notes := []string{"联系：用户@例子。广告，谢谢", "shop at amazon dot com", "我很好。谢谢", "alice at example dot com's inbox", "work at example dot org", "ok"}
	var b strings.Builder
	b.WriteString("id,who,notes\n")
	for i := range 40 {
		fmt.Fprintf(&b, "%d,%s,%s\n", i, wide[i%len(wide)], notes[i%len(notes)])
	}
	tp := profileFile(t, writeTemp(t, "wide.csv", b.String()))
	s := col(tp, "who").Sensitive
	if s == nil || s.Class != "email" {
		t.Fatalf("who: sensitive = %+v, want email", s)
	}
	want := []ValueCount{{Value: "example.com", Count: 30}, {Value: "例子.广告", Count: 10}}
	if diff := cmp.Diff(want, s.Domains, cmpopts.IgnoreUnexported(ValueCount{})); diff != "" {
		t.Errorf("who: domains (-want +got):\n%s", diff)
	}
	if s := col(tp, "notes").Sensitive; s != nil {
		t.Errorf("notes: sensitive = %+v, want none", s)
	}
	outs := profileOutputs(t, tp)
	assertAbsent(t, outs, "who", wide)
	assertAbsent(t, outs, "notes", []string{notes[0], notes[3], "用户", "alice"})
	md := outs["markdown"]
	for _, s := range []string{"<email>", "shop at amazon dot com", "我很好。谢谢", "work at example dot org"} {
		if !strings.Contains(md, s) {
			t.Errorf("the markdown lacks %q:\n%s", s, md)
		}
	}
}

// TestProfile_RemotesAndConnectionStrings: git remotes are shown as they
// are, neither masked nor counted as emails; connection strings with a
// password, and URLs passing a token as their user, are secrets whose
// values no output holds.
func TestProfile_RemotesAndConnectionStrings(t *testing.T) {
	var b strings.Builder
	b.WriteString("service,repo,dsn,webhook\n")
	var secrets []string
	for i := range 30 {
		pass := fmt.Sprintf("Pw%02dx9secret", i)
		token := fmt.Sprintf("ghp_%032d", i)
		secrets = append(secrets, pass, token)
		repo := fmt.Sprintf("git@github.com:acme/svc-%d.git", i)
		if i%2 == 1 {
			repo = fmt.Sprintf("ssh://git@gitlab.example.com/acme/svc-%d.git", i)
		}
		fmt.Fprintf(&b, "svc-%d,%s,postgres://app:%s@10.0.0.%d:5432/prod,https://%s@hooks.example.com/in/%d\n",
			i, repo, pass, i, token, i)
	}
	tp := profileFile(t, writeTemp(t, "services.csv", b.String()))
	want := map[string]string{"repo": "", "dsn": "secret", "webhook": "secret"}
	for _, c := range tp.Columns {
		cls, ok := want[c.Name]
		if !ok {
			continue
		}
		switch {
		case cls == "" && c.Sensitive != nil:
			t.Errorf("column %s is sensitive (%s), want not", c.Name, c.Sensitive.Class)
		case cls != "" && (c.Sensitive == nil || c.Sensitive.Class != cls):
			t.Errorf("column %s: sensitive %+v, want %s", c.Name, c.Sensitive, cls)
		}
		for _, p := range c.Patterns {
			if strings.HasPrefix(p, "email") {
				t.Errorf("column %s has the pattern %q", c.Name, p)
			}
		}
	}
	outs := profileOutputs(t, tp)
	assertAbsent(t, outs, "services", secrets)
	if md := outs["markdown"]; !strings.Contains(md, "git@github.com:acme/svc-0.git") {
		t.Errorf("the markdown lacks the git remote:\n%s", md)
	}
}

// TestProfile_CallerSecrets: values the caller's scanner (Options.Secrets)
// flags are shown nowhere (catalog, examples in warnings, sample rows,
// column names); without a scanner they are.
func TestProfile_CallerSecrets(t *testing.T) {
	var b strings.Builder
	b.WriteString("id,note,pin=4321\n")
	for i := range 12 {
		note := "shipped"
		switch i % 4 {
		case 1:
			note = fmt.Sprintf("pin=%04d", 1000+i)
		case 2:
			note = "handed over"
		}
		fmt.Fprintf(&b, "%d,%s,%d\n", i, note, i*3)
	}
	path := writeTemp(t, "notes.csv", b.String())
	flagged := []string{"pin=1001", "pin=1005", "pin=1009", "pin=4321"}
	scanner := func(v string) bool { return strings.Contains(v, "pin=") }
	tp, err := Profile(context.Background(), FileSource{Path: path}, &Options{Secrets: scanner})
	if err != nil {
		t.Fatal(err)
	}
	outs := profileOutputs(t, tp)
	assertAbsent(t, outs, "notes", flagged)
	if md := outs["markdown"]; !strings.Contains(md, "<secret> 3") || !strings.Contains(md, "shipped") {
		t.Errorf("the markdown lacks the masked count or the other values:\n%s", md)
	}
	plain := profileOutputs(t, profileFile(t, path))
	if !strings.Contains(plain["markdown"], "pin=1001") {
		t.Errorf("without a scanner the markdown lacks pin=1001:\n%s", plain["markdown"])
	}
}
