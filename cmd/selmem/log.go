package main

import (
	"encoding/json"
	"fmt"
	"strings"

	"github.com/spf13/cobra"

	"github.com/selmem/selmem/memstore"
)

func (a *app) logCommand() *cobra.Command {
	var limit int
	var asJSON bool
	var author string
	cmd := &cobra.Command{
		Use:   "log [PATH]",
		Short: "List the commits that changed PATH (or all), newest first, with provenance",
		Args:  args(cobra.MaximumNArgs(1)),
		RunE: func(cmd *cobra.Command, argv []string) error {
			p := "/memories"
			if len(argv) == 1 {
				p = memPath(argv[0])
			}
			return a.withStore(cmd.Context(), func(s *openedStore) error {
				commits, err := s.History(cmd.Context(), p, &memstore.HistoryOptions{Limit: limit, Author: author})
				if err != nil {
					return err
				}
				if asJSON {
					enc := json.NewEncoder(a.stdout)
					enc.SetIndent("", "  ")
					return enc.Encode(commits)
				}
				for _, c := range commits {
					fmt.Fprintf(a.stdout, "%s %s %s %s\n", c.Hash[:12], c.Time.Format("2006-01-02 15:04:05Z"), c.Author, c.Subject)
					var tr []string
					for _, k := range []string{"Tool", "Source", "Confidence"} {
						if v, ok := c.Trailers[k]; ok {
							tr = append(tr, k+": "+v)
						}
					}
					if len(tr) > 0 {
						fmt.Fprintf(a.stdout, "    %s\n", strings.Join(tr, ", "))
					}
				}
				return nil
			})
		},
	}
	cmd.Flags().IntVar(&limit, "limit", 20, "number of commits")
	cmd.Flags().BoolVar(&asJSON, "json", false, "print JSON")
	cmd.Flags().StringVar(&author, "author", "", "only commits by this author (exact name)")
	return cmd
}
