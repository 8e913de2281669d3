package publish

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strings"

	"github.com/ceiling-bench/ceiling/publish/schema"
	"github.com/ceiling-bench/ceiling/result"
)

// ValidationError says why a document is not a sweep result the publisher
// can read. The command line turns it into exit status 2.
type ValidationError struct {
	Name     string           // file name, or "stdin"
	Problems []schema.Problem // at least one
}

func (e *ValidationError) Error() string {
	var b strings.Builder
	fmt.Fprintf(&b, "%s: ", e.Name)
	for i, p := range e.Problems {
		if i > 0 {
			b.WriteString("; ")
		}
		if i == maxProblems {
			fmt.Fprintf(&b, "and %d more", len(e.Problems)-i)
			break
		}
		b.WriteString(p.String())
	}
	return b.String()
}

// maxProblems keeps a badly broken document from flooding the log.
const maxProblems = 10

var sweepSchema = mustCompile(schema.Sweep)

func mustCompile(doc []byte) *schema.Schema {
	s, err := schema.Compile(doc)
	if err != nil {
		panic(err) // the embedded file is tested; this is a build defect
	}
	return s
}

// Read validates data as a sweep document and decodes it. name labels the
// errors. The result is returned only when there is no problem.
func Read(data []byte, name string) (*result.Result, error) {
	fail := func(ps ...schema.Problem) error { return &ValidationError{Name: name, Problems: ps} }
	if len(bytes.TrimSpace(data)) == 0 {
		return nil, fail(schema.Problem{Msg: "empty, want a JSON sweep result"})
	}
	generic, err := schema.Decode(data)
	if err != nil {
		return nil, fail(schema.Problem{Msg: syntaxMessage(data, err)})
	}
	if rest := trailing(data); rest != "" {
		return nil, fail(schema.Problem{Msg: "unexpected data after the JSON document: " + rest})
	}
	// A wrong schema_version makes every other message misleading: say it alone.
	if obj, ok := generic.(map[string]any); ok {
		if v, ok := obj["schema_version"].(json.Number); ok && !readableVersion(v.String()) {
			return nil, fail(schema.Problem{Path: "schema_version", Msg: fmt.Sprintf("unsupported version %s (this publisher reads %d to %d)", v, result.OldestSchemaVersion, result.SchemaVersion)})
		}
	}
	if ps := sweepSchema.Validate(generic); len(ps) > 0 {
		return nil, fail(ps...)
	}
	var r result.Result
	if err := json.Unmarshal(data, &r); err != nil {
		return nil, fail(schema.Problem{Msg: err.Error()})
	}
	if ps := Check(&r); len(ps) > 0 {
		return nil, fail(ps...)
	}
	return &r, nil
}

// readableVersion reports whether a schema_version is one Read accepts.
func readableVersion(v string) bool {
	for n := result.OldestSchemaVersion; n <= result.SchemaVersion; n++ {
		if v == fmt.Sprint(n) {
			return true
		}
	}
	return false
}

func trailing(data []byte) string {
	dec := json.NewDecoder(bytes.NewReader(data))
	var skip json.RawMessage
	if dec.Decode(&skip) != nil {
		return ""
	}
	rest := bytes.TrimSpace(data[dec.InputOffset():])
	if len(rest) > 20 {
		rest = append(rest[:20:20], "..."...)
	}
	return string(rest)
}

// syntaxMessage gives the line and column of a JSON syntax error.
func syntaxMessage(data []byte, err error) string {
	var se *json.SyntaxError
	if errors.As(err, &se) {
		before := data[:min(int(se.Offset), len(data))]
		line := bytes.Count(before, []byte("\n")) + 1
		col := len(before) - bytes.LastIndexByte(before, '\n')
		return fmt.Sprintf("invalid JSON at line %d, column %d: %v", line, col, se)
	}
	if errors.Is(err, io.ErrUnexpectedEOF) {
		return "invalid JSON: the document ends early (truncated file?)"
	}
	return "invalid JSON: " + err.Error()
}
