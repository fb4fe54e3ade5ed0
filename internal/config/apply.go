package config

import (
	"fmt"
	"math"
	"reflect"
	"slices"
	"sort"
	"strconv"
	"strings"
)

// leaf is one settable key of Config: its dotted name and where the field
// sits in the struct.
type leaf struct {
	key   string
	index []int
	typ   reflect.Type
}

// schema walks Config's yaml tags and returns its settable leaves and its
// section names (the keys whose values are mappings, such as "pde" and
// "pde.ic").
func schema() (leaves map[string]leaf, sections map[string]bool) {
	leaves = map[string]leaf{}
	sections = map[string]bool{}
	var walk func(t reflect.Type, prefix string, index []int)
	walk = func(t reflect.Type, prefix string, index []int) {
		for i := 0; i < t.NumField(); i++ {
			f := t.Field(i)
			name, _, _ := strings.Cut(f.Tag.Get("yaml"), ",")
			key := prefix + name
			idx := append(slices.Clone(index), i)
			if f.Type.Kind() == reflect.Struct {
				sections[key] = true
				walk(f.Type, key+".", idx)
				continue
			}
			leaves[key] = leaf{key: key, index: idx, typ: f.Type}
		}
	}
	walk(reflect.TypeOf(Config{}), "", nil)
	return leaves, sections
}

