package main

import (
	"fmt"
	"os"
	"time"

	"github.com/mattn/go-isatty"
	"github.com/schollz/progressbar/v3"
	"github.com/spf13/cobra"

	"github.com/selmem/selmem/memstore"
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
			return a.withStore(cmd.Context(), func(s *openedStore) error {
				start := time.Now()
				var progress memstore.Progress
				var bar *progressbar.ProgressBar
				if f, ok := a.stderr.(*os.File); ok && isatty.IsTerminal(f.Fd()) {
					progress = func(done, total int) {
						if bar == nil {
							bar = progressbar.NewOptions(total, progressbar.OptionSetWriter(a.stderr),
								progressbar.OptionSetDescription("indexing"), progressbar.OptionShowCount(),
								progressbar.OptionClearOnFinish())
						}
						_ = bar.Set(done)
					}
				}
				files := 0
				count := func(done, total int) {
					files = total
					if progress != nil {
						progress(done, total)
					}
				}
				if err := s.Reindex(cmd.Context(), count); err != nil {
					return err
				}
				if bar != nil {
					_ = bar.Finish()
				}
				fmt.Fprintf(a.stdout, "Reindexed %d files in %s.\n", files, time.Since(start).Round(time.Millisecond))
				return nil
			})
		},
	}
	cmd.Flags().StringVar(&backend, "backend", "", "rebuild only this backend's index (default: the configured one, and its local fallback)")
	return cmd
}
