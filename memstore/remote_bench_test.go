package memstore_test

import (
	"context"
	"fmt"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"github.com/selmem/selmem/internal/gittest"
	"github.com/selmem/selmem/memstore"
	"github.com/selmem/selmem/memstore/embedder"
	"github.com/selmem/selmem/memstore/sqliteindex"
)

// BenchmarkStore_CreateRemote measures a create (embedded index, fsync
// durability) without a remote and with the push to a git http-backend on
// loopback, in the same process, and prints p50 and p99 of each.
func BenchmarkStore_CreateRemote(b *testing.B) {
	srv := gittest.NewServer(b)
	for _, tt := range []struct {
		name   string
		remote *memstore.Remote
	}{
		{"remote=none", nil},
		{"remote=http-loopback", &memstore.Remote{URL: srv.URL}},
	} {
		b.Run(tt.name, func(b *testing.B) {
			home := b.TempDir()
			idx, err := sqliteindex.Open(filepath.Join(home, "index.db"), nil)
			if err != nil {
				b.Fatal(err)
			}
			defer idx.Close()
			ctx := context.Background()
			s, err := memstore.Open(ctx, home, &memstore.Options{
				Index: idx, Embedder: embedder.NewBuiltin(), Remote: tt.remote,
			})
			if err != nil {
				b.Fatal(err)
			}
			defer s.Close(ctx)
			var lat latencies
			i := 0
			for b.Loop() {
				start := time.Now()
				if _, err := s.Create(ctx, fmt.Sprintf("/memories/workspaces/ws/notes/new-%06d.md", i), noteText(i), nil); err != nil {
					b.Fatal(err)
				}
				lat = append(lat, time.Since(start))
				i++
			}
			lat.report(b)
			sorted := slices.Clone(lat)
			slices.Sort(sorted)
			b.Logf("%s: %d writes, p50 %v, p99 %v", tt.name, len(sorted), sorted[len(sorted)/2], sorted[len(sorted)*99/100])
		})
	}
}
