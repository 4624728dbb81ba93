package main

import (
	"fmt"
	"regexp"

	"github.com/spf13/cobra"
	"gopkg.in/yaml.v3"

	"github.com/selmem/selmem/server"
)

// tokenName is what a token may be named: a key of http.auth.tokens that
// the config loader keeps as written (it lowercases keys and splits at dots).
var tokenName = regexp.MustCompile(`^[a-z0-9][a-z0-9_-]*$`)

func (a *app) tokenCommand() *cobra.Command {
	cmd := &cobra.Command{
		Use:   "token",
		Short: "Manage the static bearer tokens of the HTTP server",
		Args:  args(cobra.NoArgs),
	}
	cmd.AddCommand(a.tokenCreateCommand())
	return cmd
}

func (a *app) tokenCreateCommand() *cobra.Command {
	var user, name string
	var groups []string
	var service bool
	cmd := &cobra.Command{
		Use:   "create --user USER [--group GROUP]... [--service] [--name NAME]",
		Short: "Print a new bearer token once, and the selmem.yaml entry that keeps only its hash",
		Long: `Create a static bearer token for selmem serve --http.

The token is printed once: selmem keeps only its SHA-256, in the entry to
add under http.auth.tokens in $SELMEM_HOME/selmem.yaml (or, as JSON, in
SELMEM_HTTP_AUTH_TOKENS). Restart selmem serve to use it. A client sends it
as "Authorization: Bearer <token>" and acts as USER, a member of each GROUP
(matched by group:<name> entries of workspace ACLs and http.auth.admins).
A --service token is a program's: it cannot record content as
user_confirmed. To revoke a token, delete its entry and restart.`,
		Args: args(cobra.NoArgs),
		RunE: func(cmd *cobra.Command, _ []string) error {
			token, entry, err := server.NewStaticToken(user, groups, service)
			if err != nil {
				return usageError{fmt.Errorf("--%w", err)}
			}
			if name == "" {
				name = fmt.Sprintf("%s-%s", user, entry.SHA256[:8])
				if !tokenName.MatchString(name) {
					name = "token-" + entry.SHA256[:12]
				}
			} else if !tokenName.MatchString(name) {
				return usageError{fmt.Errorf("--name %q: use lowercase letters, digits, - and _", name)}
			}
			fmt.Fprintf(a.stdout, "%s\n\n", token)
			fmt.Fprintf(a.stdout, "# The token above is shown only now: give it to its user and keep no copy.\n")
			fmt.Fprintf(a.stdout, "# Add this to %s/selmem.yaml (merge with an existing http: section) and restart selmem serve:\n", a.cfg.Home)
			enc := yaml.NewEncoder(a.stdout)
			enc.SetIndent(2)
			if err := enc.Encode(map[string]any{"http": map[string]any{"auth": map[string]any{
				"tokens": map[string]server.StaticToken{name: entry},
			}}}); err != nil {
				return err
			}
			return enc.Close()
		},
	}
	cmd.Flags().StringVar(&user, "user", "", "the user the token acts as (commit author, users/<user>/)")
	cmd.Flags().StringArrayVar(&groups, "group", nil, "a group the user belongs to (repeatable)")
	cmd.Flags().BoolVar(&service, "service", false, "a program's token, not a person's: it cannot claim user_confirmed")
	cmd.Flags().StringVar(&name, "name", "", "the entry's name under http.auth.tokens (default USER-<hash prefix>)")
	return cmd
}
