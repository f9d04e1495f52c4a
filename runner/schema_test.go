package runner

import (
	"encoding/json"
	"strings"
	"testing"
)

func TestCompileSchemaRejectsWhatAGuildAuthorGetsWrong(t *testing.T) {
	cases := []struct{ schema, want string }{
		{`{"type":"object","properties":{"path":{"type":"strin"}}}`, `#/properties/path: type "strin" is not one of`},
		{`{"type":"object","properties":{"xs":{"type":"array","items":{"type":["string","nul"]}}}}`, `#/properties/xs/items: type "nul"`},
		{`{"anyOf":[{"type":"object"},{"type":"Object"}]}`, `#/anyOf/1: type "Object"`},
		{`{"type":"object","required":"path"}`, "cannot unmarshal"},
		{`{"type":"object","properties":{"p":{"type":"string","pattern":"(["}}}`, "pattern"},
		{`[1]`, "cannot unmarshal"},
	}
	for _, c := range cases {
		_, err := compileSchema(json.RawMessage(c.schema))
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("compileSchema(%s) = %v, want an error containing %q", c.schema, err, c.want)
		}
	}
	for _, ok := range []string{
		`{"type":"object","properties":{}}`,
		`{"$schema":"http://json-schema.org/draft-07/schema#","type":"object","properties":{"a":{"$ref":"#/definitions/x"}},"definitions":{"x":{"type":"string"}}}`,
		`{"type":"object","x-guildhall-note":"unknown keywords are allowed"}`,
	} {
		if _, err := compileSchema(json.RawMessage(ok)); err != nil {
			t.Errorf("compileSchema(%s): %v", ok, err)
		}
	}
}

// The messages are read by small models: they name the field and what was
// wrong, without the validator's nesting.
func TestValidateArgsMessages(t *testing.T) {
	s, err := compileSchema(json.RawMessage(`{"type":"object","properties":{
		"path":{"type":"string"},"limit":{"type":"integer","minimum":1},"mode":{"enum":["head","tail"]}},
		"required":["path"],"additionalProperties":false}`))
	if err != nil {
		t.Fatal(err)
	}
	cases := []struct{ args, want string }{
		{`{"path":"a.go"}`, ""},
		{`{"path":"a.go","limit":3.0}`, ""},
		{``, `required: missing properties: ["path"]`},
		{`{}`, `required: missing properties: ["path"]`},
		{`{"path":7}`, `at /properties/path: type: 7 has type "integer", want "string"`},
		{`{"path":"a","limit":2.5}`, `at /properties/limit: type: 2.5 has type "number", want "integer"`},
		{`{"path":"a","limit":0}`, `at /properties/limit: minimum:`},
		{`{"path":"a","mode":"middle"}`, `at /properties/mode: enum:`},
		{`{"path":"a","force":true}`, `unexpected additional properties ["force"]`},
		{`{"path":`, `arguments are not valid JSON`},
	}
	for _, c := range cases {
		args, msg := validateArgs(s, c.args)
		if c.want == "" {
			if msg != "" || args == nil {
				t.Errorf("validateArgs(%s) = %q, want valid", c.args, msg)
			}
			continue
		}
		if !strings.Contains(msg, c.want) || strings.Contains(msg, "validating root") {
			t.Errorf("validateArgs(%s) = %q, want it to contain %q", c.args, msg, c.want)
		}
	}
}
