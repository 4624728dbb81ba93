package profiler

import "testing"

// spelledProseCases are sentences whose bare at and dot read as prose or
// as an address, the hard ones in both directions: a verb, the verb be,
// an adverb, a pronoun or a noun after a determiner before at is prose;
// a name, initials, a role, a mailbox of several words or a word that
// merely looks inflected (jones, james, sterling) is a mailbox.
var spelledProseCases = []struct {
	in     string
	masked bool
}{
	// prose: the word before at is part of the sentence
	{"shop at amazon dot com", false},
	{"meet at google dot com's office", false},
	{"work at example dot org", false},
	{"I used to work at example dot com", false},
	{"She works at google dot com now", false},
	{"We met at example dot org last year", false},
	{"He shopped at amazon dot co dot uk for years", false},
	{"Shopping at amazon dot com's store is easy", false},
	{"SHOP AT AMAZON DOT COM", false},
	{"Stay at booking dot com and save", false},
	{"Eat at joes dot com", false},
	{"Sold at ebay dot com", false},
	{"Studying at example dot edu", false},
	{"Apply at careers dot example dot com", false},
	{"Donate at example dot org today", false},
	{"Listen at spotify dot com", false},
	{"Look at example dot com for details", false},
	{"Sign up at example dot com", false},
	{"Log in at example dot com to continue", false},
	{"Buy online at example dot com", false},
	{"Read more at example dot org", false},
	{"Watch live at example dot com", false},
	{"Tickets are available at example dot com", false},
	{"Prices are cheaper at example dot com", false},
	{"Our store is at example dot com", false},
	{"We will be at example dot com all week", false},
	{"he worked there at example dot com", false},
	{"Thanks to the folks at example dot com", false},
	{"our friends at example dot org say hi", false},
	{"a worker at amazon dot com said so", false},
	{"Thanks to everyone at example dot org", false},
	{"Hi, I'm at example dot com", false},
	{"We’re at example dot com this week", false},
	// addresses: the word before at is a mailbox
	{"alice at example dot com", true},
	{"j.smith at mail dot example dot co dot uk", true},
	{"bob underscore jones at gmail dot com", true},
	{"alice dot smith at example dot org", true},
	{"jörg at bücher dot de", true},
	{"mark at example dot com", true}, // a verb and a first name
	{"Will at example dot org", true}, // a verb and a name
	{"sue at example dot net", true},
	{"Jones at example dot com", true}, // not an inflection of a listed word
	{"James at example dot org", true}, // nor jam
	{"sterling at example dot co dot uk", true},
	{"shopper at example dot com", true},
	{"studio at example dot com", true},
	{"work2 at example dot com", true},
	{"shop dot owner at example dot com", true}, // a mailbox of several words
	{"info at example dot com", true},           // roles
	{"sales at example dot com", true},
	{"help at example dot com", true},
	{"contact at example dot io", true},
	{"orders at example dot com", true},
	{"jobs at google dot com", true}, // jobs@ or jobs at a company: masked
	{"alice at shop dot example dot com", true},
	{"alice at example dot com's inbox", true},
	{"email alice@example.com's owner", true},
	{"write to bob at example dot com, thanks", true},
	{"he said that bob at example dot com replied", true}, // that starts a clause here
	{"meet me: alice at example dot com", true},
	{"shop at amazon dot com or mail alice at example dot com", true},
}

func TestFindSensitive_SpelledProse(t *testing.T) {
	for _, tc := range spelledProseCases {
		want := ClassNone
		if tc.masked {
			want = ClassEmail
		}
		if got := findSensitive(tc.in); got != want {
			t.Errorf("findSensitive(%q) = %q, want %q", tc.in, got, want)
		}
	}
}

func TestIsAtWord(t *testing.T) {
	for _, w := range []string{"shop", "shops", "shopped", "shopping", "lived", "living", "studies", "studied",
		"studying", "sitting", "teaches", "arrives", "located", "based", "met", "are", "online"} {
		if !isAtWord(w) {
			t.Errorf("isAtWord(%q) = false, want true", w)
		}
	}
	// A first name or a role a mailbox is named after is never prose.
	roles := []string{"info", "sales", "help", "support", "contact", "jobs", "careers", "orders", "order",
		"bookings", "booking", "billing", "admin", "hello", "team", "office", "press", "news", "post",
		"webmaster", "postmaster", "hostmaster", "abuse", "privacy", "security", "noreply", "enquiries", "mail"}
	for name := range firstNames {
		roles = append(roles, name)
	}
	for _, w := range roles {
		if isAtWord(w) {
			t.Errorf("isAtWord(%q) = true, want false", w)
		}
	}
}
