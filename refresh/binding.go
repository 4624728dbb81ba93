package refresh

import (
	"bytes"
	"fmt"
	"regexp"
	"strings"
	"time"

	"github.com/robfig/cron/v3"
	"gopkg.in/yaml.v3"

	"github.com/selmem/selmem/memstore"
	"github.com/selmem/selmem/schemas"
)

// BindingName is the file, in an artifact's directory, that binds it to
// its data.
const BindingName = "binding.yaml"

// Binding is an artifact's binding.yaml: where its data comes from, the
// columns it was generated against, and the snapshot it currently shows.
type Binding struct {
	// Connector names the tool configuration the data is loaded through,
	// tools/<Connector>.yaml in the same workspace.
	Connector string `yaml:"connector"`
	// Parameters are passed to the connector: query parameters of a rest
	// connector, arguments of an mcp connector.
	Parameters map[string]string `yaml:"parameters,omitempty"`
	// Schema is the profile kept current with the data,
	// schemas/<Schema>.md; default the connector's name.
	Schema string `yaml:"schema,omitempty"`
	// Columns are the original column set: the columns, with their types,
	// the program was generated against. Every refresh must supply each
	// of them with a compatible type. Empty until the first refresh,
	// which records them.
	Columns []Column `yaml:"columns,omitempty"`
	// Snapshot is the data the artifact currently shows; nil before the
	// first refresh.
	Snapshot *SnapshotRef `yaml:"snapshot,omitempty"`
	// Schedule is an optional cron expression (five fields, or a
	// descriptor such as @daily) on which selmem serve refreshes the
	// artifact, in UTC.
	Schedule string `yaml:"schedule,omitempty"`
	// View holds settings for the artifact's view in an MCP Apps host.
	View *ViewSettings `yaml:"view,omitempty"`
}

// Column is a column of a data set and its type.
type Column struct {
	Name string `yaml:"name" json:"name"`
	Type string `yaml:"type" json:"type"`
}

// SnapshotRef names a stored snapshot and describes it.
type SnapshotRef struct {
	SHA256      string    `yaml:"sha256"`
	Rows        int64     `yaml:"rows"`
	Columns     int       `yaml:"columns"`
	RefreshedAt time.Time `yaml:"refreshed_at"`
	// Source says where the data came from (a file's base name, a
	// connection's name, a URL without credentials).
	Source string `yaml:"source"`
}

var sha256Hex = regexp.MustCompile(`^[0-9a-f]{64}$`)

// cronParser accepts standard five-field expressions and descriptors.
var cronParser = cron.NewParser(cron.Minute | cron.Hour | cron.Dom | cron.Month | cron.Dow | cron.Descriptor)

// ArtifactDir is the virtual directory of an artifact.
func ArtifactDir(workspace, artifact string) string {
	return memstore.Root + "/workspaces/" + workspace + "/artifacts/" + artifact
}

// BindingPath is the virtual path of an artifact's binding.yaml.
func BindingPath(workspace, artifact string) string {
	return ArtifactDir(workspace, artifact) + "/" + BindingName
}

// ConnectorPath is the virtual path of a workspace's tool configuration.
func ConnectorPath(workspace, connector string) string {
	return memstore.Root + "/workspaces/" + workspace + "/tools/" + connector + ".yaml"
}

// CheckArtifact checks a workspace and an artifact name given by a caller.
func CheckArtifact(workspace, artifact string) error {
	if err := schemas.CheckWorkspace(workspace); err != nil {
		return err
	}
	return checkName("artifact", artifact)
}

// checkName checks a single-element name (artifact, connector, schema).
func checkName(what, name string) error {
	if err := schemas.CheckName(name); err != nil {
		return invalid(fmt.Sprintf("%s %q is not a valid name.", what, name),
			"Use one name of letters, digits, '-', '_' or '.', e.g. weekly-sales.")
	}
	return nil
}

// ParseBinding parses and checks binding.yaml.
func ParseBinding(data []byte) (*Binding, error) {
	var b Binding
	dec := yaml.NewDecoder(bytes.NewReader(data))
	dec.KnownFields(true)
	if err := dec.Decode(&b); err != nil {
		return nil, invalid("binding.yaml is not valid: "+yamlMessage(err)+".",
			"Fields are connector, parameters, schema, columns, snapshot, schedule and view.")
	}
	if err := b.check(); err != nil {
		return nil, err
	}
	return &b, nil
}

// yamlMessage is a YAML error without the library's prefix.
func yamlMessage(err error) string {
	return strings.TrimSuffix(strings.TrimPrefix(err.Error(), "yaml: "), ".")
}

func (b *Binding) check() error {
	if b.Connector == "" {
		return invalid("binding.yaml names no connector.", "Set connector to the name of a tool configuration, tools/<name>.yaml.")
	}
	if err := checkName("connector", b.Connector); err != nil {
		return err
	}
	if b.Schema != "" {
		if err := checkName("schema", b.Schema); err != nil {
			return err
		}
	}
	seen := map[string]bool{}
	for _, c := range b.Columns {
		if c.Name == "" || seen[c.Name] {
			return invalid(fmt.Sprintf("binding.yaml: column %q is empty or repeated.", c.Name), "List each column once, with name and type.")
		}
		seen[c.Name] = true
		if !knownType(c.Type) {
			return invalid(fmt.Sprintf("binding.yaml: column %q has type %q.", c.Name, c.Type), "Types are "+strings.Join(Types, ", ")+".")
		}
	}
	if s := b.Snapshot; s != nil && !sha256Hex.MatchString(s.SHA256) {
		return invalid("binding.yaml: snapshot.sha256 is not a SHA-256 hash.", "Leave the snapshot to refresh_artifact.")
	}
	if b.View != nil && b.View.Aggregate != nil {
		if err := b.View.Aggregate.check(b.Columns); err != nil {
			return err
		}
	}
	if b.Schedule != "" {
		if _, err := cronParser.Parse(b.Schedule); err != nil {
			return invalid(fmt.Sprintf("binding.yaml: schedule %q is not a cron expression: %v.", b.Schedule, err),
				"Use five fields (minute hour day-of-month month day-of-week), e.g. \"0 6 * * 1\" for Mondays at 06:00 UTC, or @daily.")
		}
	}
	return nil
}

// SchemaName is the profile the binding keeps current.
func (b *Binding) SchemaName() string {
	if b.Schema != "" {
		return b.Schema
	}
	return b.Connector
}

// NextRun is the binding's next scheduled run after now; ok is false
// without a schedule.
func (b *Binding) NextRun(now time.Time) (time.Time, bool) {
	if b.Schedule == "" {
		return time.Time{}, false
	}
	sched, err := cronParser.Parse(b.Schedule)
	if err != nil {
		return time.Time{}, false
	}
	return sched.Next(now.UTC()), true
}

// Marshal renders binding.yaml.
func (b *Binding) Marshal() string {
	var buf bytes.Buffer
	buf.WriteString("# The data this artifact reads through its injection point; written by refresh_artifact.\n")
	enc := yaml.NewEncoder(&buf)
	enc.SetIndent(2)
	if err := enc.Encode(b); err != nil {
		panic(err) // a Binding always encodes
	}
	return buf.String()
}

// invalid is an argument error the caller can show as it is.
func invalid(msg, hint string) error {
	return &memstore.Error{Kind: memstore.ErrInvalid, Msg: "Error: " + msg, Hint: hint}
}

// notFound is a missing artifact, connector or snapshot.
func notFound(msg, hint string) error {
	return &memstore.Error{Kind: memstore.ErrNotFound, Msg: "Error: " + msg, Hint: hint}
}
