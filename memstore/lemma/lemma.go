// Package lemma gives the base forms of the English inflections no
// suffix rule explains: "ran" is of "run", "bought" of "buy", "children"
// of "child". The table is generated from WordNet 3.0's exception lists
// (gen.go) and embedded in the binary; it leaves out every form that is
// a word in its own right or that the Snowball stemmer already reduces
// to its base form's stem.
//
// WordNet 3.0 Copyright 2006 by Princeton University. All rights reserved.
// The table is used under the WordNet licence, whose full text, with its
// disclaimer, is in LICENSE.WordNet beside this file.
package lemma

import (
	_ "embed"
	"strings"
	"sync"
)

//go:generate go run gen.go -wordnet /usr/share/wordnet

// table is gen.go's output: sorted lines of an inflected form and its
// base form, tab-separated.
//
//go:embed lemmas.txt
var table string

// bases maps each form of the table to its base form, built on first use.
var bases = sync.OnceValue(func() map[string]string {
	m := make(map[string]string, strings.Count(table, "\n"))
	for line := range strings.Lines(table) {
		form, base, _ := strings.Cut(strings.TrimSuffix(line, "\n"), "\t")
		m[form] = base
	}
	return m
})

// Base returns the base form of word, a lower-case English word, when
// word is an irregular inflection of it, and whether it is one.
func Base(word string) (string, bool) {
	b, ok := bases()[word]
	return b, ok
}
