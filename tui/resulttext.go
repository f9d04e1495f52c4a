package tui

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strings"
)

// resultText shows a tool result ({kind, data} or {kind, message,
// details}) or a tool call's arguments as text: a string as itself; an
// object's short fields as "key: value" lines and its long or multi-line
// strings (a file's content, a command's output) as blocks under their
// key, in the order the JSON has them. What is not JSON is shown as it
// is. The text is raw: the caller sanitizes it.
func resultText(raw string) string {
	raw = strings.TrimSpace(raw)
	if raw == "" {
		return ""
	}
	var top any
	if json.Unmarshal([]byte(raw), &top) != nil {
		return raw
	}
	var b strings.Builder
	if obj, ok := orderedObject([]byte(raw)); ok {
		// A tool result: the data (or the error) is what matters.
		var kind, message string
		var data, details json.RawMessage
		rest := obj[:0:0]
		for _, kv := range obj {
			switch kv.key {
			case "kind":
				_ = json.Unmarshal(kv.value, &kind)
			case "message":
				_ = json.Unmarshal(kv.value, &message)
			case "data":
				data = kv.value
			case "details":
				details = kv.value
			default:
				rest = append(rest, kv)
			}
		}
		if kind != "" && (data != nil || message != "" || details != nil) {
			if kind != "success" {
				fmt.Fprintf(&b, "%s: %s\n", kind, message)
				writeValue(&b, "", details, 0)
			} else {
				writeValue(&b, "", data, 0)
			}
			for _, kv := range rest {
				writeValue(&b, kv.key, kv.value, 0)
			}
			return strings.TrimRight(b.String(), "\n")
		}
	}
	writeValue(&b, "", json.RawMessage(raw), 0)
	return strings.TrimRight(b.String(), "\n")
}

type keyValue struct {
	key   string
	value json.RawMessage
}

// orderedObject reads a JSON object's fields in their order.
func orderedObject(raw []byte) ([]keyValue, bool) {
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	if t, err := dec.Token(); err != nil || t != json.Delim('{') {
		return nil, false
	}
	var out []keyValue
	for dec.More() {
		t, err := dec.Token()
		if err != nil {
			return nil, false
		}
		k, _ := t.(string)
		var v json.RawMessage
		if err := dec.Decode(&v); err != nil {
			return nil, false
		}
		out = append(out, keyValue{k, v})
	}
	return out, true
}

// writeValue writes one value under key (none at the top) at a depth.
func writeValue(b *strings.Builder, key string, v json.RawMessage, depth int) {
	v = bytes.TrimSpace(v)
	if len(v) == 0 || string(v) == "null" {
		return
	}
	ind := strings.Repeat("  ", depth)
	label := ""
	if key != "" {
		label = ind + key + ": "
	}
	switch v[0] {
	case '"':
		var s string
		_ = json.Unmarshal(v, &s)
		if key == "" {
			b.WriteString(s)
			b.WriteString("\n")
			return
		}
		if s == "" {
			return
		}
		if strings.Contains(s, "\n") || len(s) > 60 {
			// A block, indented under its key.
			b.WriteString(ind + key + ":\n")
			for _, l := range strings.Split(strings.TrimRight(s, "\n"), "\n") {
				b.WriteString(ind + "  " + l + "\n")
			}
			return
		}
		b.WriteString(label + s + "\n")
	case '{':
		obj, ok := orderedObject(v)
		if !ok || depth > 3 {
			b.WriteString(label + compactRaw(v) + "\n")
			return
		}
		if key != "" {
			b.WriteString(ind + key + ":\n")
			depth++
		}
		for _, kv := range obj {
			writeValue(b, kv.key, kv.value, depth)
		}
	case '[':
		var items []json.RawMessage
		if json.Unmarshal(v, &items) != nil || depth > 3 {
			b.WriteString(label + compactRaw(v) + "\n")
			return
		}
		if len(items) == 0 {
			b.WriteString(label + "(none)\n")
			return
		}
		allShort := true
		for _, it := range items {
			if it[0] == '{' || it[0] == '[' || len(it) > 60 {
				allShort = false
			}
		}
		if allShort {
			var parts []string
			for _, it := range items {
				var s string
				if json.Unmarshal(it, &s) != nil {
					s = string(it)
				}
				parts = append(parts, s)
			}
			if len(items) <= 12 {
				b.WriteString(label + strings.Join(parts, ", ") + "\n")
				return
			}
			if key != "" {
				b.WriteString(ind + key + ":\n")
			}
			for _, p := range parts {
				b.WriteString(ind + "  " + p + "\n")
			}
			return
		}
		if key != "" {
			b.WriteString(ind + key + ":\n")
		}
		for i, it := range items {
			writeValue(b, fmt.Sprintf("[%d]", i+1), it, depth+1)
		}
	default:
		b.WriteString(label + string(v) + "\n")
	}
}

func compactRaw(v json.RawMessage) string {
	var buf bytes.Buffer
	if json.Compact(&buf, v) != nil {
		return string(v)
	}
	return buf.String()
}
