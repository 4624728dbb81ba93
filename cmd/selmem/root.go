package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"reflect"
	"strings"

	"github.com/go-viper/mapstructure/v2"
	"github.com/spf13/cobra"
	"github.com/spf13/viper"
	"gopkg.in/yaml.v3"

	"github.com/selmem/selmem/server"
)

// app holds what every subcommand shares: streams and the loaded config.
type app struct {
	stdin          io.Reader
	stdout, stderr io.Writer
	v              *viper.Viper
	cfg            server.Config
	primaryOnly    bool // open only the configured index, without the local fallback
}

func (a *app) rootCommand() *cobra.Command {
	root := &cobra.Command{
		Use:           "selmem",
		Short:         "Shared, selective, persistent memory for AI agents",
		SilenceUsage:  true,
		SilenceErrors: true,
		PersistentPreRunE: func(cmd *cobra.Command, _ []string) error {
			return a.loadConfig(cmd)
		},
	}
	root.SetFlagErrorFunc(func(_ *cobra.Command, err error) error { return usageError{err} })
	root.PersistentFlags().String("home", "", "selmem home directory (env SELMEM_HOME; default $XDG_DATA_HOME/selmem)")
	root.PersistentFlags().String("log-level", "", "log level: debug, info, warn, error (env SELMEM_LOG_LEVEL)")
	root.AddCommand(
		a.initCommand(), a.viewCommand(), a.createCommand(), a.replaceCommand(),
		a.insertCommand(), a.deleteCommand(), a.renameCommand(), a.searchCommand(),
		a.logCommand(), a.revertCommand(), a.reindexCommand(), a.configCommand(),
		a.versionCommand(), a.serveCommand(), a.healthcheckCommand(),
		a.profileCommand(), a.refreshCommand(), a.artifactCommand(),
	)
	return root
}

// loadConfig builds the effective config: defaults, then
// $SELMEM_HOME/selmem.yaml, then SELMEM_* environment variables, then flags.
func (a *app) loadConfig(cmd *cobra.Command) error {
	v := viper.New()
	v.SetEnvPrefix("SELMEM")
	v.SetEnvKeyReplacer(strings.NewReplacer(".", "_", "-", "_"))
	v.AutomaticEnv()
	defaults, err := yaml.Marshal(server.DefaultConfig())
	if err != nil {
		return err
	}
	v.SetConfigType("yaml")
	if err := v.ReadConfig(bytes.NewReader(defaults)); err != nil {
		return err
	}
	if err := v.BindPFlag("home", cmd.Flags().Lookup("home")); err != nil {
		return err
	}
	if err := v.BindPFlag("log.level", cmd.Flags().Lookup("log-level")); err != nil {
		return err
	}
	// Maps set from the environment come as JSON (see jsonToMap).
	for _, k := range []string{"profile.credentials", "profile.connections", "profile.allowed_hosts", "refresh.mcp_servers"} {
		if err := v.BindEnv(k); err != nil {
			return err
		}
	}
	if f := cmd.Flags().Lookup("http"); f != nil {
		if err := v.BindPFlag("http.addr", f); err != nil {
			return err
		}
	}
	home := v.GetString("home")
	if home == "" {
		if home, err = defaultHome(); err != nil {
			return err
		}
		v.Set("home", home)
	}
	file := filepath.Join(home, "selmem.yaml")
	if _, err := os.Stat(file); err == nil {
		v.SetConfigFile(file)
		if err := v.MergeInConfig(); err != nil {
			return fmt.Errorf("read %s: %w", file, err)
		}
	}
	var cfg server.Config
	if err := v.Unmarshal(&cfg, viper.DecodeHook(mapstructure.ComposeDecodeHookFunc(
		mapstructure.StringToTimeDurationHookFunc(),
		mapstructure.StringToSliceHookFunc(","),
		jsonToMap,
	))); err != nil {
		return fmt.Errorf("config: %w", err)
	}
	if err := cfg.Validate(); err != nil {
		return fmt.Errorf("config: %w", err)
	}
	a.v, a.cfg = v, cfg
	return nil
}

// jsonToMap decodes a string into a map as JSON: how a map setting such as
// profile.credentials is given in an environment variable
// (SELMEM_PROFILE_CREDENTIALS='{"sales": {"env": "…", "hosts": ["…"]}}').
func jsonToMap(from, to reflect.Type, data any) (any, error) {
	s, ok := data.(string)
	if from.Kind() != reflect.String || to.Kind() != reflect.Map || !ok {
		return data, nil
	}
	if strings.TrimSpace(s) == "" {
		return map[string]any{}, nil
	}
	var m map[string]any
	if err := json.Unmarshal([]byte(s), &m); err != nil {
		return nil, fmt.Errorf("not a JSON object: %w", err)
	}
	return m, nil
}

// defaultHome is $XDG_DATA_HOME/selmem, or ~/.local/share/selmem.
func defaultHome() (string, error) {
	if x := os.Getenv("XDG_DATA_HOME"); x != "" {
		return filepath.Join(x, "selmem"), nil
	}
	h, err := os.UserHomeDir()
	if err != nil {
		return "", fmt.Errorf("no home directory; set SELMEM_HOME: %w", err)
	}
	return filepath.Join(h, ".local", "share", "selmem"), nil
}

// memPath accepts /memories/... paths and, for convenience on the command
// line, paths relative to /memories.
func memPath(p string) string {
	if strings.HasPrefix(p, "/") {
		return p
	}
	return "/memories/" + p
}
