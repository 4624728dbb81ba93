package gate

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"path"
	"strconv"
	"strings"
	"unicode/utf8"

	"gopkg.in/yaml.v3"
)

// Content checks the complete new content of the file rel (a path returned
// by [Path]) and returns the first failure, checking in this order:
//
//  1. size: more than lim.MaxFileBytes bytes (Rule "size", with the numbers);
//  2. encoding: invalid UTF-8 or a NUL byte (Rule "encoding");
//  3. secrets: credentials such as API keys, tokens, private keys and
//     literal passwords (Rule "secret");
//  4. transcripts and tool logs: speaker turns, tool-call blocks, JSON-RPC
//     logs, stack traces, shell sessions, chat logs (JSON, YAML, CSV,
//     HTML, ChatML, IRC) and bulk log lines (Rule "transcript"), in every
//     file type, also with speaker labels spelled in look-alike letters
//     (see labelView);
//  5. raw data: 100 or more rows of a table (also with a bullet or a full
//     stop on every row), JSON records one a line, or records written one
//     field a line (pretty-printed JSON, YAML list items) in a row, also
//     split over several fenced code blocks, or fenced blocks holding JSON
//     arrays of records (Rule "raw_data", see findRawData), in every file
//     type; records that make a configuration list pass (see
//     recordProfile.isConfigList);
//  6. for .md files the front matter (Rule "front_matter", see
//     [ParseFrontMatter]); for .yaml, .yml and .json files that they parse
//     (Rule "syntax"), and for .json files that no array holds 100 or more
//     records with the same fields that are not a configuration list
//     (Rule "raw_data", see recordArray).
//
// Within a rule the earliest line wins. Content does not check the path or
// extension; see [Path] and [FilePath].
func Content(rel string, content []byte, lim Limits) error {
	lim = lim.withDefaults()
	if n := int64(len(content)); n > lim.MaxFileBytes {
		return reject(RuleSize, 0,
			fmt.Sprintf("The new content is %d bytes; the limit is %d bytes per file.", n, lim.MaxFileBytes),
			"Keep memory small: split it into several files or distil it to the rules and facts worth keeping. Raw data belongs in a data source, profiled with profile_source.")
	}
	if err := checkEncoding(content); err != nil {
		return err
	}
	lower := asciiLower(content)
	if f := findSecret(string(content)); f != nil {
		return secretRejection(f)
	}
	ext := strings.ToLower(path.Ext(rel))
	if r := findTranscript(content, lower); r != nil {
		return r
	}
	if v := labelView(content); v != nil {
		// Speaker labels disguised with look-alike or fullwidth letters.
		if r := findTranscript(v, asciiLower(v)); r != nil {
			return r
		}
	}
	if r := findRawData(content); r != nil {
		return r
	}
	switch ext {
	case ".md":
		if _, _, _, err := ParseFrontMatter(content); err != nil {
			return err
		}
	case ".yaml", ".yml":
		return checkYAML(content)
	case ".json":
		return checkJSON(content)
	}
	return nil
}

// asciiLower returns a copy of b with ASCII letters lower-cased; byte
// offsets are unchanged.
func asciiLower(b []byte) []byte {
	out := make([]byte, len(b))
	for i, c := range b {
		if 'A' <= c && c <= 'Z' {
			c += 'a' - 'A'
		}
		out[i] = c
	}
	return out
}

// lineAt returns the 1-based line of byte offset off in b.
func lineAt(b []byte, off int) int {
	return bytes.Count(b[:off], []byte{'\n'}) + 1
}

const encodingHint = "Memory files are UTF-8 text: write the text itself, and keep binary files out of memory."

func checkEncoding(content []byte) error {
	if i := bytes.IndexByte(content, 0); i >= 0 {
		n := lineAt(content, i)
		return reject(RuleEncoding, n, fmt.Sprintf("Line %d contains a NUL byte.", n), encodingHint)
	}
	if utf8.Valid(content) {
		return nil
	}
	for i := 0; i < len(content); {
		r, size := utf8.DecodeRune(content[i:])
		if r == utf8.RuneError && size == 1 {
			n := lineAt(content, i)
			return reject(RuleEncoding, n, fmt.Sprintf("Line %d is not valid UTF-8.", n), encodingHint)
		}
		i += size
	}
	return nil
}

func checkYAML(content []byte) error {
	dec := yaml.NewDecoder(bytes.NewReader(content))
	for {
		var n yaml.Node
		err := dec.Decode(&n)
		if errors.Is(err, io.EOF) {
			return nil
		}
		if err != nil {
			line, why := 0, "it is not valid YAML"
			if m := reYAMLLine.FindStringSubmatch(err.Error()); m != nil {
				n, _ := strconv.Atoi(m[1])
				line, why = yamlLine(content, n), sanitizeReason(m[2])
			}
			msg := "The file does not parse as YAML: " + why + "."
			if line > 0 {
				msg = fmt.Sprintf("The file does not parse as YAML at line %d: %s.", line, why)
			}
			return reject(RuleSyntax, line, msg, "Fix the YAML and write the whole file again; indent with spaces, and quote values that contain ': ' or start with a special character.")
		}
	}
}

// yamlLine returns the line, counted at \n as everywhere in the gate, on
// which the YAML parser's line n starts: YAML also breaks lines at a lone
// \r. 0 stays 0 (no line).
func yamlLine(content []byte, n int) int {
	if n <= 0 {
		return 0
	}
	yl, off := 1, 0
	for i := 0; i < len(content) && yl < n; i++ {
		if c := content[i]; c == '\n' || c == '\r' && (i+1 == len(content) || content[i+1] != '\n') {
			yl, off = yl+1, i+1
		}
	}
	return lineAt(content, off)
}

func checkJSON(content []byte) error {
	var v any
	err := json.Unmarshal(content, &v)
	if err == nil {
		if n := recordArray(v); n > 0 {
			return reject(RuleRawData, 0, fmt.Sprintf("The content looks like raw data: a JSON array of %d records with the same fields.", n), rawDataHint)
		}
		return nil
	}
	line, why := 0, "it is not valid JSON"
	var se *json.SyntaxError
	if errors.As(err, &se) {
		line = lineAt(content, int(min(se.Offset, int64(len(content)))))
		why = sanitizeReason(se.Error())
	}
	msg := "The file does not parse as JSON: " + why + "."
	if line > 0 {
		msg = fmt.Sprintf("The file does not parse as JSON at line %d: %s.", line, why)
	}
	return reject(RuleSyntax, line, msg, "Fix the JSON and write the whole file again.")
}
