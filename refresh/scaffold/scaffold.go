package scaffold

import (
	"bytes"
	_ "embed"
	"encoding/json"
	"errors"
	"fmt"
	"html"
	"strings"
	"text/template"
	"unicode/utf8"

	"github.com/selmem/selmem/refresh"
)

// InjectionPoint is the element every artifact's index.html holds exactly
// once (see refresh.Inject).
const InjectionPoint = refresh.InjectionPoint

// Column types of a snapshot, as written in its "columns" list.
const (
	TypeInteger   = refresh.TypeInteger
	TypeNumber    = refresh.TypeNumber
	TypeBoolean   = refresh.TypeBoolean
	TypeDate      = refresh.TypeDate
	TypeTimestamp = refresh.TypeTimestamp
	TypeText      = refresh.TypeText
)

// Column is one column of the data a dashboard is generated against.
type Column = refresh.Column

// ErrInvalid reports a title or column list a dashboard cannot be made of.
var ErrInvalid = errors.New("invalid dashboard specification")

// Error is a refused Dashboard call: Msg says what is wrong, Hint what to
// do. It wraps ErrInvalid.
type Error struct {
	Msg  string
	Hint string
}

func (e *Error) Error() string { return e.Msg + ". " + e.Hint }

// Unwrap makes errors.Is(err, ErrInvalid) true.
func (e *Error) Unwrap() error { return ErrInvalid }

// Limits on the inputs, so that a generated page stays readable.
const (
	maxTitleRunes  = 200
	maxColumnRunes = 200
)

// File names of a generated dashboard.
const (
	FileIndex = "index.html"
	FileApp   = "app.js"
	FileStyle = "style.css"
)

//go:embed template/index.html.tmpl
var indexTemplate string

//go:embed template/app.js
var appJS string

//go:embed template/style.css
var styleCSS string

var indexTmpl = template.Must(template.New(FileIndex).Parse(indexTemplate))

// config is what app.js learns from the generator: column names only.
type config struct {
	Category *string `json:"category"`
	Measure  *string `json:"measure"`
}

// Choice is the pair of columns a dashboard charts.
type Choice struct {
	Category string // the column bars are grouped by; "" when there is none
	Measure  string // the numeric column summed; "" means rows are counted
}

// Choose picks the category and the measure a dashboard over columns
// shows: the first text column (else date, timestamp, boolean) whose name
// does not look like an identifier, and the first number column (else
// integer column) whose name does not look like an identifier or a year.
// Identifier-like columns are used only when nothing else fits.
func Choose(columns []Column) Choice {
	var c Choice
	c.Category = pick(columns, []string{TypeText, TypeDate, TypeTimestamp, TypeBoolean}, false)
	c.Measure = pick(columns, []string{TypeNumber, TypeInteger}, true)
	return c
}

// pick returns the first column of the first type in types, preferring
// names that do not look like identifiers (or, for measures, years).
func pick(columns []Column, types []string, measure bool) string {
	for _, pass := range []bool{true, false} {
		for _, typ := range types {
			for _, col := range columns {
				if col.Type != typ {
					continue
				}
				if pass && (looksLikeID(col.Name) || (measure && looksLikeYear(col.Name))) {
					continue
				}
				if !pass && measure && looksLikeYear(col.Name) {
					continue // summing years is never meaningful
				}
				return col.Name
			}
		}
	}
	return ""
}

func looksLikeID(name string) bool {
	n := strings.ToLower(name)
	return n == "id" || strings.HasSuffix(n, "_id") || strings.HasSuffix(n, " id") ||
		strings.HasSuffix(n, "-id") || strings.HasSuffix(name, "Id") || strings.HasSuffix(name, "ID") ||
		n == "key" || strings.HasSuffix(n, "_key") || n == "uuid"
}

func looksLikeYear(name string) bool {
	n := strings.ToLower(name)
	return n == "year" || strings.HasSuffix(n, "_year") || n == "yr"
}

