package profiler

import (
	"strings"
	"testing"
)

// Synthetic test values: card numbers are the networks' published test
// numbers, IBANs the registry's examples, phones from reserved fiction
// ranges (555-01xx, Ofcom drama numbers), SSNs and NINOs invented.
var detectCases = []struct {
	in   string
	hint string // column name giving hints; "" for none
	want Class
}{
	// emails
	{"jane.doe@example.com", "", ClassEmail},
	{"J.O'Neil+news@mail.example.co.uk", "", ClassEmail},
	{"not an email @ all", "", ClassNone},
	{"user@localhost", "", ClassNone},
	{"@handle", "", ClassNone},
	// internationalised addresses: Unicode local parts and domains,
	// punycode labels
	{"jörg@bücher.de", "", ClassEmail},
	{"用户@例子.广告", "", ClassEmail},
	{"anna@münchen.example", "", ClassEmail},
	{"ivan@пример.рф", "", ClassEmail},
	{"θέμης@παράδειγμα.ελ", "", ClassEmail},
	{"राम@उदाहरण.भारत", "", ClassEmail}, // combining vowel signs
	{"info@xn--bcher-kva.de", "", ClassEmail},
	{"user@example.xn--p1ai", "", ClassEmail},
	{"meet @ 5pm", "", ClassNone},
	{"a@b", "", ClassNone},
	{"foo@bar", "", ClassNone},
	{"jörg@bücher", "", ClassNone}, // no top-level domain
	{"用户@例子", "", ClassNone},
	{"größe@m.l", "", ClassNone}, // one-letter top-level domain
	{"café@3.50", "", ClassNone},
	{"preis@5.xn--", "", ClassNone},
	{"jörg@-bücher.de", "", ClassNone},
	{"jörg@bücher-.de", "", ClassNone},
	{"a b@bücher.de", "", ClassNone},
	{"jörg@bü cher.de", "", ClassNone},
	{"jörg@bücher.d€", "", ClassNone},
	// wide stops for the domain's dots, as IDNA reads them
	{"用户@例子。广告", "", ClassEmail},
	{"用户@例子．广告", "", ClassEmail},
	{"用户@例子｡广告", "", ClassEmail},
	{"zhang@mail。example。com", "", ClassEmail},
	{"zhang＠example．com", "", ClassEmail},
	{"请联系@张三。谢谢", "", ClassEmail}, // no telling it from 用户@例子。广告: see hasGluedEmail
	{"用户@例子。", "", ClassNone},
	{"用户@例子。。广告", "", ClassNone},
	{"用户@。例子。广告", "", ClassNone},
	{"用户。例子@广告", "", ClassNone},
	{"@张三。谢谢", "", ClassNone},
	{"请联系@张三。", "", ClassNone},
	// spelled-out addresses: bracketed signs, or the words at and dot
	{"alice(at)example.com", "", ClassEmail},
	{"alice [at] example [dot] com", "", ClassEmail},
	{"alice (AT) example (DOT) com", "", ClassEmail},
	{"alice{at}example{dot}com", "", ClassEmail},
	{"alice <at> example <dot> co <dot> uk", "", ClassEmail},
	{"alice[ at ]example.com", "", ClassEmail},
	{"alice [at] example dot com", "", ClassEmail},
	{"alice@example(dot)com", "", ClassEmail},
	{"alice＠example.com", "", ClassEmail},
	{"jörg (at) bücher (dot) de", "", ClassEmail},
	{"alice at example dot com", "", ClassEmail},
	{"alice.smith AT mail DOT example DOT org", "", ClassEmail},
	{"jörg at bücher dot de", "", ClassEmail},
	{"price (at) cost", "", ClassNone},
	{"sold (at) auction", "", ClassNone},
	{"alice (at) example", "", ClassNone},
	{"(at)example.com", "", ClassNone},
	{"find us at example.com", "", ClassNone}, // a bare at takes spelled dots only
	{"alice at example.com", "", ClassNone},
	{"alice at example。com", "", ClassNone}, // a wide stop is a dot
	{"alice at mail。example dot com", "", ClassNone},
	{"visit us at example dot com", "", ClassNone}, // a pronoun is no mailbox
	{"meet at polka dot bar", "", ClassNone},       // bar: not a listed domain
	{"look at the dot in the middle", "", ClassNone},
	{"laugh at the dot com bubble", "", ClassNone},
	{"alice at example dot con", "", ClassNone},
	// phones
	{"+1 415 555 0123", "", ClassPhone},
	{"+44 20 7946 0958", "", ClassPhone},
	{"+33612345678", "", ClassPhone},
	{"(415) 555-0123", "", ClassPhone},
	{"415-555-0123", "", ClassPhone},
	{"415.555.0123", "", ClassPhone},
	{"020 7946 0958", "", ClassPhone},
	{"07700 900123", "", ClassPhone},
	{"0044 20 7946 0958", "", ClassPhone},
	{"4155550123", "phone", ClassPhone},
	{"4155550123", "", ClassNone},           // a bare number: an order id without a hint
	{"100-200-3000", "order_id", ClassNone}, // not a North American number (area starts with 1)
	{"2024-01-02", "", ClassNone},           // ISO date
	{"01/02/2024", "", ClassNone},
	{"12:30:45", "", ClassNone},
	{"978-3-16-148410-0", "", ClassNone}, // ISBN
	// national ids
	{"123-45-6789", "", ClassNationalID},
	{"123-45-6789", "ssn", ClassNationalID},
	{"123456789", "ssn", ClassNationalID},
	{"123456789", "", ClassNone},
	{"123456789", "soc_sec_no", ClassNationalID},
	{"123456789", "SocialSecNumber", ClassNationalID},
	{"123456789", "zip4", ClassNone},     // ZIP+4 without its dash
	{"021381234", "zip_code", ClassNone}, // SSN-valid, leading zero kept
	{"123456789", "order_id", ClassNone},
	{"123456789", "routing_number", ClassNone},
	{"123456789", "business_number", ClassNone},
	{"123456789", "social_sector", ClassNone},
	{"000-12-3456", "", ClassNone}, // invalid area
	{"666-12-3456", "", ClassNone},
	{"12345", "", ClassNone},      // ZIP code
	{"12345-6789", "", ClassNone}, // ZIP+4
	{"AB 12 34 56 C", "", ClassNationalID},
	{"QQ123456C", "", ClassNone}, // Q is not a valid first letter
	{"130-692-544", "", ClassNationalID},
	{"130-692-545", "", ClassNone}, // Luhn fails
	{"12345678Z", "", ClassNationalID},
	{"12345678A", "", ClassNone},
	{"X1234567L", "", ClassNationalID},
	// cards
	{"4111 1111 1111 1111", "", ClassCard},
	{"4111-1111-1111-1111", "", ClassCard},
	{"5500005555555559", "", ClassCard},
	{"378282246310005", "", ClassCard},
	{"6011111111111117", "", ClassCard},
	{"4111 1111 1111 1112", "", ClassNone}, // Luhn fails
	{"1234567812345670", "", ClassNone},    // Luhn holds, no network starts with 1
	// IBANs
	{"DE89 3704 0044 0532 0130 00", "", ClassIBAN},
	{"GB82WEST12345698765432", "", ClassIBAN},
	{"GB82WEST12345698765433", "", ClassNone},
	{"FR1420041010050500013M02606", "", ClassIBAN},
	// IPs
	{"192.168.1.10", "", ClassIP},
	{"2001:db8::1", "", ClassIP},
	{"fe80::1ff:fe23:4567:890a", "", ClassIP},
	{"1.2.3", "", ClassNone}, // version
	{"v1.2.3.4", "", ClassNone},
	{"256.1.1.1", "", ClassNone},
	// secrets
	{"npm_a1B2c3D4e5F6g7H8i9J0k1L2m3N4o5P6q7R8", "", ClassSecret},
	{"ghp_Zx9Yw8Vu7Ts6Rq5Po4Nm3Lk2Ji1Hg0Fe9Dc8", "", ClassSecret},
	{"sk-proj-Ab12Cd34Ef56Gh78Ij90Kl12", "", ClassSecret},
	{"xoxb-1234567890-abcdefghij", "", ClassSecret},
	{"AKIAIOSFODNN7EXAMPLE", "", ClassSecret},
	{"eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxMjM0NTY3ODkwIn0.dozjgNryP4J3jVmNHl0w5N_XgL0n3I9PlFUP0THsR8U", "", ClassSecret},
	{"-----BEGIN RSA PRIVATE KEY-----", "", ClassSecret},
	{"q8Zr3Lm2Xv9Tb4Nw7Kc1Yp6Hd5", "", ClassSecret},             // random base62
	{"550e8400-e29b-41d4-a716-446655440000", "", ClassNone},     // UUID
	{"da39a3ee5e6b4b0d3255bfef95601890afd80709", "", ClassNone}, // SHA-1
	{"ProductCategoryName2024", "", ClassNone},                  // identifier
	{"SKU-AB12-CD34-EF56", "", ClassNone},                       // product code
	{"report_2024_Final_v2", "", ClassNone},
	{"sk-learn", "", ClassNone},
	{"npm_install", "", ClassNone},
	// users in URLs: credentials, tokens, accounts; a git remote names no one
	{"postgres://app:s3cr3tpass@10.0.0.5:5432/prod", "", ClassSecret},
	{"https://ghp_abcdefghijklmnopqrstuvwxyz0123@github.com/acme/app", "", ClassSecret},
	{"https://git:token@github.com/acme/app.git", "", ClassSecret},
	{"ftp://alice@files.example.com", "", ClassSecret},
	{"ssh://git@github.com/acme/app.git", "", ClassNone},
	{"git@github.com:acme/app.git", "", ClassNone},
	{"https://medium.com/@acme/post-1", "", ClassNone},
	{"https://example.com/search?q=a@b", "", ClassNone},
	// names (shape; counted as a name with a hint or a first name)
	{"Maria Garcia", "", ClassName},
	{"Ludwig van Beethoven", "full_name", ClassName},
	{"O'Brien", "last_name", ClassName},
	{"Smith, John", "", ClassName},
	{"New York", "city", ClassName}, // shape only: counts with a name hint alone
	{"hello world", "", ClassNone},
	{"ACME CORP", "", ClassNone},
	{"12 High Street", "address", ClassAddress},
}

