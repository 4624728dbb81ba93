package main

import (
	"fmt"
	"time"

	"github.com/spf13/cobra"
)

func (a *app) reindexCommand() *cobra.Command {
	var backend string
	cmd := &cobra.Command{
		Use:   "reindex [--backend sqlite|postgres]",
		Short: "Rebuild the search index from the memory repository",
		Args:  args(cobra.NoArgs),
		RunE: func(cmd *cobra.Command, _ []string) error {
			if backend != "" {
				a.cfg.Index.Backend = backend
				a.primaryOnly = true
				if err := a.cfg.Validate(); err != nil {
					return usageError{err}
				}
			}
			// The time printed is what the user waited for: the catch-up
			// that opening the store runs, then the rebuild.
			start := a.clock()
			return a.withStore(cmd.Context(), func(s *openedStore) error {
				b := a.newBar("reindexing", false)
				files := 0
				err := s.Reindex(cmd.Context(), func(done, total int) {
					files = total
					b.files(done, total)
				})
				b.finish()
				if err != nil {
					return err
				}
				fmt.Fprintf(a.stdout, "Reindexed %d files in %s.\n", files, a.clock().Sub(start).Round(time.Millisecond))
				return nil
			})
		},
	}
	cmd.Flags().StringVar(&backend, "backend", "", "rebuild only this backend's index (default: the configured one, and its local fallback)")
	return cmd
}
