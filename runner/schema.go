package runner

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strings"

	"github.com/santhosh-tekuri/jsonschema/v6"
)

// compileSchema compiles a tool's parameter schema.
func compileSchema(name string, params json.RawMessage) (*jsonschema.Schema, error) {
	doc, err := jsonschema.UnmarshalJSON(bytes.NewReader(params))
	if err != nil {
		return nil, err
	}
	c := jsonschema.NewCompiler()
	url := "guildhall:/tools/" + name + ".json"
	if err := c.AddResource(url, doc); err != nil {
		return nil, err
	}
	return c.Compile(url)
}

// validateArgs checks raw tool arguments against a compiled schema and
// returns a message a small model can act on.
func validateArgs(s *jsonschema.Schema, args string) (json.RawMessage, string) {
	if strings.TrimSpace(args) == "" {
		args = "{}"
	}
	v, err := jsonschema.UnmarshalJSON(strings.NewReader(args))
	if err != nil {
		return nil, fmt.Sprintf("arguments are not valid JSON: %v", err)
	}
	if err := s.Validate(v); err != nil {
		msg := err.Error()
		if ve, ok := err.(*jsonschema.ValidationError); ok {
			msg = ve.Error()
		}
		return nil, "arguments do not match the tool's schema: " + msg
	}
	return json.RawMessage(args), ""
}