func TestDetectValue(t *testing.T) {
	for _, tc := range detectCases {
		hints, _, _ := hintsOf(tc.hint)
		got := detectValue(tc.in, hints)
		if tc.want == ClassNone {
			if bad := got & strongValue; bad != 0 {
				t.Errorf("detectValue(%q, %q) = %s, want none", tc.in, tc.hint, firstClass(bad))
			}
			continue
		}
		if !got.has(tc.want) {
			t.Errorf("detectValue(%q, %q) = %b, want %s", tc.in, tc.hint, got, tc.want)
		}
	}
}

func TestFindSensitive(t *testing.T) {
	cases := []struct {
		in   string
		want Class
	}{
		{"Customer asked for a refund, reach at jane.doe@example.com.", ClassEmail},
		{"mailto:jane.doe@example.com", ClassEmail},
		{"Call back on +44 20 7946 0958 after 5pm", ClassPhone},
		{"call (415) 555-0123", ClassPhone},
		{"paid with 4111 1111 1111 1111 exp 12/26", ClassCard},
		{"IBAN DE89 3704 0044 0532 0130 00 verified", ClassIBAN},
		{"SSN 123-45-6789 on file", ClassNationalID},
		{"token npm_a1B2c3D4e5F6g7H8i9J0k1L2m3N4o5P6q7R8 leaked", ClassSecret},
		{"Spoke with Maria Garcia about the invoice", ClassName},
		{"Spoke with Tomasz van Dijk about the invoice", ClassName},
		{"Maria Garcia called", ClassName},
		{"United Kingdom", ClassNone},
		{"Central African Republic", ClassNone},
		{"Northern Mariana Islands", ClassNone},
		{"Turks and Caicos Islands", ClassNone},
		{"Grace Period", ClassName}, // a first name: masked as a value, kept as a column name
		{"login from 10.0.0.7", ClassIP},
		{"Order 12345 shipped on 2024-01-02", ClassNone},
		{"card ending 4242 declined", ClassNone},
		{"Mark the order as paid", ClassNone},
		{"version 1.2.3 released", ClassNone},
		{"VIP", ClassNone},
		// internationalised addresses in text
		{"Kontakt: jörg@bücher.de, danke", ClassEmail},
		{"联系：用户@例子.广告，谢谢", ClassEmail},
		{"write to anna@münchen.example today", ClassEmail},
		{"Mail an <ivan@пример.рф>", ClassEmail},
		{"Preis @ 5€ pro Stück", ClassNone},
		{"meet @ 5pm at the café", ClassNone},
		{"@handle said hi", ClassNone},
		{"foo@bar is not an address", ClassNone},
		// users in URLs, and git remotes
		{"use postgres://app:s3cr3tpass@10.0.0.5:5432/prod for it", ClassSecret},
		{"clone https://ghp_abcdefghijklmnopqrstuvwxyz0123@github.com/acme/app", ClassSecret},
		{"clone git@github.com:acme/app.git then build", ClassNone},
		{"remote ssh://git@gitlab.com/acme/app.git", ClassNone},
		{"git@github.com:acme/app.git, owner jane.doe@example.com", ClassEmail},
		{"alice@build.example.com:/srv/app", ClassEmail}, // an account, masked
		{"git@github.com", ClassEmail},                   // no repository: an address
		{"联系git@例子.广告:app", ClassEmail},                  // glued text: not the account git
		// wide stops: an address, or a mention ending a sentence
		{"联系：用户@例子。广告，谢谢", ClassEmail},
		{"联系：用户＠例子。广告。谢谢", ClassEmail},
		{"联系：用户＠例子.广告，谢谢", ClassEmail},
		{"请发邮件到zhang@example。com。谢谢", ClassEmail},
		{"邮箱：zhang＠mail．example．com", ClassEmail},
		{"メール：ユーザー@例え｡テスト です", ClassEmail},
		{"请联系@张三。谢谢", ClassEmail}, // see hasGluedEmail
		{"感谢@张三。", ClassNone},
		{"请联系 @张三。谢谢", ClassNone},
		{"@张三。谢谢", ClassNone},
		{"请联系@张三，谢谢。", ClassNone},
		{"我很好。谢谢。", ClassNone},
		{"价格 @ 5元。谢谢", ClassNone},
		// glued to more text than a local part holds (64 bytes)
		{"我们的团队今天已经把所有的报告都整理好了如果有问题请直接发邮件给用户@例子.广告", ClassEmail},
		{"我们的团队今天已经把所有的报告都整理好了如果有问题请直接发邮件给用户@例子。广告", ClassEmail},
		{"我们的团队今天已经把所有的报告都整理好了如果有问题请直接发邮件给zhang@example.com谢谢", ClassEmail},
		// spelled-out addresses in text
		{"reach me: alice(at)example.com", ClassEmail},
		{"Contact alice [at] example [dot] com for access.", ClassEmail},
		{"mail (jörg (at) bücher (dot) de)", ClassEmail},
		{"write to alice at example dot com, thanks", ClassEmail},
		{"email:alice{at}example{dot}org", ClassEmail},
		// prose with at and dot
		{"We arrived at the hotel at noon.", ClassNone},
		{"Look at the dot in the middle of the map", ClassNone},
		{"He pointed at the dot it made on the page", ClassNone},
		{"Meet me at polka dot bar on Friday", ClassNone},
		{"Find us at example.com or call", ClassNone},
		{"Visit us at example dot com", ClassNone},
		{"They laughed at the dot com bubble", ClassNone},
		{"Look at this dot com startup", ClassNone},
		{"Arrive at 5 dot 30 sharp", ClassNone},
		{"Stay at home. Dot the i's and cross the t's", ClassNone},
		{"Connect the dots at the end of the page", ClassNone},
		{"She was at work on the dot of nine", ClassNone},
		{"The price (at) cost is 5.00", ClassNone},
		{"at dot com", ClassNone},
		// social security numbers without dashes, named in the text
		{"SSN 123456789", ClassNationalID},
		{"ssn: 123456789 on file", ClassNationalID},
		{"SSN#123456789", ClassNationalID},
		{"social security no. 123456789", ClassNationalID},
		{"Social Security Number: 123456789", ClassNationalID},
		{"soc. sec. # 123456789", ClassNationalID},
		{"Order 123456789 shipped", ClassNone},
		{"zip 021381234", ClassNone},
		{"tracking 123456789, SSN pending", ClassNone},
		{"SSN verified", ClassNone},
		{"SSN 000123456", ClassNone},  // invalid area
		{"SSN 1234567890", ClassNone}, // ten digits
		{"", ClassNone},
	}
	for _, tc := range cases {
		if got := findSensitive(tc.in); got != tc.want {
			t.Errorf("findSensitive(%q) = %q, want %q", tc.in, got, tc.want)
		}
	}
}

