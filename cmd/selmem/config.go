package main

import (
	"github.com/spf13/cobra"
	"gopkg.in/yaml.v3"
)

func (a *app) configCommand() *cobra.Command {
	return &cobra.Command{
		Use:   "config",
		Short: "Print the effective configuration, secrets redacted",
		Args:  args(cobra.NoArgs),
		RunE: func(cmd *cobra.Command, _ []string) error {
			enc := yaml.NewEncoder(a.stdout)
			enc.SetIndent(2)
			if err := enc.Encode(a.cfg.Redacted()); err != nil {
				return err
			}
			return enc.Close()
		},
	}
}
