package main

import (
	"encoding/json"
	"fmt"
	"time"

	"github.com/spf13/cobra"

	"github.com/selmem/selmem/memstore"
)

func (a *app) searchCommand() *cobra.Command {
	var req memstore.SearchRequest
	var asJSON bool
	cmd := &cobra.Command{
		Use:   "search QUERY",
		Short: "Hybrid search (full text + vectors) over the memory",
		Args:  args(cobra.ExactArgs(1)),
		RunE: func(cmd *cobra.Command, argv []string) error {
			req.Query = argv[0]
			return a.withStore(cmd.Context(), func(s *openedStore) error {
				res, err := s.Search(cmd.Context(), req)
				if err != nil {
					return err
				}
				rows := memstore.Results(res.Hits, req.Query, time.Now())
				if asJSON {
					enc := json.NewEncoder(a.stdout)
					enc.SetIndent("", "  ")
					return enc.Encode(struct {
						Hits     []memstore.Found `json:"hits"`
						Degraded string           `json:"degraded,omitempty"`
					}{rows, res.Degraded})
				}
				if res.Degraded != "" {
					fmt.Fprintln(a.stderr, res.Degraded)
				}
				fmt.Fprint(a.stdout, memstore.FormatResults(rows))
				return nil
			})
		},
	}
	f := cmd.Flags()
	f.StringVar(&req.Workspace, "workspace", "", "only this workspace")
	f.StringVar(&req.Scope, "scope", "", "only this scope: org, user, workspace, other")
	f.StringSliceVar(&req.Types, "type", nil, "only these types (task, output, tool, schema, note, ...); repeatable")
	f.IntVar(&req.Limit, "limit", 10, "number of hits")
	f.BoolVar(&req.IncludeInvalid, "include-invalid", false, "include invalidated and expired items")
	f.BoolVar(&asJSON, "json", false, "print JSON")
	return cmd
}