func TestEmailDomain(t *testing.T) {
	cases := map[string]string{
		"jane.doe@example.com":     "example.com",
		"用户@例子。广告":                 "例子.广告",
		"zhang@mail．example｡com":   "mail.example.com",
		"zhang＠example．com":        "example.com",
		"alice at example dot com": "example.com",
	}
	for in, want := range cases {
		if got := emailDomain(in); got != want {
			t.Errorf("emailDomain(%q) = %q, want %q", in, got, want)
		}
	}
}

func TestHintsOf(t *testing.T) {
	cases := []struct {
		col        string
		want       Class
		strongName bool
		credential bool
	}{
		{"email", ClassEmail, false, false},
		{"CustomerEmail", ClassEmail, false, false},
		{"email_address", ClassEmail, false, false},
		{"mobile_phone", ClassPhone, false, false},
		{"ssn", ClassNationalID, false, false},
		{"card_number", ClassCard, false, false},
		{"iban", ClassIBAN, false, false},
		{"ip_address", ClassIP, false, false},
		{"api_key", ClassSecret, false, true},
		{"password", ClassSecret, false, true},
		{"first_name", ClassName, true, false},
		{"customerName", ClassName, true, false},
		{"name", ClassName, false, false},
		{"street_address", ClassAddress, false, false},
		{"date_of_birth", ClassBirthDate, false, false},
		{"DOB", ClassBirthDate, false, false},
	}
	for _, tc := range cases {
		hints, strong, cred := hintsOf(tc.col)
		if !hints.has(tc.want) || strong != tc.strongName || cred != tc.credential {
			t.Errorf("hintsOf(%q) = %b, %v, %v; want %s, %v, %v", tc.col, hints, strong, cred, tc.want, tc.strongName, tc.credential)
		}
	}
	for _, col := range []string{"product_name", "zip", "description", "tokens", "city", "id", "amount"} {
		hints, _, cred := hintsOf(col)
		if hints.has(ClassName) || hints.has(ClassIP) || hints.has(ClassNationalID) || cred {
			t.Errorf("hintsOf(%q) = %b, %v; want no person, ip, id or credential hint", col, hints, cred)
		}
	}
	if hints, _, _ := hintsOf("ip_address"); hints.has(ClassAddress) {
		t.Errorf("hintsOf(ip_address) hints a street address")
	}
}

