package memstore_test

import (
	"testing"

	"github.com/selmem/selmem/memstore"
)

func TestRanking_GuessCover(t *testing.T) {
	tests := []struct {
		share float64
		words int
		want  int
	}{
		{0.75, 1, 1},
		{0.75, 2, 2},
		{0.75, 3, 2},
		{0.75, 4, 3},
		{0.75, memstore.MaxGuessWords, memstore.MaxGuessWords/2 + 1},
		{0.75, memstore.MaxGuessWords + 1, 0}, // beyond the words tracked
		{0, 3, 0},                             // guesses kept
	}
	for _, tt := range tests {
		r := memstore.Ranking{GuessShare: tt.share}
		if got := r.GuessCover(tt.words); got != tt.want {
			t.Errorf("GuessShare %v: GuessCover(%d) = %d, want %d", tt.share, tt.words, got, tt.want)
		}
	}
}
