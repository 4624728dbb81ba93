package main

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"maps"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"time"

	"github.com/go-viper/mapstructure/v2"
	"github.com/spf13/cobra"
	"github.com/spf13/viper"
	"gopkg.in/yaml.v3"

	"github.com/selmem/selmem/memstore"
	"github.com/selmem/selmem/server"
)

// app holds what every subcommand shares: streams and the loaded config.
type app struct {
	stdin          io.Reader
	stdout, stderr io.Writer
	v              *viper.Viper
	cfg            server.Config
	primaryOnly    bool // open only the configured index, without the local fallback
	// observer, when set, is given to the store openStore opens (serve's
	// metrics).
	observer memstore.Observer
	cfgErr   error // why the configuration is invalid, for selmem doctor to report
	// catchUp, when set, is told the progress of the index catch-up that
	// opening the store runs (withStore sets it; serve never does).
	catchUp memstore.Progress
	// isTerminal and now replace the terminal check of stderr and the
	// clock in tests; nil means the real ones.
	isTerminal func(io.Writer) bool
	now        func() time.Time
}

func (a *app) rootCommand() *cobra.Command {
	root := &cobra.Command{
		Use:           "selmem",
		Short:         "Shared, selective, persistent memory for AI agents",
		Version:       versionString(),
		SilenceUsage:  true,
		SilenceErrors: true,
		PersistentPreRunE: func(cmd *cobra.Command, _ []string) error {
			err := a.loadConfig(cmd)
			if err != nil && cmd.Name() == "doctor" {
				a.cfgErr = err // doctor reports it, with what to do
				return nil
			}
			return err
		},
	}
	root.SetVersionTemplate("selmem {{.Version}}\n")
	root.SetFlagErrorFunc(func(cmd *cobra.Command, err error) error {
		if strings.HasPrefix(err.Error(), "unknown shorthand flag") || strings.HasPrefix(err.Error(), "unknown flag") {
			// A text argument that starts with "-" reads as a flag.
			return usageError{fmt.Errorf("%w\nIf it is a value that starts with -, put -- before the arguments: selmem %s -- %s", err, cmd.Name(), cmd.Use[strings.IndexByte(cmd.Use+" ", ' ')+1:])}
		}
		return usageError{err}
	})
	root.PersistentFlags().String("home", "", "selmem home directory (env SELMEM_HOME; default $XDG_DATA_HOME/selmem)")
	root.PersistentFlags().String("log-level", "", "log level: debug, info, warn, error (env SELMEM_LOG_LEVEL)")
	root.PersistentFlags().String("log-format", "", "log format: text or json, one object a line (env SELMEM_LOG_FORMAT)")
	root.AddCommand(
		a.initCommand(), a.viewCommand(), a.createCommand(), a.replaceCommand(),
		a.insertCommand(), a.deleteCommand(), a.renameCommand(), a.searchCommand(),
		a.logCommand(), a.revertCommand(), a.reindexCommand(), a.configCommand(),
		a.versionCommand(), a.serveCommand(), a.healthcheckCommand(), a.statusCommand(),
		a.profileCommand(), a.refreshCommand(), a.artifactCommand(), a.workspaceCommand(),
		a.tokenCommand(), a.mcpConfigCommand(), a.doctorCommand(),
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
	known := v.AllKeys()
	if err := v.BindPFlag("home", cmd.Flags().Lookup("home")); err != nil {
		return err
	}
	if err := v.BindPFlag("log.level", cmd.Flags().Lookup("log-level")); err != nil {
		return err
	}
	if err := v.BindPFlag("log.format", cmd.Flags().Lookup("log-format")); err != nil {
		return err
	}
	// Maps set from the environment come as JSON (see jsonToMap).
	for _, k := range []string{"profile.credentials", "profile.connections", "profile.allowed_hosts", "refresh.mcp_servers", "http.auth.tokens"} {
		if err := v.BindEnv(k); err != nil {
			return err
		}
	}
	for flag, key := range map[string]string{"http": "http.addr", "insecure-no-auth": "http.insecure_no_auth"} {
		if f := cmd.Flags().Lookup(flag); f != nil {
			if err := v.BindPFlag(key, f); err != nil {
				return err
			}
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
	var md mapstructure.Metadata
	if err := v.Unmarshal(&cfg, viper.DecodeHook(mapstructure.ComposeDecodeHookFunc(
		mapstructure.StringToTimeDurationHookFunc(),
		mapstructure.StringToSliceHookFunc(","),
		jsonToMap,
	)), func(dc *mapstructure.DecoderConfig) { dc.Metadata = &md }); err != nil {
		return fmt.Errorf("config: %w", err)
	}
	if len(md.Unused) > 0 {
		return fmt.Errorf("config: %w", unknownSettings(md.Unused, known, file))
	}
	if err := cfg.Validate(); err != nil {
		return fmt.Errorf("config: %w", err)
	}
	a.v, a.cfg = v, cfg
	return nil
}

// unknownSettings names settings of the config file that selmem does not
// know (a misspelt key would otherwise be ignored silently), each with the
// closest known setting when one is near.
func unknownSettings(unused, known []string, file string) error {
	slices.Sort(unused)
	// A misspelt section (indx:) is one unused key: offer sections too.
	candidates := map[string]bool{}
	for _, k := range known {
		for i, c := range k {
			if c == '.' {
				candidates[k[:i]] = true
			}
		}
		candidates[k] = true
	}
	var msgs []string
	for _, k := range unused {
		msg := fmt.Sprintf("unknown setting %s in %s", k, file)
		best, bestDist := "", len(k)/3+2
		for _, c := range slices.Sorted(maps.Keys(candidates)) {
			if d := editDistance(k, c); d < bestDist {
				best, bestDist = c, d
			}
		}
		if best != "" {
			msg += "; did you mean " + best + "?"
		}
		msgs = append(msgs, msg)
	}
	return errors.New(strings.Join(msgs, "\n"))
}

// editDistance is the Levenshtein distance between a and b.
func editDistance(a, b string) int {
	prev := make([]int, len(b)+1)
	cur := make([]int, len(b)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(a); i++ {
		cur[0] = i
		for j := 1; j <= len(b); j++ {
			cost := 1
			if a[i-1] == b[j-1] {
				cost = 0
			}
			cur[j] = min(prev[j]+1, cur[j-1]+1, prev[j-1]+cost)
		}
		prev, cur = cur, prev
	}
	return prev[len(b)]
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
