//go:build ignore

// gen writes lemmas.txt, the table package lemma embeds, from the
// exception lists of a WordNet 3.0 database directory (noun.exc,
// verb.exc, adj.exc: the inflected forms no suffix rule explains, each
// with its base forms). The committed table was made from Debian's
// wordnet-base 1:3.0-37 (`apt-get install wordnet-base`):
//
//	go run gen.go -wordnet /usr/share/wordnet
//
// A line holds an inflected form and its base form, tab-separated, both
// of two or more letters a-z, sorted by form. A form is kept only when
// the Snowball stemmer, which memstore.Stem applies to every word, does
// not already give it its base form's stem, and only when it cannot be
// mistaken for another word:
//
//   - the form is not itself a WordNet lemma ("found" is a verb, "saw"
//     and "left" are nouns), but for a verb's form that is an adjective
//     only: a participle used as one ("lost", "built", "paid");
//   - all its base forms have one stem ("axes" is of "ax" and "axis");
//   - its Snowball stem is no other lemma's ("lives" stems to "live", a
//     verb, so it is left to mean "live", not "life");
//   - it is not an English stop word, which search drops anyway;
//   - its base form is not itself a form of the table.
package main

import (
	"bufio"
	"flag"
	"fmt"
	"log"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"

	"github.com/kljensen/snowball/english"
)

// plain matches the forms and lemmas kept: one word of letters, more than
// one.
var plain = regexp.MustCompile(`^[a-z][a-z]+$`)

func main() {
	dir := flag.String("wordnet", "/usr/share/wordnet", "WordNet 3.0 database directory")
	out := flag.String("o", "lemmas.txt", "output file")
	flag.Parse()
	lemmas := map[string][]string{} // every lemma: its parts of speech
	stems := map[string][]string{}
	for _, pos := range []string{"noun", "verb", "adj", "adv"} {
		err := eachLine(filepath.Join(*dir, "index."+pos), func(f []string) {
			if !plain.MatchString(f[0]) {
				return
			}
			if lemmas[f[0]] == nil {
				s := stem(f[0])
				stems[s] = append(stems[s], f[0])
			}
			lemmas[f[0]] = append(lemmas[f[0]], pos)
		})
		if err != nil {
			log.Fatal(err)
		}
	}
	base := map[string]string{}
	for _, pos := range []string{"noun", "verb", "adj"} {
		err := eachLine(filepath.Join(*dir, pos+".exc"), func(f []string) {
			form, targets := f[0], f[1:]
			if !plain.MatchString(form) || english.IsStopWord(form) {
				return
			}
			if of := lemmas[form]; of != nil && (pos != "verb" || !slices.Equal(of, []string{"adj"})) {
				return
			}
			if _, seen := base[form]; seen {
				base[form] = "" // listed under two parts of speech: ambiguous
				return
			}
			want := stem(targets[0])
			for _, t := range targets {
				if !plain.MatchString(t) || stem(t) != want {
					base[form] = ""
					return
				}
			}
			s := stem(form)
			if s == want {
				return // the stemmer already gets it right
			}
			for _, l := range stems[s] {
				if l != form && stem(l) != want && !slices.Contains(targets, l) {
					base[form] = ""
					return
				}
			}
			base[form] = targets[0]
		})
		if err != nil {
			log.Fatal(err)
		}
	}
	var lines []string
	for form, lemma := range base {
		// A base that is another form ("marchese") is too odd a word to
		// guess which is meant.
		if lemma != "" && base[lemma] == "" {
			lines = append(lines, form+"\t"+lemma+"\n")
		}
	}
	slices.Sort(lines)
	if err := os.WriteFile(*out, []byte(strings.Join(lines, "")), 0o644); err != nil {
		log.Fatal(err)
	}
	fmt.Fprintf(os.Stderr, "%d forms\n", len(lines))
}

// stem is memstore.Stem without the table this program writes.
func stem(w string) string {
	if len(w) <= 3 {
		return w
	}
	return english.Stem(w, false)
}

// eachLine calls fn with the fields of each line of a WordNet file, the
// licence header aside.
func eachLine(path string, fn func(fields []string)) error {
	f, err := os.Open(path)
	if err != nil {
		return err
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		if line := sc.Text(); !strings.HasPrefix(line, "  ") && line != "" {
			fn(strings.Fields(line))
		}
	}
	return sc.Err()
}