func TestCoarseShape(t *testing.T) {
	cases := map[string]string{
		"Ann-Marie Smith":       "Aa-Aa Aa",
		"123-45-6789":           "ddd-dd-dddd",
		"jane.doe@example.com":  "a.a@a.a",
		"Ærø":                   "Aa",
		strings.Repeat("1", 30): strings.Repeat("d", 24) + "…",
	}
	for in, want := range cases {
		if got := coarseShape(in); got != want {
			t.Errorf("coarseShape(%q) = %q, want %q", in, got, want)
		}
	}
}

// FuzzDetect checks that detection never panics, that what it calls a
// card passes the Luhn check, that an email's domain (kept in profiles)
// is a host name written with plain dots and a spelled-out address one
// without blanks that
// masking finds, that masking replaces exactly what is found, and that a
// shape keeps no digit or letter of the value.
func FuzzDetect(f *testing.F) {
	for _, tc := range detectCases {
		f.Add(tc.in)
	}
	for _, tc := range spelledProseCases {
		f.Add(tc.in)
	}
	f.Fuzz(func(t *testing.T, s string) {
		cs := detectValue(s, setOf(ClassPhone, ClassNationalID, ClassName))
		if cs.has(ClassCard) {
			d, _, _ := digitsOf(s, " -")
			if !luhn(d) {
				t.Fatalf("card %q fails Luhn", s)
			}
		}
		if d := emailDomain(s); cs.has(ClassEmail) && (!isDomain(d) || strings.ContainsAny(d, wideStops)) {
			t.Fatalf("email %q has domain %q", s, d)
		}
		if a, ok := spelledEmail(s); ok {
			if !isEmail(a) || strings.ContainsAny(a, " \t\r\n") {
				t.Fatalf("spelledEmail(%q) = %q", s, a)
			}
			if len(s) <= scanWindow && s == trimSpace(s) && findSensitive(s) != ClassEmail {
				t.Fatalf("findSensitive(%q) = %q, want email", s, findSensitive(s))
			}
		}
		c := findSensitive(s)
		m := maskText(s)
		if c != ClassNone && m != c.Mask() {
			t.Fatalf("maskText(%q) = %q, want %q", s, m, c.Mask())
		}
		if c == ClassNone && m != s {
			t.Fatalf("maskText(%q) changed a value with no finding", s)
		}
		if sh := coarseShape(s); strings.ContainsAny(sh, "0123456789bcefghijklmnopqrstuvwxyzBCDEFGHIJKLMNOPQRSTUVWXYZ") {
			t.Fatalf("coarseShape(%q) = %q keeps digits or letters", s, sh)
		}
		_, _, _ = hintsOf(s)
	})
}
