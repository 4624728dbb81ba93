package main

import (
	"slices"

	"github.com/selmem/selmem/memstore/sqliteindex"
)

// variant is a ranking to evaluate: a change to the index's options.
type variant struct {
	name  string
	apply func(*sqliteindex.Options)
}

// variants are the rankings -variants can name; "default" is what selmem
// ships.
var variants = []variant{
	{"default", func(*sqliteindex.Options) {}},
}

func variantByName(name string) (variant, bool) {
	i := slices.IndexFunc(variants, func(v variant) bool { return v.name == name })
	if i < 0 {
		return variant{}, false
	}
	return variants[i], true
}

func variantNames() []string {
	var out []string
	for _, v := range variants {
		out = append(out, v.name)
	}
	return out
}