// Dashboard returns the program files of a dashboard titled title over
// data with the given columns, keyed by file name relative to the
// artifact's directory (FileIndex, FileApp, FileStyle). The program holds
// column names but no data values; it reads the snapshot at InjectionPoint
// when it loads. columns must have unique, non-empty names and known
// types; at least one column is needed.
func Dashboard(title string, columns []Column) (map[string]string, error) {
	title = strings.TrimSpace(title)
	if err := validate(title, columns); err != nil {
		return nil, err
	}
	choice := Choose(columns)
	var cfg config
	if choice.Category != "" {
		cfg.Category = &choice.Category
	}
	if choice.Measure != "" {
		cfg.Measure = &choice.Measure
	}
	cfgJSON, err := json.Marshal(cfg) // escapes <, > and &, so it is safe inside <script>
	if err != nil {
		return nil, fmt.Errorf("scaffold: encode config: %w", err)
	}
	measureLabel := choice.Measure
	if measureLabel == "" {
		measureLabel = "rows"
	}
	heading := measureLabel
	if choice.Category != "" {
		heading = measureLabel + " by " + choice.Category
	}
	var buf bytes.Buffer
	err = indexTmpl.Execute(&buf, map[string]string{
		"Title":          html.EscapeString(title),
		"MeasureLabel":   html.EscapeString(measureLabel),
		"Heading":        html.EscapeString(heading),
		"Config":         string(cfgJSON),
		"InjectionPoint": InjectionPoint,
	})
	if err != nil {
		return nil, fmt.Errorf("scaffold: render %s: %w", FileIndex, err)
	}
	return map[string]string{
		FileIndex: buf.String(),
		FileApp:   appJS,
		FileStyle: styleCSS,
	}, nil
}

func validate(title string, columns []Column) error {
	if title == "" {
		return &Error{Msg: "the title is empty", Hint: "Give the dashboard a short title."}
	}
	if utf8.RuneCountInString(title) > maxTitleRunes || !utf8.ValidString(title) {
		return &Error{Msg: fmt.Sprintf("the title is not valid UTF-8 text of at most %d characters", maxTitleRunes),
			Hint: "Give the dashboard a shorter title."}
	}
	if len(columns) == 0 {
		return &Error{Msg: "no columns were given", Hint: "Profile the source first and pass its columns."}
	}
	seen := make(map[string]bool, len(columns))
	for i, col := range columns {
		switch {
		case strings.TrimSpace(col.Name) == "":
			return &Error{Msg: fmt.Sprintf("column %d has no name", i+1), Hint: "Pass the source's column names."}
		case utf8.RuneCountInString(col.Name) > maxColumnRunes || !utf8.ValidString(col.Name):
			return &Error{Msg: fmt.Sprintf("column %d's name is not valid UTF-8 text of at most %d characters", i+1, maxColumnRunes),
				Hint: "Rename the column in the source or its query."}
		case seen[col.Name]:
			return &Error{Msg: fmt.Sprintf("column %q appears twice", col.Name), Hint: "Column names must be unique; alias one of them."}
		}
		seen[col.Name] = true
		switch col.Type {
		case TypeInteger, TypeNumber, TypeBoolean, TypeDate, TypeTimestamp, TypeText:
		default:
			return &Error{Msg: fmt.Sprintf("column %q has unknown type %q", col.Name, col.Type),
				Hint: "Use one of integer, number, boolean, date, timestamp, text."}
		}
	}
	return nil
}

// OutputContract returns the paragraph a workspace's output.md carries:
// the data-injection contract in words an agent generating an artifact
// follows.
func OutputContract() string {
	return `## Data-injection contract

Artifacts are refreshed with new data without a model call, so a generated
program must read its data only from the injection point and compute
everything it shows from it. index.html contains exactly one
` + "`" + InjectionPoint + "`" + `; when the artifact is served it is
filled with the current snapshot, ` + "`" + `{"columns":[{"name":…,"type":…}],"records":[{…}],"rows":N}` + "`" + `
(types integer, number, boolean, date, timestamp, text; missing values are
null), and the same JSON is served at the same-origin ` + "`data.json`" + `. Read it
with ` + "`JSON.parse(document.getElementById(\"selmem-data\").textContent)`" + `.
Never hardcode values from the data: no totals, counts, percentages,
dates or category names written into HTML, JavaScript or SVG, including in
titles of charts and in insight text ("EMEA leads with 41% of revenue"
must be computed, not typed). Column names and fixed labels are fine.
Load nothing from other origins (no CDN, no fetch to other hosts, no
fonts or images from the web): the page runs under a Content-Security-Policy
that blocks them, so put libraries in the artifact's own files. Use only the
columns the artifact was generated against, and when one is missing show a
message asking for regeneration instead of numbers.
In a conversation (an MCP Apps host), newer data can arrive without a
reload: the event ` + "`selmem:data`" + ` on window, whose detail is the new snapshot.
Render it in place and call ` + "`preventDefault()`" + ` on the event; a page that
does not is reloaded with the new data. For large data, read the detail by
column: ` + "`detail.column(name)`" + ` returns a column's values in row order
without building the records. When the data is beyond the view's
size cap and the binding declares an aggregate (` + "`view.aggregate`" + ` in
binding.yaml), the snapshot holds the aggregate's rows and an ` + "`aggregate`" + `
member ({group_by, measures, of_rows, groups}).
`
}
