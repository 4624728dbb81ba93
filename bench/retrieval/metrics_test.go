package main

import (
	"math"
	"testing"

	"github.com/selmem/selmem/bench/retrieval/devset"
)

func TestJudgeAndMetrics(t *testing.T) {
	q := devset.Query{Relevant: []devset.Ref{
		{Path: "/memories/a.md", Heading: "2. Ann"},
		{Path: "/memories/b.md"},
	}}
	hits := []hitKey{
		{"/memories/a.md", "Session 1 › 12. Ann"}, // the same string suffix, another section
		{"/memories/a.md", "Session 1 › 2. Ann"},
		{"/memories/a.md", "Session 1 › 2. Ann"}, // found already
	}
	r := judge(q, hits, 0)
	if got, want := r.ranks, []int{2, 0}; got[0] != want[0] || got[1] != want[1] {
		t.Fatalf("ranks %v, want %v", got, want)
	}
	tests := []struct {
		name      string
		got, want float64
	}{
		{"recall@1", r.recall(1), 0},
		{"recall@5", r.recall(5), 0.5},
		{"reciprocal rank", r.rr(), 0.5},
		{"nDCG@10", r.ndcg(), (1 / math.Log2(3)) / (1 + 1/math.Log2(3))},
	}
	for _, tt := range tests {
		if math.Abs(tt.got-tt.want) > 1e-12 {
			t.Errorf("%s = %v, want %v", tt.name, tt.got, tt.want)
		}
	}
}
