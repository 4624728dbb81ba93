//go:build ignore

// gen writes wordnet.txt, the table package thesaurus embeds, from a
// WordNet 3.0 database directory. The committed table was made from
// Debian's wordnet-base 1:3.0-37, which installs one in
// /usr/share/wordnet (`apt-get install wordnet-base`):
//
//	go run gen.go -wordnet /usr/share/wordnet
//
// A line holds a one-word lemma of two or more letters a-z, a tab, and
// the other such lemmas of the synsets of its first senses (the most
// frequent WordNet lists first), of every part of speech, that stand for
// the synset (relate), space-separated. Every such lemma has a
// line, with no related words if need be, so that a lemma is never taken
// for an inflection of another. A second tab and the lemmas of any of its
// synsets one edit from it (its other spellings) end the line. Lines are
// sorted.
package main

import (
	"bufio"
	"flag"
	"fmt"
	"io"
	"log"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
)

// senses is how many of a lemma's senses per part of speech contribute
// related words: later senses are rare, and bring mostly noise.
const senses = 3

// maxMeanings is how many senses, of every part of speech, a related
// lemma may have: a word of many meanings stands for none of them.
const maxMeanings = 6

// plain matches the lemmas kept: one word of letters, more than one.
var plain = regexp.MustCompile(`^[a-z][a-z]+$`)

func main() {
	dir := flag.String("wordnet", "/usr/share/wordnet", "WordNet 3.0 database directory")
	out := flag.String("o", "wordnet.txt", "output file")
	flag.Parse()
	type part struct {
		synsets map[int64][]string
		offsets map[string][]int64
	}
	var parts []part
	meanings := map[string]int{} // lemma → its senses, of every part of speech
	for _, pos := range []string{"noun", "verb", "adj", "adv"} {
		synsets, err := readData(filepath.Join(*dir, "data."+pos))
		if err != nil {
			log.Fatal(err)
		}
		offsets, err := readIndex(filepath.Join(*dir, "index."+pos))
		if err != nil {
			log.Fatal(err)
		}
		for l, o := range offsets {
			meanings[l] += len(o)
		}
		parts = append(parts, part{synsets, offsets})
	}
	related, spellings := map[string][]string{}, map[string][]string{}
	for _, p := range parts {
		relate(p.synsets, p.offsets, meanings, related)
		respell(p.synsets, p.offsets, spellings)
	}
	if err := write(*out, related, spellings); err != nil {
		log.Fatal(err)
	}
}

// readData returns the one-word lemmas of every synset of a data file, by
// byte offset (the synset's identifier).
func readData(path string) (map[int64][]string, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	synsets := map[int64][]string{}
	r := bufio.NewReader(f)
	for {
		line, err := r.ReadString('\n')
		if err == io.EOF {
			return synsets, nil
		}
		if err != nil {
			return nil, err
		}
		if strings.HasPrefix(line, "  ") { // the licence header
			continue
		}
		// synset_offset lex_filenum ss_type w_cnt word lex_id [word lex_id...] ...
		fields := strings.Fields(line)
		off, err := strconv.ParseInt(fields[0], 10, 64)
		if err != nil {
			return nil, fmt.Errorf("%s: %q: %w", path, fields[0], err)
		}
		n, err := strconv.ParseInt(fields[3], 16, 0)
		if err != nil || 4+2*int(n) > len(fields) {
			return nil, fmt.Errorf("%s: synset %d: bad word count %q", path, off, fields[3])
		}
		var words []string
		for i := range int(n) {
			w := strings.ToLower(fields[4+2*i])
			if j := strings.IndexByte(w, '('); j >= 0 { // adjective markers: (a), (p), (ip)
				w = w[:j]
			}
			if plain.MatchString(w) && !slices.Contains(words, w) {
				words = append(words, w)
			}
		}
		synsets[off] = words
	}
}

