package pgindex

import (
	"testing"

	"github.com/selmem/selmem/memstore"
	"github.com/selmem/selmem/memstore/embedder"
	"github.com/selmem/selmem/memstore/indextest"
)

// TestIndex_Contract runs the suite every memstore.Index backend passes,
// with a fresh database per subtest.
func TestIndex_Contract(t *testing.T) {
	t.Parallel()
	dim := embedder.NewBuiltin().Dim()
	indextest.Run(t, func(t *testing.T) memstore.Index {
		ix, _ := newIndex(t, dim)
		return ix
	})
}

// TestIndex_StoreContract checks the git mirror over Postgres: external
// commits reconciled, a rebuild after an embedder (and dimension) change.
func TestIndex_StoreContract(t *testing.T) {
	t.Parallel()
	dim := embedder.NewBuiltin().Dim()
	indextest.RunStore(t, func(t *testing.T) memstore.Index {
		ix, _ := newIndex(t, dim)
		return ix
	})
}
