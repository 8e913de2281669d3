// Package schema holds the JSON Schema of the sweep document and a small
// validator for the subset of JSON Schema it uses, so that the committed
// schema file and the publisher's checks cannot drift apart: the publisher
// validates every document against this very file.
//
// Supported keywords: type (one or a list), required, properties, items,
// enum, const, minimum, minItems, minLength, pattern and local $ref
// ("#/$defs/name"). Anything else in the file is documentation. Unknown
// properties are allowed (forward compatibility); required ones are not
// optional.
package schema

import _ "embed"

// Sweep is sweep.schema.json, the document `ceiling sweep --out` writes.
//
//go:embed sweep.schema.json
var Sweep []byte
