package refresh

import (
	"encoding/json"
	"os"
	"path/filepath"
	"time"
)

// Outcomes of a refresh run.
const (
	OutcomeRefreshed    = "refreshed"    // new data stored and committed
	OutcomeUnchanged    = "unchanged"    // the data was the snapshot already shown
	OutcomeIncompatible = "incompatible" // the data no longer fits the artifact: regenerate it
	OutcomeFailed       = "failed"       // the data could not be loaded or stored
)

// Status is the last refresh run of an artifact, kept outside git.
type Status struct {
	Workspace string    `json:"workspace"`
	Artifact  string    `json:"artifact"`
	Trigger   string    `json:"trigger"` // tool, cli, schedule, watch
	Outcome   string    `json:"outcome"`
	Message   string    `json:"message,omitempty"`
	At        time.Time `json:"at"`
	Rows      int64     `json:"rows,omitempty"`
	Commit    string    `json:"commit,omitempty"`
	Millis    float64   `json:"millis"`
	// Break is what diverged when Outcome is incompatible.
	Break *Break `json:"break,omitempty"`
	// ProgramKey identifies the program files last linted, and Lint is
	// what the lint found then (see Refresher.Program and Lint).
	ProgramKey string   `json:"program_key,omitempty"`
	Lint       []string `json:"lint,omitempty"`
}

func (s *Snapshots) statusFile(ws, artifact string) string {
	return filepath.Join(s.dir, "status", ws, artifact+".json")
}

// SaveStatus records the last run of an artifact. The record is replaced
// whole but not flushed, as it is written before every refresh returns: a
// crash may lose it (a run that committed is in the history), never tear
// it, and a lost one only means the next run lints the program again.
func (s *Snapshots) SaveStatus(st Status) error {
	data, err := json.MarshalIndent(st, "", "  ")
	if err != nil {
		return err
	}
	return writeFile(s.statusFile(st.Workspace, st.Artifact), data, false)
}

// LastStatus is the last run of an artifact; ok is false when it never ran
// here.
func (s *Snapshots) LastStatus(ws, artifact string) (st Status, ok bool) {
	data, err := os.ReadFile(s.statusFile(ws, artifact))
	if err != nil || json.Unmarshal(data, &st) != nil {
		return Status{}, false
	}
	return st, true
}