// Keys returns every key a layer may set, sorted: "data.history",
// "model.c0", "optim.lr", "task", and so on.
func Keys() []string {
	leaves, _ := schema()
	keys := make([]string, 0, len(leaves))
	for k := range leaves {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}

// Apply sets the values of one configuration layer on c. values may be
// nested ({"optim": {"lr": 0.001}}) or flat ({"optim.lr": "0.001"}); keys
// are matched case-insensitively, as viper reports them in lower case.
// source names the layer in errors ("my.yaml", "--set", "environment").
//
// Apply stops at the first problem and returns a one-line error: an unknown
// key (with the nearest valid key), or a value that does not convert to the
// field's type. Keys are visited in sorted order, so the error is the same
// on every run. Apply does not check ranges; Validate does.
func Apply(c *Config, values map[string]any, source string) error {
	leaves, sections := schema()
	flat := map[string]any{}
	if err := flatten("", values, flat, leaves, sections, source); err != nil {
		return err
	}
	keys := make([]string, 0, len(flat))
	for k := range flat {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	root := reflect.ValueOf(c).Elem()
	for _, k := range keys {
		lf := leaves[k]
		if err := setValue(root.FieldByIndex(lf.index), flat[k]); err != nil {
			return fmt.Errorf("config: key %s in %s: got %s, want %s", k, source, show(flat[k]), err.Error())
		}
	}
	return nil
}

// flatten copies the leaves of a (possibly nested) layer into out under
// their dotted keys, rejecting unknown keys and non-mapping section values.
func flatten(prefix string, m map[string]any, out map[string]any, leaves map[string]leaf, sections map[string]bool, source string) error {
	names := make([]string, 0, len(m))
	for k := range m {
		names = append(names, k)
	}
	sort.Strings(names)
	for _, name := range names {
		v := m[name]
		key := prefix + strings.ToLower(name)
		switch {
		case sections[key]:
			if v == nil {
				continue // an empty section, e.g. "optim:" with nothing under it
			}
			sub, ok := asMap(v)
			if !ok {
				return fmt.Errorf("config: key %s in %s: got %s, want a mapping of keys", key, source, show(v))
			}
			if err := flatten(key+".", sub, out, leaves, sections, source); err != nil {
				return err
			}
		case leaves[key].key != "":
			out[key] = v
		default:
			return unknownKey(key, source, leaves, sections)
		}
	}
	return nil
}

// unknownKey returns the error for a key that Config does not have,
// suggesting the nearest key or section name.
func unknownKey(key, source string, leaves map[string]leaf, sections map[string]bool) error {
	keys := make([]string, 0, len(leaves)+len(sections))
	for k := range leaves {
		keys = append(keys, k)
	}
	for k := range sections {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	if near, ok := suggestKey(key, keys); ok {
		return fmt.Errorf("config: unknown key %q in %s; did you mean %q?", key, source, near)
	}
	return fmt.Errorf("config: unknown key %q in %s; valid top-level keys: task, dim, seed, pde.*, data.*, model.*, loss.*, spar.*, optim.*", key, source)
}

// asMap returns v as a string-keyed map if it is a mapping.
func asMap(v any) (map[string]any, bool) {
	switch m := v.(type) {
	case map[string]any:
		return m, true
	case map[any]any:
		out := make(map[string]any, len(m))
		for k, x := range m {
			out[fmt.Sprint(k)] = x
		}
		return out, true
	}
	return nil, false
}

// setValue converts raw to dst's type and stores it. On failure it returns
// an error whose text is what was wanted ("an integer").
func setValue(dst reflect.Value, raw any) error {
	switch dst.Kind() {
	case reflect.Slice:
		items, ok := listItems(raw)
		if !ok {
			return fmt.Errorf("%s", want(dst.Type()))
		}
		out := reflect.MakeSlice(dst.Type(), len(items), len(items))
		for i, it := range items {
			if err := setScalar(out.Index(i), it); err != nil {
				return fmt.Errorf("%s", want(dst.Type()))
			}
		}
		dst.Set(out)
		return nil
	default:
		return setScalar(dst, raw)
	}
}

// setScalar converts one scalar value to dst's kind and stores it.
func setScalar(dst reflect.Value, raw any) error {
	switch dst.Kind() {
	case reflect.Int, reflect.Int64:
		n, ok := toInt(raw)
		if !ok {
			return fmt.Errorf("%s", want(dst.Type()))
		}
		dst.SetInt(n)
	case reflect.Float64:
		x, ok := toFloat(raw)
		if !ok {
			return fmt.Errorf("%s", want(dst.Type()))
		}
		dst.SetFloat(x)
	case reflect.Bool:
		b, ok := toBool(raw)
		if !ok {
			return fmt.Errorf("%s", want(dst.Type()))
		}
		dst.SetBool(b)
	case reflect.String:
		s, ok := raw.(string)
		if !ok {
			return fmt.Errorf("%s", want(dst.Type()))
		}
		dst.SetString(strings.TrimSpace(s))
	default:
		// Config has only the kinds above; a new kind is a programming error.
		panic(fmt.Sprintf("config: field kind %s has no converter", dst.Kind()))
	}
	return nil
}

// want describes the values a field of type t accepts.
func want(t reflect.Type) string {
	switch t.Kind() {
	case reflect.Int, reflect.Int64:
		return "an integer"
	case reflect.Float64:
		return "a finite number"
	case reflect.Bool:
		return "true or false"
	case reflect.String:
		return "a string"
	case reflect.Slice:
		switch t.Elem().Kind() {
		case reflect.Int:
			return "a list of integers such as [64, 64] or 64,64"
		case reflect.Float64:
			return "a list of numbers such as [0.5, 1.0] or 0.5,1.0"
		case reflect.String:
			return "a list of strings such as [u] or u,v"
		}
	}
	return t.String()
}

// listItems returns the elements of a YAML list, a Go slice, or a string
// written as "a,b" or "[a, b]" (the form flags and environment variables
// take). A blank string is an empty list.
func listItems(raw any) ([]any, bool) {
	if s, ok := raw.(string); ok {
		s = strings.TrimSpace(s)
		if strings.HasPrefix(s, "[") && strings.HasSuffix(s, "]") {
			s = strings.TrimSpace(s[1 : len(s)-1])
		}
		if s == "" {
			return []any{}, true
		}
		parts := strings.Split(s, ",")
		items := make([]any, len(parts))
		for i, p := range parts {
			items[i] = strings.TrimSpace(p)
		}
		return items, true
	}
	rv := reflect.ValueOf(raw)
	if !rv.IsValid() || rv.Kind() != reflect.Slice {
		return nil, false
	}
	items := make([]any, rv.Len())
	for i := range items {
		items[i] = rv.Index(i).Interface()
	}
	return items, true
}

// toInt converts integers, integral floats (as JSON and some YAML writers
// produce) and decimal strings to int64.
func toInt(raw any) (int64, bool) {
	rv := reflect.ValueOf(raw)
	if !rv.IsValid() {
		return 0, false
	}
	switch rv.Kind() {
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		return rv.Int(), true
	case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
		u := rv.Uint()
		return int64(u), u <= math.MaxInt64
	case reflect.Float32, reflect.Float64:
		f := rv.Float()
		if f != math.Trunc(f) || math.Abs(f) > 1<<53 {
			return 0, false
		}
		return int64(f), true
	case reflect.String:
		n, err := strconv.ParseInt(strings.TrimSpace(rv.String()), 10, 64)
		return n, err == nil
	}
	return 0, false
}

// toFloat converts numbers and numeric strings to a finite float64.
func toFloat(raw any) (float64, bool) {
	rv := reflect.ValueOf(raw)
	if !rv.IsValid() {
		return 0, false
	}
	var f float64
	switch rv.Kind() {
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		f = float64(rv.Int())
	case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
		f = float64(rv.Uint())
	case reflect.Float32, reflect.Float64:
		f = rv.Float()
	case reflect.String:
		x, err := strconv.ParseFloat(strings.TrimSpace(rv.String()), 64)
		if err != nil {
			return 0, false
		}
		f = x
	default:
		return 0, false
	}
	return f, !math.IsNaN(f) && !math.IsInf(f, 0)
}

// toBool converts booleans and the strings strconv.ParseBool accepts.
func toBool(raw any) (bool, bool) {
	switch b := raw.(type) {
	case bool:
		return b, true
	case string:
		v, err := strconv.ParseBool(strings.TrimSpace(b))
		return v, err == nil
	}
	return false, false
}

// show formats a raw value for an error message: strings quoted, lists in
// brackets.
func show(v any) string {
	switch x := v.(type) {
	case nil:
		return "null"
	case string:
		return strconv.Quote(x)
	case map[string]any, map[any]any:
		return "a mapping"
	}
	rv := reflect.ValueOf(v)
	if rv.Kind() == reflect.Slice {
		parts := make([]string, rv.Len())
		for i := range parts {
			parts[i] = show(rv.Index(i).Interface())
		}
		return "[" + strings.Join(parts, ", ") + "]"
	}
	return fmt.Sprint(v)
}
