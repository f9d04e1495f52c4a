package runner

import (
	"encoding/json"
	"fmt"
	"maps"
	"slices"
	"strings"

	"github.com/google/jsonschema-go/jsonschema"
)

// compileSchema compiles a tool's parameter schema.
//
// The validator is google/jsonschema-go (draft 2020-12 and draft-07), the
// one the official MCP Go SDK validates tool input with. It builds nothing
// at package initialisation, where the previous library compiled every
// draft's meta-schemas in every process: about 8 ms and 1.7 MB of each
// start-up. It does not check a schema against the meta-schema, so the
// one mistake that would otherwise pass silently, a misspelt type name, is
// checked here.
func compileSchema(params json.RawMessage) (*jsonschema.Resolved, error) {
	var s jsonschema.Schema
	if err := json.Unmarshal(params, &s); err != nil {
		return nil, err
	}
	if err := checkTypeNames(&s, "#"); err != nil {
		return nil, err
	}
	return s.Resolve(nil)
}

var jsonTypes = []string{"null", "boolean", "object", "array", "number", "integer", "string"}

// checkTypeNames reports a "type" that names no JSON type, anywhere in s.
func checkTypeNames(s *jsonschema.Schema, at string) error {
	if s == nil {
		return nil
	}
	for _, t := range append([]string{s.Type}, s.Types...) {
		if t != "" && !slices.Contains(jsonTypes, t) {
			return fmt.Errorf("%s: type %q is not one of %s", at, t, strings.Join(jsonTypes, ", "))
		}
	}
	one := func(key string, sub *jsonschema.Schema) error { return checkTypeNames(sub, at+"/"+key) }
	for key, sub := range map[string]*jsonschema.Schema{
		"items": s.Items, "additionalItems": s.AdditionalItems, "contains": s.Contains,
		"unevaluatedItems": s.UnevaluatedItems, "additionalProperties": s.AdditionalProperties,
		"propertyNames": s.PropertyNames, "unevaluatedProperties": s.UnevaluatedProperties,
		"not": s.Not, "if": s.If, "then": s.Then, "else": s.Else, "contentSchema": s.ContentSchema,
	} {
		if err := one(key, sub); err != nil {
			return err
		}
	}
	for key, list := range map[string][]*jsonschema.Schema{
		"prefixItems": s.PrefixItems, "items": s.ItemsArray, "allOf": s.AllOf, "anyOf": s.AnyOf, "oneOf": s.OneOf,
	} {
		for i, sub := range list {
			if err := one(fmt.Sprintf("%s/%d", key, i), sub); err != nil {
				return err
			}
		}
	}
	for key, m := range map[string]map[string]*jsonschema.Schema{
		"properties": s.Properties, "patternProperties": s.PatternProperties, "$defs": s.Defs,
		"definitions": s.Definitions, "dependentSchemas": s.DependentSchemas,
	} {
		for _, k := range slices.Sorted(maps.Keys(m)) {
			if err := one(key+"/"+k, m[k]); err != nil {
				return err
			}
		}
	}
	return nil
}

// validateArgs checks raw tool arguments against a compiled schema and
// returns a message a small model can act on.
func validateArgs(s *jsonschema.Resolved, args string) (json.RawMessage, string) {
	if strings.TrimSpace(args) == "" {
		args = "{}"
	}
	var v any
	if err := json.Unmarshal([]byte(args), &v); err != nil {
		return nil, fmt.Sprintf("arguments are not valid JSON: %v", err)
	}
	if err := s.Validate(v); err != nil {
		return nil, "arguments do not match the tool's schema: " + validationText(err)
	}
	return json.RawMessage(args), ""
}

// validationText shortens the validator's nested "validating X: " prefixes
// to the innermost location: "at /properties/path: type: 1 has type
// "integer", want "string"".
func validationText(err error) string {
	msg := err.Error()
	var loc string
	for {
		rest, ok := strings.CutPrefix(msg, "validating ")
		if !ok {
			break
		}
		where, after, ok := strings.Cut(rest, ": ")
		if !ok {
			break
		}
		loc, msg = where, after
	}
	if loc == "" || loc == "root" {
		return msg
	}
	return "at " + loc + ": " + msg
}