// readIndex returns the synsets of each one-word lemma of an index file,
// most frequent sense first.
func readIndex(path string) (map[string][]int64, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	offsets := map[string][]int64{}
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		line := sc.Text()
		if strings.HasPrefix(line, "  ") {
			continue
		}
		// lemma pos synset_cnt p_cnt [ptr_symbol...] sense_cnt tagsense_cnt synset_offset...
		fields := strings.Fields(line)
		lemma := fields[0]
		if !plain.MatchString(lemma) {
			continue
		}
		count, err := strconv.Atoi(fields[2])
		if err != nil || count > len(fields) {
			return nil, fmt.Errorf("%s: %q: bad synset count", path, lemma)
		}
		for _, field := range fields[len(fields)-count:] {
			off, err := strconv.ParseInt(field, 10, 64)
			if err != nil {
				return nil, fmt.Errorf("%s: %q: %w", path, lemma, err)
			}
			offsets[lemma] = append(offsets[lemma], off)
		}
	}
	return offsets, sc.Err()
}

// relate adds, for each lemma of one part of speech, the lemmas of its
// first senses' synsets that stand for that synset:
//   - the synset is their own first sense in this part of speech:
//     "customer" for "client" (a customer is first of all a client), not
//     "electric" for "galvanic" (electric is first of all "using
//     electricity", galvanic only in a rarer sense of both);
//   - they have at most maxMeanings senses in all: "get" means too many
//     things to stand for "receive".
//
// Every lemma gets an entry, empty if need be.
func relate(synsets map[int64][]string, offsets map[string][]int64, meanings map[string]int, related map[string][]string) {
	for lemma, offs := range offsets {
		if _, ok := related[lemma]; !ok {
			related[lemma] = nil
		}
		for _, off := range offs[:min(len(offs), senses)] {
			for _, w := range synsets[off] {
				if w != lemma && len(offsets[w]) > 0 && offsets[w][0] == off && meanings[w] <= maxMeanings &&
					!slices.Contains(related[lemma], w) {
					related[lemma] = append(related[lemma], w)
				}
			}
		}
	}
}

// respell adds, for each lemma of one part of speech, the lemmas of any of
// its synsets one edit from it (oneEdit): other spellings ("colour" for "color",
// "organise" for "organize").
func respell(synsets map[int64][]string, offsets map[string][]int64, spellings map[string][]string) {
	for lemma, offs := range offsets {
		for _, off := range offs {
			for _, w := range synsets[off] {
				if w != lemma && oneEdit(lemma, w) && !slices.Contains(spellings[lemma], w) {
					spellings[lemma] = append(spellings[lemma], w)
				}
			}
		}
	}
}

// oneEdit reports whether b is one insertion, deletion or substitution
// from a after the first letter, which both share (as in
// memstore.EditVariants).
func oneEdit(a, b string) bool {
	if len(a) > len(b) {
		a, b = b, a
	}
	if len(b)-len(a) > 1 || a == "" || a[0] != b[0] {
		return false
	}
	i := 0
	for i < len(a) && a[i] == b[i] {
		i++
	}
	if i == len(a) {
		return len(b) == len(a)+1
	}
	if len(a) == len(b) {
		return a[i+1:] == b[i+1:]
	}
	return a[i:] == b[i+1:]
}

func write(path string, related, spellings map[string][]string) error {
	f, err := os.Create(path)
	if err != nil {
		return err
	}
	lemmas := make([]string, 0, len(related))
	for l := range related {
		lemmas = append(lemmas, l)
	}
	slices.Sort(lemmas)
	w := bufio.NewWriter(f)
	for _, l := range lemmas {
		slices.Sort(spellings[l])
		fmt.Fprintf(w, "%s\t%s\t%s\n", l, strings.Join(related[l], " "), strings.Join(spellings[l], " "))
	}
	if err := w.Flush(); err != nil {
		return err
	}
	return f.Close()
}
